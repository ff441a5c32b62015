// The block prediction against distributions whose pooled rate over k runs is known exactly.
#include "harness/report/prediction.h"

#include <gtest/gtest.h>

#include <vector>

namespace locklab {
namespace {

// Every run 5 of 100: any block pools to 0.05, so the range is that point and nothing is outside.
TEST(Prediction, ARateWithoutSpreadPredictsItself) {
  const std::vector<double> events(50, 5.0), trials(50, 100.0);
  const Prediction p = PredictBlock(events, trials, 4);
  ASSERT_TRUE(p.valid);
  EXPECT_DOUBLE_EQ(p.low, 0.05);
  EXPECT_DOUBLE_EQ(p.high, 0.05);
  EXPECT_EQ(p.outside, 0.0);
  EXPECT_EQ(p.cluster_t_coverage, 1.0);
  EXPECT_EQ(p.block_runs, 4);
  EXPECT_EQ(p.reference_runs, 50);
  EXPECT_EQ(p.draws, kPredictionDraws);
  EXPECT_TRUE(WithinPrediction(p, 0.05));
  EXPECT_FALSE(WithinPrediction(p, 0.051));
}

// Runs of one trial each, half with the event: a block of 20 pools to Binomial(20, 1/2) / 20.
// P(X <= 5) = P(X >= 15) = 0.020695 and P(X <= 6) = 0.057659, so the 2.5% and 97.5% quantiles
// are 6/20 and 14/20 and 0.041389 of the draws fall outside them.
TEST(Prediction, BinomialBlockHasTheBinomialQuantiles) {
  std::vector<double> events, trials(1000, 1.0);
  for (int i = 0; i < 1000; ++i) events.push_back(i % 2);
  const Prediction p = PredictBlock(events, trials, 20);
  EXPECT_DOUBLE_EQ(p.low, 0.3);
  EXPECT_DOUBLE_EQ(p.high, 0.7);
  EXPECT_NEAR(p.outside, 0.041389, 0.008);  // 4 standard errors of 10,000 draws
}

// The shape of lost updates under pauses: most runs lose little (2 of 200), one in four loses
// much (30 of 200); the rate over all runs is 0.045. A block of 4 with j heavy runs (j binomial,
// 4, 1/4) pools to (8 + 28 j) / 800. Its cluster-t interval holds 0.045 unless every run is
// alike (j = 0 or 4: zero width), so it covers in 1 - 0.75^4 - 0.25^4 = 0.6797 of the draws, far
// below the 95% it claims. P(j <= 2) = 0.9492 and P(j <= 3) = 0.9961: the prediction's range
// runs from j = 0 (0.01) to j = 3 (0.115); only j = 4 (0.0039) falls outside.
TEST(Prediction, SkewedRunsShowWhyFewRunsNeedTheirSpread) {
  std::vector<double> events, trials(1000, 200.0);
  for (int i = 0; i < 1000; ++i) events.push_back(i % 4 == 0 ? 30.0 : 2.0);
  const Prediction p = PredictBlock(events, trials, 4);
  EXPECT_NEAR(p.cluster_t_coverage, 0.6797, 0.02);
  EXPECT_DOUBLE_EQ(p.low, 0.01);
  EXPECT_DOUBLE_EQ(p.high, 0.115);
  EXPECT_NEAR(p.outside, 0.0039, 0.0025);
  EXPECT_TRUE(WithinPrediction(p, 0.01));  // four light runs
}

TEST(Prediction, SameRunsAndSeedGiveTheSameRangeAndAnotherSeedOtherDraws) {
  std::vector<double> events, trials;
  for (int i = 0; i < 300; ++i) {
    events.push_back((i * 37) % 11);
    trials.push_back(100 + i % 7);
  }
  const Prediction a = PredictBlock(events, trials, 4), b = PredictBlock(events, trials, 4);
  EXPECT_EQ(a.low, b.low);
  EXPECT_EQ(a.high, b.high);
  EXPECT_EQ(a.cluster_t_coverage, b.cluster_t_coverage);
  const Prediction c = PredictBlock(events, trials, 4, kPredictionDraws, 2);
  EXPECT_NE(a.cluster_t_coverage, c.cluster_t_coverage);
}

TEST(Prediction, NoTrialsOrNoBlockIsNoPrediction) {
  EXPECT_FALSE(PredictBlock({0, 0}, {0, 0}, 4).valid);
  EXPECT_FALSE(PredictBlock({1, 2}, {10, 10}, 0).valid);
  EXPECT_FALSE(PredictBlock({}, {}, 4).valid);
  EXPECT_FALSE(WithinPrediction(Prediction{}, 0.0));
}

}  // namespace
}  // namespace locklab
