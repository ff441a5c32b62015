// `locklab scorecard`: the Redis lock libraries people run, and locklab's own locks, under the
// faults locklab knows, each cell repeated to give rates.
//
// Implementations (scorecard_plan.h): node-redlock 4.2.0, @sesamecare-oss/redlock, redis-semaphore
// Mutex and RedlockMutex, redlock-universal (npm, pinned in harness/bench/peers/package-lock.json),
// redis-py's Lock (Debian's python3-redis), locklab's token, watchdog, redlock and fencing. Faults:
// the holder paused past the TTL, its release delayed past the TTL, its node's clock jumping past
// the TTL, a node restarting empty (Redlock implementations), the holder partitioned while it
// works, the extension-vs-release race (implementations that extend). Every trial plays one small
// scripted timeline (two clients; scorecard_trial.h) and its history is judged by the checkers of
// `locklab check`. Per cell: two holders at once (k of n trials, 95% Wilson interval), the overlap
// in ms, lost updates, whether and when the holder learned that it had lost the lock.
//
// Output: a table on stdout, the JSON report (schema locklab.scorecard/1, written atomically),
// progress lines on stderr.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "algorithms/status.h"

namespace locklab {

struct ScorecardOptions {
  std::string out = "results/bench/scorecard.json";
  int trials = 10;               // per cell
  int64_t ttl_ms = 400;          // the short rows' TTL (scorecard_plan.h: TimelineFor)
  int parallel = 3;              // a peer's trials at once, for the faults that touch only its own
                                 // processes and proxies (not the clock jump or the restart)
  std::vector<std::string> impls;   // ids; empty: all
  std::vector<std::string> faults;  // ids; empty: all
  std::string peers_dir, drivers_dir;  // "": BUILD/peers, harness/bench/peers
  std::string node = "node";
  std::string python = "/usr/bin/python3";
  uint64_t seed = 1;
  bool keep_histories = false;   // leave every trial's merged history next to the report
  bool quiet = false;
  bool progress = true;
};

// Invalid naming the flag when an option is out of range or names an unknown id.
Status CheckScorecardOptions(const ScorecardOptions& o);

// Runs every applicable cell, prints the table to `out` (unless quiet), writes the report. Ok:
// every trial ran. Failed: some trial could not run (the report says which), or no report.
Status RunScorecard(const ScorecardOptions& o, std::ostream& out);

void AddScorecardFlags(CLI::App* app, ScorecardOptions* o);
// Exit status 0 ok, 1 Failed, 2 Invalid (one line on stderr, nothing run).
int ScorecardCommand(const ScorecardOptions& o);

}  // namespace locklab
