// Shrinking a finding to a minimal schedule, deterministically: the same finding and predicate
// give the same result. Each step keeps a change only when the candidate still fails:
//   1. faults: delta debugging over the fault list (drop chunks of half, a quarter, ... one);
//   2. magnitudes: each fault's duration or |clock delta| by binary search down to the smallest
//      whole ms that still fails;
//   3. clients (with the faults aimed at them; later clients are renumbered), then each
//      client's requests, by the same chunked removal and binary search;
// repeated until a round changes nothing (at most kMaxShrinkRounds). Last, each magnitude gets a
// margin (max(margin x value, 20 ms)) when the schedule still fails with it: a schedule poised at
// its exact threshold would show the race on the simulator and miss it on real Redis by a
// scheduling jitter.
#pragma once

#include <cstdint>
#include <functional>

#include "harness/explore/candidate.h"

namespace locklab {

constexpr int kMaxShrinkRounds = 4;
constexpr int64_t kMarginFloorMs = 20;

// True when the candidate still shows the finding. Called on one thread, in a fixed order.
using StillFails = std::function<bool(const Candidate&)>;

struct ShrinkStats {
  int64_t tries = 0;  // predicate calls
  int64_t kept = 0;   // changes kept
};

// `start` must fail. `margin`: the fraction added to each shrunk magnitude at the end (0: none).
Candidate Shrink(const Candidate& start, const StillFails& fails, double margin, ShrinkStats* stats);

// The pieces, for tests.
// Removes client `c` and the faults aimed at it; faults at later clients move down by one.
Candidate WithoutClient(const Candidate& c, int client);
// The magnitude Shrink works on (duration, or |delta| for clock jumps), in whole ms; -1: none.
int64_t MagnitudeMs(const FaultAction& f);
void SetMagnitudeMs(FaultAction* f, int64_t ms);

}  // namespace locklab
