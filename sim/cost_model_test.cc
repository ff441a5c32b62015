// CostDist: the inverse CDF's interpolation and mean.
#include "sim/cost_model.h"
#include "sim/wake_rows.h"

#include <algorithm>
#include <bit>
#include <cstdint>

#include <gtest/gtest.h>

namespace locklab::sim {
namespace {

TEST(CalibCostDist, EmptyIsZeroAndOnePointIsConstant) {
  CostDist empty;
  EXPECT_EQ(empty.MeanUs(), 0.0);
  EXPECT_EQ(empty.AtUs(0.3), 0.0);
  CostDist one{{{0.5, 7.0}}};
  EXPECT_EQ(one.MeanUs(), 7.0);
  EXPECT_EQ(one.AtUs(0.0), 7.0);
  EXPECT_EQ(one.AtUs(1.0), 7.0);
  CostDist c = CostDist::Constant(12.5);
  EXPECT_DOUBLE_EQ(c.MeanUs(), 12.5);
  EXPECT_DOUBLE_EQ(c.AtUs(0.77), 12.5);
}

TEST(CalibCostDist, InterpolatesLinearlyBetweenPoints) {
  CostDist d{{{0.0, 10.0}, {0.5, 20.0}, {0.9, 20.0}, {1.0, 120.0}}};
  EXPECT_DOUBLE_EQ(d.AtUs(0.0), 10.0);
  EXPECT_DOUBLE_EQ(d.AtUs(0.25), 15.0);
  EXPECT_DOUBLE_EQ(d.AtUs(0.5), 20.0);
  EXPECT_DOUBLE_EQ(d.AtUs(0.7), 20.0);
  EXPECT_DOUBLE_EQ(d.AtUs(0.95), 70.0);
  EXPECT_DOUBLE_EQ(d.AtUs(1.0), 120.0);
  // Outside [0, 1]: clamped.
  EXPECT_DOUBLE_EQ(d.AtUs(-1.0), 10.0);
  EXPECT_DOUBLE_EQ(d.AtUs(2.0), 120.0);
  // A vertical step (two points at one p): the value past it.
  CostDist step{{{0.0, 1.0}, {0.5, 1.0}, {0.5, 5.0}, {1.0, 5.0}}};
  EXPECT_DOUBLE_EQ(step.AtUs(0.25), 1.0);
  EXPECT_DOUBLE_EQ(step.AtUs(0.75), 5.0);
}

TEST(CalibCostDist, MeanIsTheAreaUnderTheInverseCdf) {
  // Uniform on [10, 30]: mean 20.
  EXPECT_DOUBLE_EQ((CostDist{{{0.0, 10.0}, {1.0, 30.0}}}).MeanUs(), 20.0);
  // Trapezoids: 0.5*(10+20)/2 + 0.4*20 + 0.1*(20+120)/2 = 7.5 + 8 + 7 = 22.5.
  CostDist d{{{0.0, 10.0}, {0.5, 20.0}, {0.9, 20.0}, {1.0, 120.0}}};
  EXPECT_DOUBLE_EQ(d.MeanUs(), 22.5);
  // The mean agrees with many evenly spaced draws.
  double sum = 0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) sum += d.AtUs((i + 0.5) / n);
  EXPECT_NEAR(sum / n, d.MeanUs(), 1e-3);
}

TEST(CalibWakeLate, InterpolatesBetweenRowsInIdleTime) {
  const std::vector<WakeRow> rows = {{10, CostDist::Constant(20)}, {100, CostDist{{{0, 20}, {1, 60}}}}};
  EXPECT_EQ(WakeLateUs({}, 50, 0.5), 0.0);        // no rows: on time
  EXPECT_EQ(WakeLateUs(rows, 0, 0.5), 0.0);       // not idle: on time
  EXPECT_DOUBLE_EQ(WakeLateUs(rows, 5, 0.5), 10.0);   // below the first row: from 0 at 0 idle
  EXPECT_DOUBLE_EQ(WakeLateUs(rows, 10, 0.9), 20.0);
  EXPECT_DOUBLE_EQ(WakeLateUs(rows, 55, 0.5), 30.0);  // halfway: 20 and 40 (row 2 at u = 0.5)
  EXPECT_DOUBLE_EQ(WakeLateUs(rows, 100, 1.0), 60.0);
  EXPECT_DOUBLE_EQ(WakeLateUs(rows, 1e6, 0.0), 20.0);  // past the last row: the last row's
}

// A socket's wake-up is the lateness less the first row's (its trip holds that much), and must be
// the very doubles of those two lookups (the simulator's bytes depend on them), however the rows
// fall: one row, rows below and past every idle time, a first row at 0 idle, rows of unequal
// steps, a row whose quantiles fall.
TEST(CalibWakeLate, SocketWakeIsTheLatenessLessTheFirstRowsToTheBit) {
  const CostDist rising{{{0, 3.1}, {0.3, 17.7}, {0.9, 40.3}, {1, 333.3}}};
  const CostDist falling{{{0, 90.7}, {0.5, 12.9}, {1, 1.3}}};
  const std::vector<std::vector<WakeRow>> tables = {
      {},
      {{37.3, rising}},
      {{0, rising}, {250, falling}},
      {{13.7, rising}, {100, CostDist{{{0, 20}, {1, 60}}}}, {1000.9, falling}, {50000, rising}},
      {{3, falling}, {3, rising}, {77.7, CostDist::Constant(41.9)}},
  };
  const double idles[] = {-5, 0, 0.3, 3, 13.7, 37.3, 55.5, 100, 250, 999.9, 1e5, 1e9};
  for (const auto& rows : tables) {
    for (double idle : idles) {
      for (int k = 0; k <= 64; ++k) {
        const double u = k / 64.0 - (k == 64 ? 1e-12 : 0.0);
        const double floor_us = rows.empty() ? 0.0 : WakeLateUs(rows, rows.front().idle_us, u);
        const double want = std::max(0.0, WakeLateUs(rows, idle, u) - floor_us);
        const double got = SocketWakeLateUs(rows, idle, u);
        ASSERT_EQ(std::bit_cast<uint64_t>(got), std::bit_cast<uint64_t>(want))
            << rows.size() << " rows, idle " << idle << " us, u " << u;
      }
    }
  }
}

}  // namespace
}  // namespace locklab::sim
