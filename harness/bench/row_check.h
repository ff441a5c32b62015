// What one bench-peers row's history and its servers' command counts say: the checkers' verdict
// plus the benchmark's own figures (rate, wait), and INFO commandstats deltas.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "harness/check/checkers.h"
#include "sim/history.h"

namespace locklab {

struct RowCheck {
  CheckResult check;  // CheckAll over the history, mutual exclusion judged per key (lock)
  bool counter_judged = false;
  int64_t lost_updates = 0;   // counter_judged only
  int64_t acquired = 0, failed = 0, releases_failed = 0;
  double span_s = 0;          // first acquire_start to last event
  double rate_per_s = 0;      // acquired / span_s
  LatencySummary acquire;     // successful acquisitions: acquire_start -> acquire_ok
  LatencySummary wait;        // every request: acquire_start -> acquire_ok or acquire_fail
};
struct JudgeInput {
  // Which key each client locks (CheckInput::lock_of_client); clients missing here share one key.
  std::map<int, std::string> key_of_client;
  // The counter check needs the counter's final value and one counter behind one lock: set only
  // when every client used the same key.
  bool counter_known = false;
  int64_t counter_initial = 0, counter_final = 0;
};
// `events` must be in time order (ShiftToEarliest); the run ends at the last one.
RowCheck JudgeEvents(const std::vector<Event>& events, const JudgeInput& in);

// (INFO commandstats text is parsed by ParseCommandStats, harness/real/redis_server.h.)
struct CommandDelta {
  int64_t total = 0;
  std::map<std::string, int64_t> by_name;
  bool counter_went_back = false;  // a server's count fell (restarted): its after-value is used
};
// Sum over servers of after - before per command name, leaving out `exclude` (upper case names,
// e.g. INFO: the bench's own snapshots). before[i] and after[i] are server i's.
CommandDelta CommandStatsDelta(const std::vector<std::map<std::string, int64_t>>& before,
                               const std::vector<std::map<std::string, int64_t>>& after,
                               const std::vector<std::string>& exclude);

}  // namespace locklab
