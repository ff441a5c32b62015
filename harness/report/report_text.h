// The human side of a report: the table `locklab run` prints on stdout, and a violation's
// timeline laid out one column per client.
#pragma once

#include <string>
#include <vector>

#include "harness/run/run_spec.h"

namespace locklab {

// "token[release=del]": the name, plus the options that differ from the algorithm's defaults.
std::string AlgorithmLabel(const RunSpec& spec);
// "auto" or "fixed[sleep-ms=5]", likewise.
std::string RetryLabel(const RunSpec& spec);
// "none", or e.g. "gc 1500ms x0.5/s, net 5ms long-tail, skew 3000ms, plan 2".
std::string FaultSummary(const FaultSpec& faults);

// One row per run: algorithm, (seed, when runs differ in it), retry, faults, violations, overlap ms, max holders, lost
// / oversold / stale accepted, acquired / failed / unknown, p99 acquire ms, commands per acquire. Runs that did not
// complete are listed under the table with their error.
std::string RunsTable(const std::vector<RunResult>& runs);

// One row per event, a column per involved client (plus "other" for node faults), time in ms;
// rows inside the overlap carry "!!" in the first column.
std::string TimelineTable(const Violation& v);

// An event as one short cell: "enter fence=7", "[n0] SET locklab:lock ab NX PX 1000 -> OK".
std::string EventText(const Event& e);

}  // namespace locklab
