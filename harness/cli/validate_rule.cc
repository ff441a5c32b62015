#include "harness/cli/validate_rule.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace locklab {
namespace {

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// The standard error of the mean of `values` (n >= 2).
double StandardErrorOfMean(const std::vector<double>& values) {
  const double n = static_cast<double>(values.size());
  const double mean = std::accumulate(values.begin(), values.end(), 0.0) / n;
  double ss = 0;
  for (double v : values) ss += (v - mean) * (v - mean);
  return std::sqrt(ss / (n - 1) / n);
}

// Fieller: the set of rho with (m1 - rho m2)^2 <= t^2 (s1^2 + rho^2 s2^2), a bounded interval
// only when m2^2 > t^2 s2^2 (real Redis's mean is distinguishable from 0).
bool FiellerInterval(const SeedSample& sim, const SeedSample& real, double* low, double* high) {
  const double m1 = sim.interval.estimate, m2 = real.interval.estimate;
  const auto se = [](const SeedSample& x) { return x.cluster_se >= 0 ? x.cluster_se : StandardErrorOfMean(x.values); };
  const auto df_of = [](const SeedSample& x) { return x.cluster_df >= 0 ? x.cluster_df : x.interval.n - 1; };
  const double s1 = se(sim), s2 = se(real);
  const int64_t df = std::max<int64_t>(1, std::min(df_of(sim), df_of(real)));
  const double t = StudentT(kConfidence95, df);
  const double a = m2 * m2 - t * t * s2 * s2;
  if (!(a > 0)) return false;
  const double b = -2 * m1 * m2;
  const double c = m1 * m1 - t * t * s1 * s1;
  const double disc = std::max(0.0, b * b - 4 * a * c);
  *low = std::max(0.0, (-b - std::sqrt(disc)) / (2 * a));
  *high = std::max(0.0, (-b + std::sqrt(disc)) / (2 * a));
  return true;
}

Agreement JudgeMean(const SeedSample& sim, const SeedSample& real) {
  const double s = sim.interval.estimate, r = real.interval.estimate;
  const auto [min_it, max_it] = std::minmax_element(real.values.begin(), real.values.end());
  const double low = std::min(r / kAgreeMeanFactor, *min_it);
  const double high = std::max(r * kAgreeMeanFactor, *max_it);
  // s >= r / 1.25 written as s * 1.25 >= r, so that the band's edge is exact.
  const bool above_low = s * kAgreeMeanFactor >= r || s >= *min_it;
  const bool below_high = s <= r * kAgreeMeanFactor || s <= *max_it;
  const std::string band = "sim " + Num(s) + " vs band [" + Num(low) + ", " + Num(high) + "] around real " + Num(r);
  return {above_low && below_high ? "agree" : "disagree", band};
}

Agreement JudgeFailed(const SeedSample& sim, const SeedSample& real, int64_t requests_per_run) {
  const double diff = std::fabs(sim.interval.estimate - real.interval.estimate);
  const double limit = kAgreeFailedFraction * static_cast<double>(requests_per_run);
  return {diff <= limit ? "agree" : "disagree",
          "|sim - real| = " + Num(diff) + " vs 5% of " + std::to_string(requests_per_run) + " requests = " + Num(limit)};
}

Agreement JudgeRate(const SeedSample& sim, const SeedSample& real) {
  const Interval &a = sim.interval, &b = real.interval;
  const bool overlap = a.low <= b.high && b.low <= a.high;
  return {overlap ? "agree" : "disagree", "sim [" + Num(a.low) + ", " + Num(a.high) + "] " +
                                              (overlap ? "overlaps" : "does not overlap") + " real [" + Num(b.low) +
                                              ", " + Num(b.high) + "]"};
}

}  // namespace

SeedSample MeanSample(const std::vector<double>& values) {
  SeedSample s;
  s.values = values;
  s.interval = MeanInterval(values);
  s.interval.low = std::max(0.0, s.interval.low);
  s.has_data = !values.empty();
  return s;
}

SeedSample RateSample(const std::vector<double>& events, const std::vector<double>& trials) {
  SeedSample s;
  s.interval = ClusterRatioInterval(events, trials);
  const size_t runs = std::min(events.size(), trials.size());
  double sum_trials = 0;
  for (size_t i = 0; i < runs; ++i) {
    s.values.push_back(trials[i] > 0 ? events[i] / trials[i] : 0);
    sum_trials += trials[i];
  }
  s.has_data = sum_trials > 0;
  return s;
}

namespace {

// Per sitting (in order of first appearance): the sum of `values` and the number of them.
void SumBySitting(const std::vector<double>& values, const std::vector<int>& sitting, std::vector<double>* sums,
                  std::vector<double>* counts) {
  std::vector<int> seen;
  for (size_t i = 0; i < values.size() && i < sitting.size(); ++i) {
    const size_t k = static_cast<size_t>(std::find(seen.begin(), seen.end(), sitting[i]) - seen.begin());
    if (k == seen.size()) {
      seen.push_back(sitting[i]);
      sums->push_back(0);
      counts->push_back(0);
    }
    (*sums)[k] += values[i];
    (*counts)[k] += 1;
  }
}

}  // namespace

SeedSample PooledMeanSample(const std::vector<double>& values, const std::vector<int>& sitting) {
  std::vector<double> sums, counts;
  SumBySitting(values, sitting, &sums, &counts);
  const size_t g = sums.size();
  if (g < 2) return MeanSample(values);
  const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
  const double mean = std::accumulate(sums.begin(), sums.end(), 0.0) / total;
  double ss = 0;  // CR1: the sittings' residual sums, squared
  for (size_t k = 0; k < g; ++k) ss += (sums[k] - mean * counts[k]) * (sums[k] - mean * counts[k]);
  const double gd = static_cast<double>(g);
  SeedSample s;
  s.values = values;
  s.has_data = true;
  s.cluster_se = std::sqrt(gd / (gd - 1) * ss) / total;
  s.cluster_df = static_cast<int64_t>(g) - 1;
  const double half = StudentT(kConfidence95, s.cluster_df) * s.cluster_se;
  s.interval = Interval{mean, std::max(0.0, mean - half), mean + half, static_cast<int64_t>(values.size()),
                        "cluster-t over " + std::to_string(g) + " sittings"};
  return s;
}

SeedSample PooledRateSample(const std::vector<double>& events, const std::vector<double>& trials,
                            const std::vector<int>& sitting) {
  std::vector<double> event_sums, trial_sums, counts, unused;
  SumBySitting(events, sitting, &event_sums, &counts);
  SumBySitting(trials, sitting, &trial_sums, &unused);
  SeedSample s = RateSample(events, trials);
  if (event_sums.size() < 2) return s;
  const int64_t runs = s.interval.n;
  s.interval = ClusterRatioInterval(event_sums, trial_sums);
  s.interval.method += " over " + std::to_string(event_sums.size()) + " sittings";
  s.interval.n = runs;
  return s;
}

SimRealRatio SimOverReal(MetricKind kind, const SeedSample& sim, const SeedSample& real) {
  SimRealRatio r;
  if (!sim.has_data || !real.has_data) {
    r.method = "none (a backend has no data)";
    return r;
  }
  if (real.interval.estimate == 0) {
    r.method = "none (real estimate is 0)";
    return r;
  }
  r.estimate = sim.interval.estimate / real.interval.estimate;
  r.method = "ratio of estimates";
  if (kind == MetricKind::kRate) return r;
  if (sim.interval.n < 2 || real.interval.n < 2) {
    r.method = "ratio of means (n < 2: no interval)";
    return r;
  }
  double low = 0, high = 0;
  if (!FiellerInterval(sim, real, &low, &high)) {
    r.method = "ratio of means (Fieller interval unbounded: real mean not distinguishable from 0)";
    return r;
  }
  r.low = low;
  r.high = high;
  r.method = real.cluster_df >= 0 ? "fieller (t, min(n - 1, sittings - 1) df)" : "fieller (t, min(n) - 1 df)";
  return r;
}

Agreement Judge(MetricKind kind, const SeedSample& sim, const SeedSample& real, int64_t requests_per_run) {
  if (!sim.has_data || !real.has_data)
    return {"n/a", std::string(sim.has_data ? "real Redis" : "the simulator") + " has no data"};
  switch (kind) {
    case MetricKind::kMean:
      return JudgeMean(sim, real);
    case MetricKind::kFailed:
      return JudgeFailed(sim, real, requests_per_run);
    case MetricKind::kRate:
      return JudgeRate(sim, real);
  }
  return {"n/a", "unknown metric kind"};
}

std::string AgreementRuleText() {
  return "means (throughput, latencies, commands and client CPU per acquisition, acquisitions): agree when the "
         "simulator's mean "
         "is within x1.25 of real Redis's mean or inside the range of real Redis's own seeds, whichever is wider "
         "(bounds inclusive); failed requests: agree when the two means differ by at most 5% of one run's requests; "
         "rates (violations or lost updates per acquisition): agree when the two 95% intervals overlap; n/a when "
         "either backend has no value";
}

}  // namespace locklab
