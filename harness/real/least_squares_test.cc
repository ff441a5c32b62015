#include "harness/real/least_squares.h"

#include <gtest/gtest.h>

namespace locklab {
namespace {

TEST(FitLinear, RecoversExactCoefficients) {
  // y = 3 + 2 a + 0.5 b, no noise: the fit gives them back and explains everything.
  std::vector<std::vector<double>> rows;
  std::vector<double> y;
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 3; ++b) {
      rows.push_back({1.0, static_cast<double>(a), static_cast<double>(b * b)});
      y.push_back(3 + 2.0 * a + 0.5 * b * b);
    }
  const std::optional<LinearFit> fit = FitLinear(rows, y);
  ASSERT_TRUE(fit.has_value());
  ASSERT_EQ(fit->coef.size(), 3u);
  EXPECT_NEAR(fit->coef[0], 3.0, 1e-9);
  EXPECT_NEAR(fit->coef[1], 2.0, 1e-9);
  EXPECT_NEAR(fit->coef[2], 0.5, 1e-9);
  EXPECT_NEAR(fit->r2, 1.0, 1e-12);
}

TEST(FitLinear, NoisyLineHasTheLeastSquaresSlope) {
  // Points (0, 1), (1, 2), (2, 4): slope 1.5, intercept 0.833..., r2 = 1 - (1/6) / (14/3).
  const std::optional<LinearFit> fit = FitLinear({{1, 0}, {1, 1}, {1, 2}}, {1, 2, 4});
  ASSERT_TRUE(fit.has_value());
  EXPECT_NEAR(fit->coef[0], 5.0 / 6.0, 1e-9);
  EXPECT_NEAR(fit->coef[1], 1.5, 1e-9);
  EXPECT_NEAR(fit->r2, 1 - (1.0 / 6.0) / (14.0 / 3.0), 1e-9);
}

TEST(FitLinear, CollinearOrTooFewRowsIsNoFit) {
  // Two columns that always move together (as a write and its reply do in a steady load).
  EXPECT_FALSE(FitLinear({{1, 1, 1}, {1, 2, 2}, {1, 3, 3}, {1, 5, 5}}, {1, 2, 3, 4}).has_value());
  EXPECT_FALSE(FitLinear({{1, 0}, {1, 0}, {1, 0}}, {1, 2, 3}).has_value());  // a column always zero
  EXPECT_FALSE(FitLinear({{1, 2, 3}}, {1}).has_value());                     // fewer rows than columns
  EXPECT_FALSE(FitLinear({{1, 2}, {1}}, {1, 2}).has_value());                // ragged
  EXPECT_FALSE(FitLinear({}, {}).has_value());
}

}  // namespace
}  // namespace locklab
