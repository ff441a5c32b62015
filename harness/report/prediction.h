// What a small block of runs should show, predicted from many runs of the same cell: the
// simulator's 500 seeds predict what real Redis's 4 (make run) or 20 seeds may give.
//
// Why not "the two 95% intervals overlap": a rate whose events come in large bursts (lost
// updates around a pause) has a skewed spread over seeds; most seeds lose little, a few lose
// much. A cluster-t interval over 4 such seeds covers the true rate far less often than 95%
// (gc-pause damage: 80%, measured by this module's `cluster_t_coverage`), so the simulator's own
// 4-seed block misses its 500-seed interval in about 1 draw in 6. The prediction below uses the
// whole spread instead: draw `block_runs` of the reference runs at random (with replacement),
// pool them (sum of events / sum of trials), repeat `draws` times, and keep the central 95%.
// A block from the same distribution falls outside it about 5% of the time, whatever the skew.
//
// Deterministic: the draws come from a fixed generator seeded by `seed` (splitmix64), so the
// same runs give the same prediction on every machine and --jobs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/report/stats.h"

namespace locklab {

inline constexpr int64_t kPredictionDraws = 10000;

struct Prediction {
  int64_t block_runs = 0;  // runs per predicted block (e.g. real Redis's seeds)
  int64_t reference_runs = 0;
  int64_t draws = 0;
  double low = 0, high = 0;         // type-7 quantiles of the pooled rate at 2.5% and 97.5%
  double outside = 0;               // share of draws outside [low, high]: a disagreement by chance
  double cluster_t_coverage = 0;    // share of draws whose cluster-t interval holds the pooled
                                    // rate of all reference runs (1 when all of them saw 0)
  std::string method = "resampled runs";
  bool valid = false;               // false: no reference run had trials, or block_runs < 1
};

// events[i] of trials[i] in reference run i. Runs without trials are kept (they pool as 0 of 0).
Prediction PredictBlock(const std::vector<double>& events, const std::vector<double>& trials, int64_t block_runs,
                        int64_t draws = kPredictionDraws, uint64_t seed = 1, double confidence = kConfidence95);

// Whether a block's pooled rate lies within the prediction (bounds inclusive). An invalid
// prediction holds nothing.
bool WithinPrediction(const Prediction& p, double rate);

}  // namespace locklab
