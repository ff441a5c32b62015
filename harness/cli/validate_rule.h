// The agreement rule of `locklab validate`: whether the simulator's figure for one metric agrees
// with real Redis's, each measured over several seeds. Pure functions on numbers (no runs), so
// the rule can be tested on hand-made values.
//
// The rule (also in AgreementRuleText(), the help and the README):
//  - means (throughput, latencies, commands and client CPU per acquisition, acquisitions): agree when the
//    simulator's mean lies in the wider of two bands around real Redis: [real/1.25, real*1.25]
//    and [min, max] of real Redis's own per-seed values (their union; bounds inclusive);
//  - failed requests (a mean count per run): agree when |sim mean - real mean| <= 5% of the
//    requests of one run;
//  - rates (violations or lost updates per acquisition): agree when the two 95% intervals
//    overlap (bounds inclusive);
//  - n/a when either backend has no value (no completed run gave one; for rates: no
//    acquisition at all).
// The ratio sim/real is reported beside the verdict but does not decide it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/report/stats.h"

namespace locklab {

inline constexpr double kAgreeMeanFactor = 1.25;     // means: within x1.25 of real Redis
inline constexpr double kAgreeFailedFraction = 0.05;  // failed requests: within 5% of requests

enum class MetricKind {
  kMean,    // a per-run figure averaged over seeds (Student t)
  kFailed,  // failed requests per run, averaged over seeds (Student t)
  kRate,    // events per acquisition, pooled over seeds (cluster-robust ratio interval)
};

// One backend's figures for one metric over its seeds.
struct SeedSample {
  Interval interval;           // n = runs that gave a value
  std::vector<double> values;  // one per such run: the figure, or events/trials for a rate
  bool has_data = false;       // false: no run gave a value (or, for a rate, no trials)
  // Pooled sittings (PooledMeanSample): the mean's standard error over sittings and its
  // degrees of freedom (sittings - 1), which Fieller's ratio then uses; -1: over runs.
  double cluster_se = -1;
  int64_t cluster_df = -1;
};

// kMean / kFailed: MeanInterval of `values`, the low end clamped at 0 (every metric is >= 0).
SeedSample MeanSample(const std::vector<double>& values);
// kRate: ClusterRatioInterval(events, trials); values[i] = events[i] / trials[i] (0 when
// trials[i] == 0). has_data only when some run had trials.
SeedSample RateSample(const std::vector<double>& events, const std::vector<double>& trials);
// Runs recorded in several sittings of the machine, sitting[i] the sitting of values[i] (real
// Redis's figures move more between sittings than between the seeds of one): the mean of every
// run with a cluster-robust Student t interval over the sittings (sittings - 1 df, method
// "cluster-t over sittings"), the low end clamped at 0; one sitting: MeanSample.
SeedSample PooledMeanSample(const std::vector<double>& values, const std::vector<int>& sitting);
// A rate's events and trials, every run of a sitting summed: ClusterRatioInterval over the
// sittings; values stay one per run.
SeedSample PooledRateSample(const std::vector<double>& events, const std::vector<double>& trials,
                            const std::vector<int>& sitting);

// sim / real. `low`/`high` are set only when an honest interval exists:
//  - kMean / kFailed with n >= 2 on both sides: Fieller's interval for the ratio of two
//    independent means, Student t with min(n_sim, n_real) - 1 degrees of freedom (conservative;
//    a pooled side counts its sittings, with its cluster standard error);
//    unbounded (and so not given) when real Redis's mean is not distinguishable from 0;
//  - otherwise only the ratio of the estimates.
// `estimate` is empty when real Redis's estimate is 0 or either side has no data.
struct SimRealRatio {
  std::optional<double> estimate, low, high;
  std::string method;
};
SimRealRatio SimOverReal(MetricKind kind, const SeedSample& sim, const SeedSample& real);

struct Agreement {
  std::string verdict;  // "agree" | "disagree" | "n/a"
  std::string why;      // one line: the band or intervals compared
};
// `requests_per_run` is used by kFailed only.
Agreement Judge(MetricKind kind, const SeedSample& sim, const SeedSample& real, int64_t requests_per_run);

// The rule in words, one entry per kind (JSON "rule", help text).
std::string AgreementRuleText();

}  // namespace locklab
