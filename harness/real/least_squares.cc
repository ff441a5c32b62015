#include "harness/real/least_squares.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>

namespace locklab {

std::optional<LinearFit> FitLinear(const std::vector<std::vector<double>>& rows, const std::vector<double>& y) {
  if (rows.empty() || rows.size() != y.size()) return std::nullopt;
  const size_t k = rows.front().size();
  if (k == 0 || rows.size() < k) return std::nullopt;
  // The normal equations [X'X | X'y], k x (k + 1).
  std::vector<std::vector<double>> m(k, std::vector<double>(k + 1, 0.0));
  for (size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].size() != k) return std::nullopt;
    for (size_t i = 0; i < k; ++i) {
      for (size_t j = 0; j < k; ++j) m[i][j] += rows[r][i] * rows[r][j];
      m[i][k] += rows[r][i] * y[r];
    }
  }
  double scale = 0;
  for (size_t i = 0; i < k; ++i) scale = std::max(scale, std::abs(m[i][i]));
  for (size_t c = 0; c < k; ++c) {  // Gauss-Jordan with partial pivoting
    size_t p = c;
    for (size_t r = c + 1; r < k; ++r)
      if (std::abs(m[r][c]) > std::abs(m[p][c])) p = r;
    if (std::abs(m[p][c]) <= 1e-9 * scale) return std::nullopt;  // collinear
    std::swap(m[p], m[c]);
    for (size_t r = 0; r < k; ++r) {
      if (r == c) continue;
      const double f = m[r][c] / m[c][c];
      for (size_t j = c; j <= k; ++j) m[r][j] -= f * m[c][j];
    }
  }
  LinearFit fit;
  for (size_t i = 0; i < k; ++i) fit.coef.push_back(m[i][k] / m[i][i]);
  double mean = 0;
  for (double v : y) mean += v;
  mean /= static_cast<double>(y.size());
  double res = 0, tot = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    double pred = 0;
    for (size_t i = 0; i < k; ++i) pred += rows[r][i] * fit.coef[i];
    res += (y[r] - pred) * (y[r] - pred);
    tot += (y[r] - mean) * (y[r] - mean);
  }
  fit.r2 = tot > 0 ? 1 - res / tot : 0;
  return fit;
}

}  // namespace locklab
