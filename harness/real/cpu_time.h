// CPU time of this process or of the calling thread (getrusage): user + system, µs. What the
// real runtime reports as its clients' CPU and what `locklab calibrate` measures with.
#pragma once

#include <sys/resource.h>

namespace locklab {

// What getrusage says of `who` (RUSAGE_SELF: the process; RUSAGE_THREAD: the calling thread):
// user + system CPU in µs, and voluntary context switches (how many times it blocked: for a
// loop waiting in epoll_wait, its wake-ups from idle). Both < 0 when the kernel does not say.
struct Usage {
  double cpu_us = -1;
  double blocks = -1;
};
inline Usage ReadUsage(int who) {
  rusage ru{};
  if (getrusage(who, &ru) != 0) return Usage{};
  auto us = [](const timeval& t) { return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_usec); };
  return Usage{us(ru.ru_utime) + us(ru.ru_stime), static_cast<double>(ru.ru_nvcsw)};
}

inline double CpuUs(int who = RUSAGE_SELF) { return ReadUsage(who).cpu_us; }
inline double ThreadBlocks() { return ReadUsage(RUSAGE_THREAD).blocks; }

}  // namespace locklab
