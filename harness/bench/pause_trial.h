// bench-peers' pause test (internal to harness/bench), the gc-pause scenario on real processes:
// A (client 0) acquires; pause_at_ms into its critical section it is stopped for pause_ms (SIGSTOP
// of a peer's driver process, pause_client for locklab) while B (client 1, a second process)
// acquires; the checkers then judge whether A and B held at once on the machine's monotonic clock.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/bench/bench_env.h"
#include "harness/bench/row_check.h"

namespace locklab::bench_peers {

struct PauseRow {
  std::string impl, name, version;
  int nodes = 1;
  int64_t hold_ms = 0;  // A's time in its critical section (its own clock)
  bool ran = false;
  std::string error;
  RowCheck check;
  int64_t counter_final = 0;
  std::string observed;       // what happened to A and B, in words
  std::vector<Event> events;  // the judged history, times from its earliest event
};

// The test for every selected implementation (on its largest node count; a watchdog library
// also with a hold that outlasts the pause), with a progress line each.
std::vector<PauseRow> RunPauseTests(BenchEnv& env);

}  // namespace locklab::bench_peers
