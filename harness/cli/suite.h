// The suite: every algorithm (default options) under a fixed set of fault presets, one report
// per (backend, preset), and one comparison table: rows = algorithm, column groups =
// backend x preset, cells = violations / lost updates / acquired / p99 acquire ms. `make run` runs it.
//
// Backends are columns, so adding "redis" next to "sim" (--backend sim,redis) needs no new code.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "algorithms/status.h"
#include "harness/run/run_spec.h"

namespace locklab {

struct SuitePreset {
  std::string name;     // file name and column label: "none", "gc-pause", ...
  std::string summary;  // one line for the legend
  void (*apply)(RunSpec* spec);
};
const std::vector<SuitePreset>& SuitePresets();

struct SuiteOptions {
  std::vector<std::string> backends = {"sim"};
  std::vector<std::string> redis;  // redis backend: existing servers (empty: start our own)
  std::string out_dir = "results";
  uint64_t seed = 1;
  std::string profile = "default";  // the simulator's cost profile (RunSpec::profile)
  std::string trace = "commands";   // what the histories keep (RunSpec::trace)
  int clients = 10;
  int64_t requests = 200;
  bool quiet = false;    // no table on stdout
  bool progress = true;  // one line per run on stderr
  int jobs = 1;          // simulator runs at the same time (1..kMaxJobs); the output is the same
};

// The spec of one cell: the suite's base workload, the preset applied, not yet resolved.
RunSpec SuiteSpec(const SuiteOptions& o, const std::string& backend, const SuitePreset& p,
                  const std::string& algorithm);
// OUT_DIR/suite-<backend>/<preset>.json
std::string SuiteReportPath(const SuiteOptions& o, const std::string& backend, const SuitePreset& p);

// Runs the whole suite, writes the reports, prints the table to `out` and progress to stderr.
// ok: all runs completed; kFailed: a run did not complete or a report could not be written (said
// on stderr as it happened); kInvalid: bad input, found before any run started.
Status RunSuite(const SuiteOptions& o, std::ostream& out);

}  // namespace locklab
