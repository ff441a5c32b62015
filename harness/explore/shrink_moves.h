// What one fault of a shrunk schedule may become, for the shrinker's steps that lower the number
// of faults by moving or merging them instead of only dropping them (shrink.h runs them and
// keeps a change only when the schedule still fails). Pure functions: each returns a bounded
// list of replacement faults, in a fixed order, tried first to last.
//
//   Merges(a, b): one fault standing for two of the same kind on the same target: a pause (or
//     partition, failover cut) from the earlier start to the later end when both are timed;
//     otherwise either fault's place with the two durations (or clock deltas) added, and with
//     the longest magnitude the space allows.
//   Moves(f, dropped, points): f elsewhere, so that it alone may do what it did together with
//     `dropped`: on another trigger (right after each command its client sent, the on_send
//     occurrence), at another time (each of those commands' times, the dropped fault's time,
//     and a grid between the two faults' times), on another client or node, or at the dropped
//     fault's place; first each place with its own magnitude, the larger of the two, their sum
//     and the longest the space allows, then each place with a grid of fractions of the longest.
//   Alignments(f, points): a client pause (timed, or from its trigger command's time in
//     `points`) whose end moves so that the end, or one of the next kAlignCommands commands its
//     client sent after it, lands next to a command of another client (from kAlignSpanUs before
//     it to as far after, kAlignStepUs apart): a race whose window is one round trip (a release
//     between another client's GET and GETSET) needs one pause placed to the microsecond where
//     two coarser faults made it happen. Tried after every move: such a schedule is poised on a
//     window that real Redis hits by chance only.
//   Stretches(f, dropped): a client pause made longer, by the dropped fault's magnitude and to
//     the longest the space allows, at most two; the shrinker aligns each on its own run's
//     commands (Alignments), for a window that only a longer freeze brings into the run.
//   Simpler(f): the same place with a kind that has no magnitude (a client or node pause becomes
//     a crash), when the space has that kind.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "harness/explore/generate.h"
#include "sim/fault.h"

namespace locklab {

constexpr size_t kMaxMovePoints = 48;     // protocol points of one client (or node) tried per fault
constexpr int kMoveTimeGrid = 8;           // times tried between a fault's and the dropped one's
constexpr int kMoveMagnitudeGrid = 8;      // the second pass tries the longest x 1/8 ... 7/8
constexpr size_t kMaxMovesPerFault = 1'200;  // replacements of one fault for one dropped fault
constexpr int64_t kAlignSpanUs = 100;        // alignments: from 100 µs before a command
constexpr int64_t kAlignStepUs = 20;         // ... to 100 µs after it, 20 µs apart
constexpr size_t kAlignCommands = 3;         // the commands after a pause's end that may be aligned
constexpr size_t kMaxAlignments = 2'400;     // alignments of one fault

// What a moved or merged fault may be: the world's size, the kinds the space allows, and the
// longest magnitude (ms) of each kind (<= 0 or an empty function: never raised).
struct MoveLimits {
  int clients = 1;
  int nodes = 1;
  std::vector<FaultAction::Kind> kinds;  // empty: Simpler gives nothing
  std::function<int64_t(FaultAction::Kind)> max_magnitude_ms;
  int64_t hold_max_ms = 0;  // the longest critical section the space draws (0: holds are not raised)
};

std::vector<FaultAction> Merges(const FaultAction& a, const FaultAction& b, const MoveLimits& limits);
// `points`: the commands the clients sent in a run of the schedule without `dropped`.
std::vector<FaultAction> Moves(const FaultAction& f, const FaultAction& dropped, const std::vector<ProtocolPoint>& points,
                               const MoveLimits& limits);
std::vector<FaultAction> Alignments(const FaultAction& f, const std::vector<ProtocolPoint>& points,
                                    const MoveLimits& limits);
std::vector<FaultAction> Stretches(const FaultAction& f, const FaultAction& dropped, const MoveLimits& limits);
std::vector<FaultAction> Simpler(const FaultAction& f, const MoveLimits& limits);

// Two faults are the same when their scenario steps are (kind, target, time or trigger,
// magnitude).
bool SameFault(const FaultAction& a, const FaultAction& b);

}  // namespace locklab
