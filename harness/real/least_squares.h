// Ordinary least squares for a handful of coefficients: what `locklab calibrate` fits a loop
// pass's CPU with (cross_checks.client_pass_fit), one coefficient per kind of step.
#pragma once

#include <optional>
#include <vector>

namespace locklab {

struct LinearFit {
  std::vector<double> coef;  // one per column of the rows
  double r2 = 0;             // 1 - residual / total sum of squares (0 when y does not vary)
};

// The coefficients b minimizing sum (y_i - rows_i . b)^2, by the normal equations solved with
// partial pivoting. nullopt when there are fewer rows than columns, the rows differ in length,
// or the columns are (nearly) collinear: a column that is always zero, or two that move together.
std::optional<LinearFit> FitLinear(const std::vector<std::vector<double>>& rows, const std::vector<double>& y);

}  // namespace locklab
