// `locklab failover-compare`: the window in which two clients held after a failover promoted by
// Redis Sentinel (--failover-by sentinel) next to the scripted one (--failover-by script), on
// real Redis. The race (the replica-failover scenario's): node 0's replica is cut off at 0 ms;
// client A takes the token lock at 50 ms (on the master only: never replicated) and works for
// --hold-ms; the master dies at 200 ms; client B tries every 50 ms from 100 ms on and works as
// long once in, so the overlap is the whole window from B's entry to A's exit. Scripted,
// locklab promotes the replica at once; with Sentinel, three redis-sentinel must notice, agree
// and promote it, and B gets in only after +switch-master. Each mode runs --reps times (seeds
// 1..reps, fresh servers each time); per mode: runs with two holders (Wilson 95%), the overlap
// in ms and how long after the master's death the replica was promoted. Table on stdout, JSON
// with every run in --out. Exit 0 done, 1 a run did not complete, 2 bad input.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "harness/run/run_spec.h"

namespace locklab {

// One run of the race: token lock, TTL 10 s (A's lease never runs out: an overlap is the
// failover's doing), fixed 50 ms retries, the failover at 0 ms cut / 200 ms kill.
RunSpec FailoverRaceSpec(const std::string& failover_by, int64_t hold_ms, uint64_t seed);

struct FailoverOutcome {
  bool two_holders = false;        // the checkers saw the lock held twice at once
  double overlap_ms = 0;           // how long (the checkers' overlap)
  double promoted_after_ms = -1;   // from the master's death to the promotion clients follow (-1: none)
  double replicaof_after_ms = -1;  // Sentinel: from the master's death to REPLICAOF NO ONE (-1: not seen)
};
// From a run kept with its events (RunOne(..., keep_events = true)).
FailoverOutcome OutcomeOf(const RunResult& r);

struct FailoverCompareFlags {
  int reps = 10;
  int64_t hold_ms = 2000;
  std::string modes = "script,sentinel";
  std::string out;  // JSON ("" = none)
};

class FailoverCompareCli {
 public:
  explicit FailoverCompareCli(CLI::App& app);
  bool parsed() const { return sub_->parsed(); }
  int Run(const std::string& command_line) const;

 private:
  CLI::App* sub_ = nullptr;
  FailoverCompareFlags flags_;
};

}  // namespace locklab
