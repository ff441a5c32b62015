// A history's holds: each client's time inside the critical section, from its kEnter to its
// kExit, its kCrash or the end of the run. The checkers judge overlaps from them, and the explorer
// (harness/explore) asks which overlaps a pause does not explain: both read them the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/history.h"

namespace locklab {

struct Hold {
  int client = -1;
  bool read = false;             // a reader's hold (kEnter detail kReadHold): readers may share
  int64_t acquire_start_us = 0;  // the kAcquireStart that led to this hold (or the enter)
  int64_t enter_us = 0;
  int64_t exit_us = 0;
};

// Clients are numbered 0..n-1 by the runtimes: per-client state over `events` lives in vectors
// of this size (the highest client number + 1; 0 for a history of no client).
size_t ClientSlots(const std::vector<Event>& events);

// Every client's holds in the order they began. A second kEnter without a kExit continues the
// same hold (a reentrant lock entered again); a hold still open at the end closes at end_us.
// `events` in time order, client numbers from 0 (events of client -1 are skipped).
std::vector<Hold> CollectHolds(const std::vector<Event>& events, int64_t end_us);

}  // namespace locklab
