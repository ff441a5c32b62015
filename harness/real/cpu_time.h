// CPU time of this process or of the calling thread (getrusage): user + system, µs. What the
// real runtime reports as its clients' CPU and what `locklab calibrate` measures with.
#pragma once

#include <sys/resource.h>

namespace locklab {

// RUSAGE_SELF (the process) or RUSAGE_THREAD (the calling thread); < 0 when the kernel does not say.
inline double CpuUs(int who = RUSAGE_SELF) {
  rusage ru{};
  if (getrusage(who, &ru) != 0) return -1;
  auto us = [](const timeval& t) { return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_usec); };
  return us(ru.ru_utime) + us(ru.ru_stime);
}

// Voluntary context switches of the calling thread: how many times it blocked (for a loop
// waiting in epoll_wait, its wake-ups from idle); < 0 when the kernel does not say.
inline double ThreadBlocks() {
  rusage ru{};
  if (getrusage(RUSAGE_THREAD, &ru) != 0) return -1;
  return static_cast<double>(ru.ru_nvcsw);
}

}  // namespace locklab
