// Jepsen-style history files: one JSON object a line, one operation each, the format that
// `locklab check` judges and `locklab run --history-out` and the peer drivers write (README
// "Checking any lock's history"). The checkers see exactly the History events a run records:
//
//   acquire invoke         -> kAcquireStart        release invoke    -> kExit, kReleaseStart
//   acquire ok             -> kAcquireOk, kEnter   release ok/fail/info -> kReleaseOk/Fail/Unknown
//                             ("mode": "read" on it: a reader's shared hold, kEnter detail kReadHold)
//   acquire fail / info    -> kAcquireFail / kAcquireUnknown
//   read ok / fail         -> kRead / kReadRejected  (a read or write is judged at its completion)
//   write ok / fail        -> kWriteOk / kWriteRejected (write info: not counted)
//   info crash|pause|resume|order|command|fault (locklab's events; process "nemesis" = no client)
//   nemesis info end       -> when the run ended (open holds and waits end there)
//
// Times are ns in the file and µs in the History (ns / 1000, rounded down); lines must come in
// non-decreasing time. The counter's first value is the first successful read's, its last the
// last successful write's; a history with orders (seckill) takes its stock from the first read.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/status.h"
#include "harness/check/checkers.h"
#include "sim/history.h"

namespace locklab {

// What a history file holds, ready for CheckAll.
struct RecordedHistory {
  std::vector<Event> events;  // in file order (= time order)
  CheckInput input;           // end_us, counter and stock, lock_of_client (the "lock" fields)
  int64_t counter_final = 0;  // the counter's last written value (counter histories)
  int64_t stock_final = 0;    // the stock after the last order (seckill histories)
  int64_t lines = 0;          // non-blank lines read
  int processes = 0;          // distinct client processes
};

// At most this many lines; process numbers are 0..kMaxProcess.
inline constexpr int64_t kMaxHistoryLines = 20'000'000;
inline constexpr int64_t kMaxProcess = 1'000'000;

// Parses a whole history. Invalid "line N: <problem>" on the first malformed line (not JSON, a
// field missing or of the wrong type, an unknown type or f, time going backwards, a completion
// without its invoke, a second invoke while one is open, a process naming two locks).
Result<RecordedHistory> ParseJepsenHistory(std::string_view text);

// The history file of a run's events (in the order recorded), ending at end_us; a client named
// in lock_of_client gets "lock" on its acquire invokes. ParseJepsenHistory gives back the same
// events when kAcquireOk is followed by its kEnter and kExit by its kReleaseStart at one instant,
// as the workload records them.
std::string JepsenHistoryText(const std::vector<Event>& events, int64_t end_us,
                              const std::map<int, std::string>& lock_of_client = {});

}  // namespace locklab
