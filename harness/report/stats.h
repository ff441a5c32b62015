// Statistics done once: every rate or proportion locklab reports carries its n and a 95%
// interval, with the method named (the report's "method" strings below).
//
// Which to use:
//  - WilsonInterval: a proportion of independent trials (k of n). Right when one trial's
//    outcome does not make the next one's likelier.
//  - ClusterRatioInterval: a rate whose events cluster, e.g. violations per acquisition, where
//    one long pause makes several violations in one run. The runs (seeds) are the independent
//    units: the rate is sum(events) / sum(trials) over runs, and its interval comes from the
//    spread between runs (ratio estimator, cluster-robust standard error, Student t with
//    runs - 1 degrees of freedom).
//  - MeanInterval: a per-run figure (throughput, p99 latency) averaged over runs: Student t.
// All intervals are clamped to what the quantity can be (a proportion to [0, 1], a rate to
// [0, inf)). None of them throws; degenerate inputs give the documented fallbacks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace locklab {

struct Interval {
  double estimate = 0;
  double low = 0;
  double high = 0;
  int64_t n = 0;         // trials (Wilson) or runs (over seeds)
  std::string method;    // "wilson", "cluster-t", "t", "none (n < 2)"
};

inline constexpr double kConfidence95 = 0.95;

// k successes of n independent trials (0 <= k <= n). n == 0: estimate 0, interval [0, 1].
Interval WilsonInterval(int64_t k, int64_t n, double confidence = kConfidence95);

// events[i] of trials[i] in run i (same length). With one run, or when every run has the same
// rate, the interval is that one rate: method says "none (n < 2)" or is "cluster-t" with a
// zero width. When all trials are 0: estimate 0, interval [0, 0], method "none (no trials)".
// When every run saw 0 events, the upper end falls back to the Wilson bound of 0 of
// sum(trials) (a cluster t interval would claim certainty).
Interval ClusterRatioInterval(const std::vector<double>& events, const std::vector<double>& trials,
                              double confidence = kConfidence95);

// The mean of per-run values with a Student t interval (runs - 1 degrees of freedom).
// Fewer than 2 values: the interval is the value itself, method "none (n < 2)".
Interval MeanInterval(const std::vector<double>& values, double confidence = kConfidence95);

// The two-sided Student t quantile: t such that P(|T| <= t) = confidence, df >= 1.
double StudentT(double confidence, int64_t df);
// The standard normal z with P(|Z| <= z) = confidence.
double NormalZ(double confidence);

// The p-th quantile (0..1) of `values` by linear interpolation between order statistics
// (Hyndman and Fan's type 7, numpy's default). Empty: 0.
double Quantile(std::vector<double> values, double p);

}  // namespace locklab
