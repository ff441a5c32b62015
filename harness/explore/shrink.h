// Shrinking a finding to a minimal schedule, deterministically: the same finding, predicate and
// options give the same result. Each step keeps a change only when the candidate still fails.
// Classic rounds (removal and lowering), repeated until a round changes nothing (at most
// kMaxShrinkRounds):
//   - faults: delta debugging over the fault list (drop chunks of half, a quarter, ... one);
//   - magnitudes: each fault's duration or |clock delta| by binary search down to the smallest
//     whole ms that still fails;
//   - clients (with the faults aimed at them; later clients are renumbered), then each client's
//     requests, by the same chunked removal and binary search.
// Then, when more than one fault is left, the finding is shrunk again from the start by move
// rounds (at most kMaxShrinkRounds), each dropping faults, then the steps below, then a classic
// round; that result is kept only when it has fewer faults than the classic one (so a schedule
// the classic rounds already bring to one fault is theirs):
//   - a timed client pause that begins before its client starts becomes that client's later
//     start (a client frozen before it did anything has only started later);
//   - merges: each pair of faults of the same kind on the same target becomes one
//     (shrink_moves.h: Merges);
//   - moves: each fault is dropped while one other fault moves (another trigger, time, target,
//     or a larger magnitude: Moves) so that it alone does what the two did; then the same with
//     one client's critical section raised to the longest the space draws (a pause that only
//     lengthened a hold is then that hold, still inside the space); last, with the other fault
//     a client pause whose end is aligned next to another client's command (Alignments);
//   - kinds: a fault with a magnitude becomes a crash where the space has crashes (Simpler).
// Last, each magnitude gets a margin (max(margin x value, 20 ms)) when the schedule still fails
// with it: a schedule poised at its exact threshold would show the race on the simulator and miss
// it on real Redis by a scheduling jitter. For the same reason a timed client pause that begins
// less than kPoisedUs after a command of its client, or before its next one (in a run without
// the pause), moves into that quiet time: its middle, else 50, 20, 10 or 5 ms from either end,
// the first place where the schedule still fails. A real round trip takes longer than a
// simulated one, and a pause poised next to a command lands on its other side there (a release
// and a new acquisition that the simulator finished 0.5 ms before the pause had not finished
// on real Redis; a hold the pause caught 1.2 ms before its end had ended).
// Bounded: at most max_tries runs in all (predicate calls and the runs that list a schedule's
// protocol points); once they are spent every further step is refused and the schedule reached
// so far is the result.
#pragma once

#include <cstdint>
#include <functional>

#include "harness/explore/candidate.h"
#include "harness/explore/generate.h"
#include "harness/explore/shrink_moves.h"

namespace locklab {

constexpr int kMaxShrinkRounds = 4;
constexpr int64_t kMarginFloorMs = 20;
constexpr int64_t kMaxShrinkTries = 20'000;
constexpr int64_t kPoisedUs = 2'000;  // a pause this close to its client's command is moved
constexpr int64_t kCenterOffsetsMs[] = {50, 20, 10, 5};  // ... else this far from an end of its quiet time

// True when the candidate still shows the finding. Called on one thread, in a fixed order.
using StillFails = std::function<bool(const Candidate&)>;

// The commands each client sent in a run of the candidate (ProtocolPoints of its history).
using PointsOf = std::function<std::vector<ProtocolPoint>(const Candidate&)>;

struct ShrinkOptions {
  double margin = 0;  // the fraction added to each shrunk magnitude at the end (0: none)
  int64_t max_tries = kMaxShrinkTries;
  PointsOf points;    // empty: moves onto other protocol points are not tried
  MoveLimits limits;  // clients is taken from the candidate
};

struct ShrinkStats {
  int64_t tries = 0;        // predicate calls
  int64_t kept = 0;         // candidates that still failed
  int64_t point_runs = 0;   // runs that listed protocol points
  // Faults merged, dropped by a move, made simpler, turned into a later start (in the result).
  int64_t merged = 0, moved = 0, simplified = 0, started_later = 0;
  int64_t centered = 0;  // timed client pauses moved away from their client's commands (in the result)
  bool out_of_tries = false;  // max_tries was reached
};

// `start` must fail.
Candidate Shrink(const Candidate& start, const StillFails& fails, const ShrinkOptions& options, ShrinkStats* stats);
// Without moves onto protocol points or simpler kinds, the margin alone.
Candidate Shrink(const Candidate& start, const StillFails& fails, double margin, ShrinkStats* stats);

// The pieces, for tests.
// Removes client `c` and the faults aimed at it; faults at later clients move down by one.
Candidate WithoutClient(const Candidate& c, int client);
// The magnitude Shrink works on (duration, or |delta| for clock jumps), in whole ms; -1: none.
int64_t MagnitudeMs(const FaultAction& f);
void SetMagnitudeMs(FaultAction* f, int64_t ms);

}  // namespace locklab
