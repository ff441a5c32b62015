#include "harness/cli/study_cli.h"

#include <cstdio>
#include <iostream>

#include "harness/cli/cli.h"
#include "harness/run/parallel_runs.h"
#include "harness/run/write_file.h"

namespace locklab {

void AddStudyFlags(CLI::App* app, StudyFlags* f) {
  f->o.jobs = DefaultJobs();
  app->add_option("--backend", f->backends, "sim, redis, or sim,redis (one block each)")->capture_default_str();
  app->add_option("--seeds", f->o.sim_seeds, "seeds per cell on the simulator (1..N)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000))
      ->type_name("N");
  app->add_option("--redis-seeds", f->o.redis_seeds, "seeds per cell on real Redis (1..N)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000))
      ->type_name("N");
  app->add_option("--clients", f->o.clients, "clients per run")->capture_default_str()->check(CLI::Range(1, 1000));
  app->add_option("--requests", f->o.requests, "acquisitions attempted per run")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1000000}));
  app->add_option("--profile", f->o.profile,
                  "simulator cost profile: default (harness/profiles/default.json), legacy or a profile FILE")
      ->type_name("NAME|FILE")
      ->capture_default_str();
  app->add_option("--jobs", f->o.jobs, "simulator runs at the same time (default: the cores; the output is the same for any N)")
      ->type_name("N")
      ->check(CLI::Range(1, kMaxJobs));
  app->add_option("--redis-jobs", f->o.redis_jobs,
                  "real-Redis runs at the same time, each with its own redis-servers (they mostly sleep: the lock "
                  "serialises 20 ms critical sections)")
      ->capture_default_str()
      ->type_name("N")
      ->check(CLI::Range(1, 16));
  app->add_option("--redis-from", f->o.redis_from,
                  "reuse the real-Redis cells of this earlier study JSON instead of running them (same --redis-seeds, "
                  "same cells and configurations; real runs do not depend on --profile)")
      ->type_name("FILE");
  app->add_option("--out", f->o.out, "the JSON file (schema locklab.study/1)")->capture_default_str()->type_name("FILE");
  app->add_flag("--quiet", f->quiet, "no table on stdout");
  app->add_flag("--no-progress", f->no_progress, "no progress lines on stderr");
  app->footer(
      "\nEvery algorithm x the suite's fault presets (locklab suite --help lists them), seeds 1..N per cell.\n"
      "Per cell: violations and damage (lost updates + oversold) per acquisition, pooled over the seeds, with a\n"
      "95% interval that is cluster-robust over seeds (a pause makes violations in bursts: seeds are the\n"
      "independent units); acquisitions and p99 acquire latency as means with Student t intervals.\n"
      "With both backends, real Redis agrees on a rate when its pooled rate lies in the simulator's prediction\n"
      "for --redis-seeds seeds (the central 95% of the rate pooled over that many of its seeds drawn at random,\n"
      "10,000 draws); the table lists the rates outside it, those in the simulator's known gaps apart with their\n"
      "cause (harness/report/known_gaps.cc; README \"Where the simulator is known to differ\").\n"
      "notebooks/study.ipynb draws the JSON as heatmaps (make run does).\n"
      "\nExamples:\n"
      "  locklab study                                  simulator (100 seeds) and real Redis (4 seeds)\n"
      "  locklab study --backend sim --seeds 1000       the simulator alone, more seeds\n"
      "  locklab study --seeds 500 --redis-seeds 20 --profile P --redis-from results/study/study.json\n"
      "                                                 a new profile's simulator block next to the recorded real one\n"
      "Exit status: 0 every run completed (violations are findings), 1 a run did not complete or the JSON\n"
      "could not be written, 2 bad input.\n");
}

int StudyCommand(StudyFlags& f, const std::string& command) {
  Result<std::vector<std::string>> backends = ParseBackendList(f.backends);
  if (!backends.ok()) return BadInput(backends.status().message());
  f.o.backends = std::move(backends).value();
  f.o.progress = !f.no_progress;
  f.o.command = command;
  AtomicFileWriter json;  // opened now: an unwritable --out is bad input, found before any run
  if (Status s = json.Open(f.o.out); !s.ok()) return BadInput("--out: " + s.message());
  Result<StudyResult> r = RunStudy(f.o);
  if (!r.ok()) {
    BadInput(r.status().message());
    return r.status().invalid() ? kExitBadInput : kExitInternal;
  }
  if (!f.quiet) std::cout << StudyTable(*r, f.o);
  Status s = json.Append(StudyJson(*r, f.o).dump(2) + "\n");
  if (s.ok()) s = json.Commit();
  if (!s.ok()) {
    std::cout.flush();
    std::fprintf(stderr, "locklab: %s\n", OneLine(s.message()).c_str());
    return kExitInternal;
  }
  std::cout << "study: " << f.o.out << "\n";
  std::cout.flush();
  return r->all_completed ? kExitOk : kExitInternal;
}

}  // namespace locklab
