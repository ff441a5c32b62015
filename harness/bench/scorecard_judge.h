// Judging one scorecard trial (internal to harness/bench): the trial's history in the format of
// `locklab check` (harness/run/jepsen_history.h) goes through the same parser and CheckAll as
// `locklab check` does; what A (process 0) heard of its lost lock comes from the same history
// (its release failed, its process crashed) and from the driver's "learned" list (a callback or
// an aborted signal).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/status.h"

namespace locklab::scorecard {

// A notification the driver recorded: when (µs on the history's clock) and how.
struct Learned {
  int client = 0;
  int64_t t_us = 0;
  std::string how;
};

struct TrialOutcome {
  bool ran = false;
  std::string error;               // why not (ran == false)
  int64_t violations = 0;          // overlap episodes (two holders at once)
  double overlap_ms = 0;           // total time with two holders
  int64_t lost_updates = 0;        // counter increments lost
  int64_t stale_writes_accepted = 0;
  bool b_acquired = false;
  bool b_after_known = false;        // both B acquired and A's release ended
  double b_after_a_release_ms = 0;   // B's acquisition minus the end of A's release (< 0: B first)
  std::string a_release = "none";    // ok | failed | unknown | none (A never got to release)
  bool learned = false;              // A heard it had lost the lock
  double learned_ms = -1;            // when, after the fault began
  std::string learned_how;
  std::string fault_note;            // what the fault did (measured), for the report
  std::vector<std::pair<double, double>> proxy_ms;  // each proxy fault: asked, measured (ms)
  std::string retried_after;         // run a second time, alone, after this error ("" = first run)
};

// Merges history texts (each in time order) and extra lines into one history in time order
// (stable: same-time lines keep their order, the texts' before the extra lines). Invalid when a
// line is not JSON or has no integer "time".
Result<std::string> MergeHistories(const std::vector<std::string>& texts, const std::vector<std::string>& extra_lines);

// A nemesis line for the history: {"time": t_us*1000, "process": "nemesis", "type": "info",
// "f": f, "value": value}.
std::string NemesisLine(int64_t t_us, const std::string& f, const std::string& value);

// Judges a trial's whole history. fault_start_us is on the history's clock; learned entries of
// client 0 count. Invalid when the history does not parse (the parser's line message).
Result<TrialOutcome> JudgeTrial(const std::string& history, int64_t fault_start_us, const std::vector<Learned>& learned);

}  // namespace locklab::scorecard
