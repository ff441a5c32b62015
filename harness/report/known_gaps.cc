// The study's known gaps (harness/report/known_gaps.h), each measured in the README.
#include "harness/report/known_gaps.h"

namespace locklab {
namespace {

constexpr char kHandOffs[] =
    "the simulator hands the lock over more often (timestamp, seeds 1-6: 219 vs 100-111); a lone client's step agrees";
constexpr char kMergedRounds[] =
    "0.1 in every simulated seed; real runs sharing the machine sometimes merge two rounds into one";

constexpr KnownGap kGaps[] = {
    {"clock-skew", "timestamp", true, true, kHandOffs},
    {"clock-skew", "semaphore", true, true, kHandOffs},
    {"none", "none", true, false, kMergedRounds},
    {"net-delay", "none", true, false, kMergedRounds},
    {"clock-skew", "none", true, false, kMergedRounds},
};

}  // namespace

std::span<const KnownGap> KnownGaps() { return kGaps; }

const KnownGap* FindKnownGap(std::string_view preset, std::string_view algorithm, bool damage) {
  for (const KnownGap& g : kGaps)
    if (g.preset == preset && g.algorithm == algorithm && (damage ? g.damage : g.violations)) return &g;
  return nullptr;
}

}  // namespace locklab
