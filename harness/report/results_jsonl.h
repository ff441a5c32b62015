// Compact results of a big sweep (`locklab run --results FILE.jsonl`): one JSON object per
// line and per run, in sweep order, holding the run's headline figures and its replay command
// (format: README.md "Compact results"). Full reports are kept only for the runs that found a
// violation, one file each in the --full-dir.
#pragma once

#include <cstddef>
#include <string>

#include "harness/run/run_spec.h"

namespace locklab {

constexpr const char* kResultsSchema = "locklab.results/1";

// Where a run of a sweep stands: its 1-based number among `runs_total`, and the sweep's hash
// (SweepHash).
struct RunPlace {
  size_t run = 1;
  size_t runs_total = 1;
  std::string sweep_hash;
  std::string config_hash;  // ConfigHash of the run's spec, when known ("": ResultLine computes it)
};

// True when the checkers found anything unsafe: two holders at once (safety.violations), a lost
// update, an oversold item or an accepted stale write.
bool FoundViolation(const RunResult& r);

// The file name, inside the --full-dir, of run number `run`'s full report: "run-<run>.json".
std::string FullReportName(size_t run);

// One line (no newline at the end) for `r`: its place, config hash, seed, headline figures,
// completed/error, "full_report" (FullReportName, or null when `with_full` is false) and replay.
// Deterministic: the same run gives the same bytes (doubles rounded as in the report).
std::string ResultLine(const RunResult& r, const RunPlace& place, bool with_full);

}  // namespace locklab
