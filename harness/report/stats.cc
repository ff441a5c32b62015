#include "harness/report/stats.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <utility>
#include <vector>

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

namespace locklab {

double NormalZ(double confidence) {
  return boost::math::quantile(boost::math::normal_distribution<double>(), 0.5 + confidence / 2);
}

double StudentT(double confidence, int64_t df) {
  // Kept per (confidence, df): a study or a prediction asks for the same few thousands of times.
  constexpr size_t kMaxKept = 256;
  thread_local std::map<std::pair<double, int64_t>, double> kept;
  if (auto it = kept.find({confidence, df}); it != kept.end()) return it->second;
  if (kept.size() >= kMaxKept) kept.clear();
  const double t = boost::math::quantile(boost::math::students_t_distribution<double>(static_cast<double>(df)),
                                         0.5 + confidence / 2);
  return kept.emplace(std::make_pair(confidence, df), t).first->second;
}

Interval WilsonInterval(int64_t k, int64_t n, double confidence) {
  Interval out;
  out.n = n;
  out.method = "wilson";
  if (n <= 0) {
    out.high = 1;
    return out;
  }
  const double z = NormalZ(confidence);
  const double p = static_cast<double>(k) / static_cast<double>(n);
  const double nn = static_cast<double>(n);
  const double denom = 1 + z * z / nn;
  const double centre = (p + z * z / (2 * nn)) / denom;
  const double half = z * std::sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn)) / denom;
  out.estimate = p;
  // At k = 0 (or n) the bound is exactly 0 (or 1); rounding must not move it.
  out.low = k == 0 ? 0.0 : std::max(0.0, centre - half);
  out.high = k == n ? 1.0 : std::min(1.0, centre + half);
  return out;
}

Interval MeanInterval(const std::vector<double>& values, double confidence) {
  Interval out;
  out.n = static_cast<int64_t>(values.size());
  if (values.empty()) {
    out.method = "none (n < 2)";
    return out;
  }
  const double n = static_cast<double>(values.size());
  const double mean = std::accumulate(values.begin(), values.end(), 0.0) / n;
  out.estimate = out.low = out.high = mean;
  if (values.size() < 2) {
    out.method = "none (n < 2)";
    return out;
  }
  double ss = 0;
  for (double v : values) ss += (v - mean) * (v - mean);
  const double se = std::sqrt(ss / (n - 1) / n);
  const double half = StudentT(confidence, out.n - 1) * se;
  out.low = mean - half;
  out.high = mean + half;
  out.method = "t";
  return out;
}

Interval ClusterRatioInterval(const std::vector<double>& events, const std::vector<double>& trials,
                              double confidence) {
  Interval out;
  const size_t runs = std::min(events.size(), trials.size());
  out.n = static_cast<int64_t>(runs);
  const double sum_e = std::accumulate(events.begin(), events.begin() + static_cast<long>(runs), 0.0);
  const double sum_t = std::accumulate(trials.begin(), trials.begin() + static_cast<long>(runs), 0.0);
  if (sum_t <= 0) {
    out.method = "none (no trials)";
    return out;
  }
  const double rate = sum_e / sum_t;
  out.estimate = out.low = out.high = rate;
  if (runs < 2) {
    out.method = "none (n < 2)";
    return out;
  }
  out.method = "cluster-t";
  if (sum_e <= 0) {
    // No run saw an event: the spread between runs is zero and says nothing; the Wilson bound
    // of 0 events in every trial is the honest upper end.
    out.high = WilsonInterval(0, static_cast<int64_t>(sum_t), confidence).high;
    return out;
  }
  // Ratio estimator with the cluster-robust (linearised) variance: residual e_i - rate * t_i.
  const double k = static_cast<double>(runs);
  const double mean_t = sum_t / k;
  double ss = 0;
  for (size_t i = 0; i < runs; ++i) {
    const double r = events[i] - rate * trials[i];
    ss += r * r;
  }
  const double se = std::sqrt(ss / (k - 1) / k) / mean_t;
  const double half = StudentT(confidence, out.n - 1) * se;
  out.low = std::max(0.0, rate - half);
  out.high = rate + half;
  return out;
}

double Quantile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double pos = std::clamp(p, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (pos - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

}  // namespace locklab
