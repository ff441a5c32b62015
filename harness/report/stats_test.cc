// The interval code against published values.
#include "harness/report/stats.h"

#include <gtest/gtest.h>

#include <cmath>

namespace locklab {
namespace {

// Newcombe, "Two-sided confidence intervals for the single proportion: comparison of seven
// methods", Statistics in Medicine 17 (1998), Table II, method 3 (Wilson score, no continuity
// correction), to the four decimals printed there.
TEST(Stats, WilsonMatchesNewcombe1998) {
  struct Case { int64_t k, n; double low, high; };
  for (const Case& c : {Case{81, 263, 0.2553, 0.3662}, Case{15, 148, 0.0624, 0.1605},
                        Case{0, 20, 0.0, 0.1611}, Case{1, 29, 0.0061, 0.1718}, Case{29, 29, 0.8830, 1.0}}) {
    const Interval i = WilsonInterval(c.k, c.n);
    EXPECT_NEAR(i.low, c.low, 5e-5) << c.k << "/" << c.n;
    EXPECT_NEAR(i.high, c.high, 5e-5) << c.k << "/" << c.n;
    EXPECT_EQ(i.n, c.n);
    EXPECT_EQ(i.method, "wilson");
  }
}

// Student t and normal quantiles from the standard tables (two-sided 95%).
TEST(Stats, QuantilesMatchTables) {
  EXPECT_NEAR(NormalZ(0.95), 1.959964, 1e-6);
  EXPECT_NEAR(StudentT(0.95, 1), 12.7062, 1e-4);
  EXPECT_NEAR(StudentT(0.95, 9), 2.2622, 1e-4);
  EXPECT_NEAR(StudentT(0.95, 29), 2.0452, 1e-4);
  EXPECT_NEAR(StudentT(0.99, 9), 3.2498, 1e-4);
}

// A mean with a t interval: 10 values 1..10, mean 5.5, sd 3.02765, se 0.957427, t(9) 2.262157.
TEST(Stats, MeanIntervalIsStudentT) {
  std::vector<double> v;
  for (int i = 1; i <= 10; ++i) v.push_back(i);
  const Interval m = MeanInterval(v);
  EXPECT_DOUBLE_EQ(m.estimate, 5.5);
  EXPECT_NEAR(m.low, 5.5 - 2.262157 * 0.957427, 1e-5);
  EXPECT_NEAR(m.high, 5.5 + 2.262157 * 0.957427, 1e-5);
  EXPECT_EQ(m.n, 10);
  EXPECT_EQ(m.method, "t");
  EXPECT_EQ(MeanInterval({3.0}).method, "none (n < 2)");
  EXPECT_DOUBLE_EQ(MeanInterval({3.0}).low, 3.0);
}

// Clustered events: the interval comes from the spread between runs, not from the number of
// trials. Equal trials per run: it equals the t interval of the per-run rates.
TEST(Stats, ClusterRatioEqualsTOverRunsWhenTrialsAreEqual) {
  const std::vector<double> events{0, 10, 2, 8};
  const std::vector<double> trials{100, 100, 100, 100};
  const Interval c = ClusterRatioInterval(events, trials);
  const Interval t = MeanInterval({0.0, 0.1, 0.02, 0.08});
  EXPECT_NEAR(c.estimate, 0.05, 1e-12);
  EXPECT_NEAR(c.high, t.high, 1e-12);
  EXPECT_NEAR(c.low, std::max(0.0, t.low), 1e-12);
  EXPECT_EQ(c.method, "cluster-t");
  // Much wider than treating the 400 acquisitions as independent (Wilson): the runs disagree.
  EXPECT_GT(c.high - c.low, 2 * (WilsonInterval(20, 400).high - WilsonInterval(20, 400).low));
}

TEST(Stats, ClusterRatioWithNoEventsUsesTheWilsonBound) {
  const Interval c = ClusterRatioInterval({0, 0, 0}, {1000, 1000, 1000});
  EXPECT_EQ(c.estimate, 0);
  EXPECT_EQ(c.low, 0);
  EXPECT_NEAR(c.high, WilsonInterval(0, 3000).high, 1e-15);
  EXPECT_LT(c.high, 1.3e-3);
  EXPECT_EQ(ClusterRatioInterval({0}, {0}).method, "none (no trials)");
}

TEST(Stats, QuantileInterpolatesLikeNumpy) {
  EXPECT_DOUBLE_EQ(Quantile({1, 2, 3, 4}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(Quantile({1, 2, 3, 4}, 0.99), 3.97);
  EXPECT_DOUBLE_EQ(Quantile({}, 0.5), 0);
  EXPECT_DOUBLE_EQ(Quantile({7}, 0.9), 7);
}

}  // namespace
}  // namespace locklab
