// Machine stalls (calibrate_internal.h, MachineStalls): how often and for how long the machine
// takes a CPU away from a thread that wants it all the time.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include "harness/real/calibrate_internal.h"

namespace locklab::calib {
namespace {

// Gaps kept per thread: a stall is at least threshold_us long, so `seconds` of probing hold at
// most seconds * 1e6 / threshold_us of them; this caps a pathological machine.
constexpr size_t kMaxGapsPerThread = 1'000'000;

struct Probe {
  std::vector<double> gaps_us;
  std::string error;
};

// Busy on `cpu` (-1: wherever the scheduler puts it) for `seconds`, reading the steady clock;
// every gap of at least threshold_us between two readings is kept.
void RunProbe(int cpu, double seconds, double threshold_us, Probe* out) {
  if (cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (int e = pthread_setaffinity_np(pthread_self(), sizeof set, &set); e != 0) {
      out->error = "cannot pin a probe to CPU " + std::to_string(cpu) + ": " + std::strerror(e);
      return;
    }
  }
  using Clock = std::chrono::steady_clock;
  const auto threshold = std::chrono::duration<double, std::micro>(threshold_us);
  Clock::time_point prev = Clock::now();
  const Clock::time_point end = prev + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  while (prev < end) {
    const Clock::time_point t = Clock::now();
    if (t - prev >= threshold && out->gaps_us.size() < kMaxGapsPerThread)
      out->gaps_us.push_back(std::chrono::duration<double, std::micro>(t - prev).count());
    prev = t;
  }
}

}  // namespace

Status MachineStalls(const std::vector<int>& cpus, double seconds, double threshold_us, MachineSamples* out) {
  const std::vector<int> where = cpus.empty() ? std::vector<int>{-1} : cpus;
  std::vector<Probe> probes(where.size());
  {
    std::vector<std::jthread> threads;
    for (size_t i = 0; i < where.size(); ++i)
      threads.emplace_back(RunProbe, where[i], seconds, threshold_us, &probes[i]);
  }  // joined
  for (const Probe& p : probes) {
    if (!p.error.empty()) return Status::Failed(p.error);
    out->stall_us.insert(out->stall_us.end(), p.gaps_us.begin(), p.gaps_us.end());
  }
  out->probed_s += seconds * static_cast<double>(where.size());
  out->cpus = static_cast<int>(where.size());
  return Status::Ok();
}

}  // namespace locklab::calib
