// Clock: one process's (client's or node's) view of time, as a function of true time.
//
//   monotonic = true * (1 + drift_ppm / 1e6)              never jumps
//   wall      = epoch + offset + monotonic + jumps         what NTP-less hosts show
//
// The simulator's epoch is a fixed date (2026-01-01T00:00:00Z) so that reports replay byte for
// byte; the real runtime uses the same model with the host's clocks (WallFromEpochUs).
#pragma once

#include <cstdint>

namespace locklab::sim {

inline constexpr int64_t kSimEpochUs = 1767225600LL * 1000000;

struct Clock {
  int64_t offset_us = 0;
  double drift_ppm = 0;
  int64_t jumps_us = 0;  // sum of the jumps applied so far

  int64_t MonotonicUs(int64_t true_us) const {
    if (drift_ppm == 0) return true_us;  // what the product gives for no drift, without the division
    return true_us + static_cast<int64_t>(static_cast<double>(true_us) * drift_ppm / 1e6);
  }
  int64_t WallUs(int64_t true_us) const { return WallFromEpochUs(kSimEpochUs, true_us); }
  // The wall clock over another epoch: the real runtime passes CLOCK_REALTIME minus true time,
  // so that its clients' wall clocks run with the host's.
  int64_t WallFromEpochUs(int64_t epoch_us, int64_t true_us) const {
    return epoch_us + offset_us + MonotonicUs(true_us) + jumps_us;
  }
  // True time at which `mono_us` more of this clock have passed since true time `true_now_us`.
  int64_t TrueAfterUs(int64_t true_now_us, int64_t mono_us) const {
    return TrueForMonotonicUs(MonotonicUs(true_now_us) + mono_us);
  }
  // True time at which the monotonic clock reads `mono_us` (inverse of MonotonicUs, rounded up).
  int64_t TrueForMonotonicUs(int64_t mono_us) const {
    if (drift_ppm == 0) return mono_us;
    double t = static_cast<double>(mono_us) / (1.0 + drift_ppm / 1e6);
    int64_t ti = static_cast<int64_t>(t);
    while (MonotonicUs(ti) < mono_us) ++ti;  // at most a step or two
    return ti;
  }
};

}  // namespace locklab::sim
