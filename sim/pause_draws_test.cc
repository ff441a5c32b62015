#include "sim/pause_draws.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace locklab::sim {
namespace {

struct Case {
  uint64_t seed;
  double mean_gap_us;
  int64_t duration_us;
  int64_t horizon_us;
  size_t max_count;
};

// DrawPauses against the plain loop: the same count, the same times from Next(), and the stream
// left at the same place (the next client's pauses are drawn from it).
void ExpectSameAsTheLoop(const Case& c) {
  Rng loop_rng(c.seed), drawn_rng(c.seed);
  const std::vector<int64_t> want = PauseTimes(&loop_rng, c.mean_gap_us, c.duration_us, c.horizon_us, c.max_count);
  PauseDraws d = DrawPauses(&drawn_rng, c.mean_gap_us, c.duration_us, c.horizon_us, c.max_count);
  const std::string where = "seed " + std::to_string(c.seed) + " mean " + std::to_string(c.mean_gap_us) +
                            " duration " + std::to_string(c.duration_us) + " horizon " +
                            std::to_string(c.horizon_us) + " max " + std::to_string(c.max_count);
  ASSERT_EQ(d.count, want.size()) << where;
  for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(d.Next(), want[i]) << where << " pause " << i;
  EXPECT_EQ(drawn_rng.Next(), loop_rng.Next()) << where;
}

TEST(PauseDraws, GiveThePlainLoopsPausesAndStream) {
  const double means[] = {1.0, 1'000.0, 250'000.0, 1e6, 3e7, 1e13};
  const int64_t durations[] = {0, 1, 300'000};
  const int64_t horizons[] = {-5, 0, 1, 2'000'000, 600'000'000};
  const size_t maxes[] = {0, 1, 7, 100'000};
  uint64_t seed = 1;
  for (double mean : means)
    for (int64_t duration : durations)
      for (int64_t horizon : horizons)
        for (size_t max : maxes) ExpectSameAsTheLoop({seed++, mean, duration, horizon, max});
}

TEST(PauseDraws, GiveThePlainLoopsPausesOverManySeeds) {
  for (uint64_t seed = 1; seed <= 3'000; ++seed) ExpectSameAsTheLoop({seed, 1e6, 300'000, 600'000'000, 100'000});
  for (uint64_t seed = 1; seed <= 300; ++seed) ExpectSameAsTheLoop({seed, 1e5, 0, 600'000'000, 100'000});
}

// Horizons at a pause's start and a microsecond either side: the bounds cannot call these, so
// the plain loop decides; and the limit on pauses reached before the horizon.
TEST(PauseDraws, GiveThePlainLoopsPausesAtTheCloseCalls) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Rng rng(seed);
    const std::vector<int64_t> starts = PauseTimes(&rng, 1e6, 300'000, 600'000'000, 100'000);
    ASSERT_GT(starts.size(), 100u);
    for (size_t i = 0; i < starts.size(); i += 37)
      for (int64_t off : {-1, 0, 1}) ExpectSameAsTheLoop({seed, 1e6, 300'000, starts[i] + off, 100'000});
    ExpectSameAsTheLoop({seed, 1e6, 300'000, 600'000'000, starts.size() - 1});
    ExpectSameAsTheLoop({seed, 1e6, 300'000, 600'000'000, starts.size()});
  }
}

}  // namespace
}  // namespace locklab::sim
