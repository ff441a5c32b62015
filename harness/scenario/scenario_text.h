// The human side of scenarios: a run's whole timeline laid out as the documents do (one column
// per client, one row per step, times in ms, "!!" where too many clients hold at once: two, or more
// than a semaphore's permits, with a writer among them, as the checkers count them), the same
// timeline as JSON for the report, and the `locklab scenario all` matrix.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/history.h"
#include "harness/run/run_spec.h"
#include "harness/scenario/scenario.h"

namespace locklab {

constexpr size_t kMaxTimelineRows = 400;
// A client's run of commands with nothing else of its own in between (a retry loop) is shown
// as its first and last kTimelineKeep commands around one "... N more commands" row.
constexpr size_t kTimelineKeep = 2;

struct TimelineRow {
  const Event* event = nullptr;  // nullptr: a "... N more" row standing for `hidden` commands
  int64_t t_us = 0;
  int client = -1;
  int64_t hidden = 0;
  int holders = 0;  // holders at this instant, after the event (or before it, for an exit)
  bool too_many = false;  // too many holders (TooManyHolders) before or after the event
};

// The rows to show for `events` (every event but retry loops, capped at kMaxTimelineRows);
// `holders_allowed` as CheckInput::holders_allowed (HoldersAllowed(spec)).
std::vector<TimelineRow> TimelineRows(const std::vector<Event>& events, int holders_allowed, size_t* rows_dropped);

std::string ScenarioTimelineTable(const std::vector<std::string>& client_names, const std::vector<Event>& events,
                                  int holders_allowed);
nlohmann::json ScenarioTimelineJson(const std::vector<std::string>& client_names, const std::vector<Event>& events);

// One row of the matrix.
struct MatrixRow {
  std::string scenario, variant, backend, algorithm;
  Verdict verdict;
  const RunResult* result = nullptr;
  bool judged = true;  // false: run with --algorithm, nothing expected
};
std::string ScenarioMatrix(const std::vector<MatrixRow>& rows);

}  // namespace locklab
