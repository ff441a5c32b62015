#include "harness/cli/validate_cli.h"

#include <cstdio>
#include <iostream>

#include "harness/cli/cli.h"
#include "harness/report/report.h"
#include "harness/run/comma_list.h"

namespace locklab {
namespace {


Status WriteJson(const std::string& path, const nlohmann::json& j) { return WriteFileAtomic(path, j.dump(2) + "\n"); }

}  // namespace

void AddValidateFlags(CLI::App* app, ValidateFlags* f) {
  app->add_option("--seeds", f->o.seeds,
                  "seeds per experiment and backend (1..N); default: retry 3, suite 10, gc-pause 10 (--quick: 3)")
      ->check(CLI::Range(1, 1000))
      ->type_name("N");
  app->add_option("--only", f->only, "run only these groups: retry, suite, gc-pause (repeatable or NAME,NAME)")
      ->type_name("NAME")
      ->allow_extra_args(false);
  app->add_flag("--quick", f->o.quick,
                "the small version (few clients and requests, 2 experiments per group, 3 seeds): well under a "
                "minute; make test runs it");
  app->add_option("--profile", f->o.profile,
                  "the simulator's cost profile: default (harness/profiles/default.json), legacy (the old fixed "
                  "costs) or a profile FILE")
      ->type_name("NAME|FILE")
      ->capture_default_str();
  app->add_option("--real-from", f->o.real_from,
                  "reuse the real-Redis runs of an earlier validation JSON where it has the same experiment, "
                  "configuration and seeds (real runs do not depend on the profile; the others run): judge a new "
                  "--profile in minutes, not an hour. Repeated: the files' real runs of each experiment pooled, "
                  "whatever their seeds (sittings of the machine pooled; the JSON's real_sources says which file "
                  "each value came from)")
      ->type_name("FILE")
      ->allow_extra_args(false);
  app->add_option("--out", f->o.out, "the JSON file (schema locklab.validation/1)")
      ->capture_default_str()
      ->type_name("FILE");
  app->add_flag("--no-progress", f->no_progress, "no progress lines (run i of n, elapsed, ETA) on stderr");
  app->footer(
      "\nGroups (both backends each; real Redis: redis-server processes locklab starts and stops itself):\n"
      "  retry     the retry study's load (harness/experiments/retry-strategies.json, every strategy, plus the\n"
      "            fifo lock of retry-fifo.json): acquisitions/s, p50 and p99 time per request, commands per\n"
      "            acquisition, failed requests, the client process's CPU per acquisition (simulator: the costs\n"
      "            it charged; real: the runtime thread's user + system CPU; n/a from a --real-from file without it)\n"
      "  suite     the suite's 4 fault presets x every algorithm: violations and lost updates per acquisition,\n"
      "            acquisitions, p99 acquire latency\n"
      "  gc-pause  token lock, ttl 200 ms, pauses of 0.5, 0.9, 1.1, 1.5, 2 x ttl: violations per acquisition\n"
      "\nEach figure: the estimate over seeds with its 95% interval (means: Student t; rates: cluster-robust\n"
      "ratio over runs), sim/real (Fieller's interval for means when it is bounded), and a verdict:\n"
      "  means (throughput, latency, commands and client CPU per acquisition, acquisitions): agree when the\n"
      "    simulator's mean is within x1.25 of real Redis's mean or inside the range of real Redis's own seeds,\n"
      "    whichever is wider\n"
      "  failed requests: agree when the two means differ by at most 5% of one run's requests\n"
      "  violation and lost-update rates: agree when the two 95% intervals overlap\n"
      "  n/a: a backend has no value (no completed run gave one)\n"
      "The full set takes about an hour on real Redis. Exit status: 0 every run completed (disagreement is a\n"
      "finding), 1 a run did not complete or the JSON could not be written, 2 bad input.\n");
}

int ValidateCommand(ValidateFlags& f, const std::string& command) {
  f.o.only.clear();
  for (const std::string& item : f.only)
    for (std::string& name : SplitComma(item)) f.o.only.push_back(std::move(name));
  f.o.progress = !f.no_progress;
  f.o.command = command;
  Result<ValidationResult> r = RunValidation(f.o);
  if (!r.ok()) {
    BadInput(r.status().message());
    return r.status().invalid() ? kExitBadInput : kExitInternal;
  }
  std::cout << "locklab validate: simulator vs real Redis" << (f.o.quick ? " (--quick)" : "") << "\n\n"
            << ValidationTable(*r)
            << "CI = 95% interval over seeds; sim/real with Fieller's interval when bounded; rule: locklab validate "
               "--help\n";
  if (Status s = WriteJson(f.o.out, ValidationJson(*r, f.o)); !s.ok()) {
    std::cout.flush();
    std::fprintf(stderr, "locklab: %s\n", OneLine(s.message()).c_str());
    return kExitInternal;
  }
  std::cout << "validation: " << f.o.out << "\n";
  std::cout.flush();
  return r->all_completed ? kExitOk : kExitInternal;
}

}  // namespace locklab
