#include "harness/cli/map_cli.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "harness/cli/cli.h"
#include "harness/run/comma_list.h"
#include "harness/run/parallel_runs.h"
#include "harness/run/write_file.h"

namespace locklab {
namespace {

constexpr int kMaxXs = 100;

// "0.5,1,2" -> {0.5, 1, 2}; kInvalid on anything else.
Result<std::vector<double>> ParseXs(const std::string& text) {
  std::vector<double> xs;
  for (const std::string& item : SplitComma(text, EmptyItems::kKeep)) {
    if (xs.size() >= kMaxXs) return Status::Invalid("--x: at most " + std::to_string(kMaxXs) + " values");
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (item.empty() || end != item.c_str() + item.size() || !std::isfinite(v) || v < 0)
      return Status::Invalid("--x: '" + item + "' is not a finite number >= 0");
    xs.push_back(v);
  }
  if (xs.empty()) return Status::Invalid("--x: give X[,X...]");
  return xs;
}

}  // namespace

void AddMapFlags(CLI::App* app, MapFlags* f) {
  f->o.jobs = DefaultJobs();
  app->add_option("NAME", f->o.name, "the map (locklab map --list)");
  app->add_flag("--list", f->list, "list the maps: curves, x values, workload and theory");
  app->add_option("--backend", f->o.backend,
                  "sim, or redis: real redis-server processes started by locklab (one run at a time; give few seeds)")
      ->capture_default_str();
  app->add_option("--profile", f->o.profile,
                  "simulator cost profile: default (harness/profiles/default.json), legacy or a profile FILE");
  app->add_option("--x", f->xs, "only these magnitudes (default: the map's own)")->type_name("X[,X...]");
  app->add_option("--curve", f->o.curves, "only this curve (repeatable; labels as --list prints them)")
      ->type_name("LABEL")
      ->allow_extra_args(false);
  app->add_option("--batch", f->o.batch, "seeds added to a point at a time (default: the map's own, --list)")
      ->type_name("N")
      ->check(CLI::Range(1, 10'000));
  app->add_option("--max-seeds", f->o.max_seeds, "cap on the seeds of one point (default: the map's own, --list)")
      ->type_name("N")
      ->check(CLI::Range(1, 100'000));
  app->add_option("--requests", f->o.requests,
                  "acquisitions attempted per run, for every point (default: the map's own; smaller runs for real Redis)")
      ->type_name("N")
      ->check(CLI::Range(int64_t{1}, int64_t{10'000'000}));
  app->add_option("--precision", f->o.precision,
                  "stop a point when its interval's upper half-width is at most this fraction of the estimate")
      ->capture_default_str()
      ->type_name("F");
  app->add_option("--floor", f->o.floor, "... or when its upper bound is below this rate")
      ->capture_default_str()
      ->type_name("RATE");
  app->add_option("--jobs", f->o.jobs, "simulator runs at the same time (default: the cores; the JSON is the same for any N)")
      ->type_name("N")
      ->check(CLI::Range(1, kMaxJobs));
  app->add_option("--out", f->o.out, "the JSON file (default results/maps/NAME.json, or NAME-redis.json)")
      ->type_name("FILE");
  app->add_flag("--quiet", f->quiet, "no table on stdout");
  app->add_flag("--no-progress", f->no_progress, "no progress lines on stderr");
  std::string names;
  for (const MapDef& m : Maps()) names += "  " + m.name + std::string(m.name.size() < 16 ? 16 - m.name.size() : 1, ' ') + m.title + "\n";
  app->footer(
      "\nMaps (locklab map --list prints their curves, x values, workloads and the theory each shows):\n" + names +
      "\nEvery point (x, curve) runs seeds 1, 2, ... in batches of --batch until its 95% interval is precise (its\n"
      "wider half <= --precision x the estimate), or lies below --floor (a zero estimate: the Wilson bound of 0 in all\n"
      "acquisitions; per acquisition only after 40 seeds, since violations come in bursts within a seed), or\n"
      "--max-seeds is reached. Rates are per acquisition (cluster-robust over seeds) or, for maps\n"
      "with one planned fault per run, per fault (runs with an event / runs, Wilson). The JSON (schema locklab.map/1)\n"
      "records every point with the replay command of its seed 1; notebooks/maps.ipynb draws it (make maps).\n"
      "\nExamples:\n"
      "  locklab map pause-ttl                               the whole map into results/maps/pause-ttl.json\n"
      "  locklab map pause-ttl --curve token --x 0.5,1.5     two points of one curve\n"
      "  locklab map pause-ttl --backend redis --curve token --x 0.5,1.5 --max-seeds 3 --batch 3 --requests 500\n"
      "Exit status: 0 every run completed (violations are findings), 1 a run did not complete or the JSON could\n"
      "not be written, 2 bad input.\n");
}

MapCli::MapCli(CLI::App& app) {
  sub_ = app.add_subcommand(
      "map", "a violation-probability map: one fault's magnitude x several locks, seeds added until the interval is narrow");
  AddMapFlags(sub_, &flags_);
}

int MapCommand(MapFlags& f, const std::string& command) {
  if (f.list) {
    std::fputs(MapListText().c_str(), stdout);
    return kExitOk;
  }
  if (f.o.name.empty()) return BadInput("map: give a map NAME (locklab map --list)");
  if (!f.xs.empty()) {
    Result<std::vector<double>> xs = ParseXs(f.xs);
    if (!xs.ok()) return BadInput(xs.status().message());
    f.o.xs = *xs;
  }
  if (FindMap(f.o.name) == nullptr) {
    Result<MapResult> r = RunMap(f.o);  // names the maps
    return BadInput(r.status().message());
  }
  if (f.o.out.empty()) f.o.out = "results/maps/" + f.o.name + (f.o.backend == "sim" ? "" : "-" + f.o.backend) + ".json";
  f.o.progress = !f.no_progress;
  f.o.command = command;
  AtomicFileWriter json;  // opened now: an unwritable --out is bad input, found before any run
  if (Status s = json.Open(f.o.out); !s.ok()) return BadInput("--out: " + s.message());
  Result<MapResult> r = RunMap(f.o);
  if (!r.ok()) {
    BadInput(r.status().message());
    return r.status().invalid() ? kExitBadInput : kExitInternal;
  }
  if (!f.quiet) std::cout << MapTable(*r);
  Status s = json.Append(MapJson(*r, f.o).dump(2) + "\n");
  if (s.ok()) s = json.Commit();
  if (!s.ok()) {
    std::cout.flush();
    std::fprintf(stderr, "locklab: %s\n", OneLine(s.message()).c_str());
    return kExitInternal;
  }
  std::cout << "map: " << f.o.out << "\n";
  std::cout.flush();
  return r->all_completed ? kExitOk : kExitInternal;
}

}  // namespace locklab
