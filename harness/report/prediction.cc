#include "harness/report/prediction.h"

#include <algorithm>

namespace locklab {
namespace {

// splitmix64: small, fast and the same on every platform (std distributions are not).
struct SplitMix {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) by multiply-shift (Lemire); n is far below 2^32 here, so the bias is nil.
  size_t Below(size_t n) { return static_cast<size_t>((static_cast<unsigned __int128>(Next()) * n) >> 64); }
};

}  // namespace

Prediction PredictBlock(const std::vector<double>& events, const std::vector<double>& trials, int64_t block_runs,
                        int64_t draws, uint64_t seed, double confidence) {
  Prediction p;
  const size_t runs = std::min(events.size(), trials.size());
  p.block_runs = block_runs;
  p.reference_runs = static_cast<int64_t>(runs);
  double sum_e = 0, sum_t = 0;
  for (size_t i = 0; i < runs; ++i) {
    sum_e += events[i];
    sum_t += trials[i];
  }
  if (block_runs < 1 || draws < 1 || !(sum_t > 0)) return p;
  const double full_rate = sum_e / sum_t;
  p.valid = true;
  p.draws = draws;
  SplitMix rng{seed};
  std::vector<double> pooled, be, bt;
  pooled.reserve(static_cast<size_t>(draws));
  be.resize(static_cast<size_t>(block_runs));
  bt.resize(static_cast<size_t>(block_runs));
  int64_t covered = 0;
  for (int64_t d = 0; d < draws; ++d) {
    double e = 0, t = 0;
    for (size_t k = 0; k < be.size(); ++k) {
      const size_t i = rng.Below(runs);
      be[k] = events[i];
      bt[k] = trials[i];
      e += events[i];
      t += trials[i];
    }
    pooled.push_back(t > 0 ? e / t : 0.0);
    const Interval ci = ClusterRatioInterval(be, bt, confidence);
    if (ci.low <= full_rate && full_rate <= ci.high) ++covered;
  }
  p.low = Quantile(pooled, (1 - confidence) / 2);
  p.high = Quantile(pooled, (1 + confidence) / 2);
  const auto out = std::count_if(pooled.begin(), pooled.end(), [&](double r) { return r < p.low || r > p.high; });
  p.outside = static_cast<double>(out) / static_cast<double>(draws);
  p.cluster_t_coverage = static_cast<double>(covered) / static_cast<double>(draws);
  return p;
}

bool WithinPrediction(const Prediction& p, double rate) { return p.valid && p.low <= rate && rate <= p.high; }

}  // namespace locklab
