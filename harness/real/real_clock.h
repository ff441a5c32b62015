// The machine's clocks in microseconds, for the real-Redis runtime and server management
// (never for algorithms: they read clocks only through Env).
#pragma once

#include <time.h>

#include <cstdint>

namespace locklab {

inline int64_t ClockUs(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000;
}
inline int64_t MonotonicNowUs() { return ClockUs(CLOCK_MONOTONIC); }
inline int64_t RealtimeNowUs() { return ClockUs(CLOCK_REALTIME); }

}  // namespace locklab
