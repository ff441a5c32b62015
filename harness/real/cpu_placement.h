// Where the real backend's processes run. The simulator gives the client process and each Redis
// node a CPU of its own (sim/cost_model.h); on a small VM the kernel often runs redis-server on
// the very vCPU of the client that just woke it, so that the two take turns on one CPU and a
// burst of commands costs both sides' time in a row (measured on the 2-vCPU VM: a SET's round
// trip under the retry study's bursts 1.7 ms at the median, 0.2 ms with the two pinned apart).
// The default, split, pins a real run's event loop to one CPU this process may use and every
// redis-server and redis-sentinel the run starts to the others, as on machines of their own;
// each split takes the next CPU for its loop, so that real runs at once (the study's
// --redis-jobs) spread their loops over the CPUs. os leaves everything to the scheduler (what
// every real run before the option did). With fewer than two CPUs nothing is pinned.
#pragma once

#include <sched.h>

#include <optional>
#include <string>

namespace locklab {

enum class CpuPlacement { kSplit, kOs };

// Process-wide; the CLI sets it (--cpu-placement) before anything starts. Default kSplit.
void SetCpuPlacement(CpuPlacement p);
CpuPlacement GetCpuPlacement();

// One run's CPUs: its event loop's (and calibrate's own drivers') and its servers'.
struct CpuSplit {
  cpu_set_t loop;
  cpu_set_t servers;
  int loop_cpu = 0;
};
// A split for one run (the next CPU in turn for its loop), or nullopt when nothing is pinned
// (os, or fewer than two CPUs). Plan once per run and use it for everything the run starts.
std::optional<CpuSplit> PlanCpuSplit();

// One line for reports and profiles: "event loop on CPU 0, redis-servers on CPU 1 (split)",
// "the scheduler's (--cpu-placement os)" or "the scheduler's (1 CPU)".
std::string CpuPlacementText(const std::optional<CpuSplit>& split);

// Pins the calling thread to the split's loop CPU while it lives (nothing without a split);
// the thread's earlier CPUs come back when it ends.
class LoopCpuPin {
 public:
  explicit LoopCpuPin(const std::optional<CpuSplit>& split);
  ~LoopCpuPin();
  LoopCpuPin(const LoopCpuPin&) = delete;
  LoopCpuPin& operator=(const LoopCpuPin&) = delete;

 private:
  bool pinned_ = false;
  cpu_set_t before_;
};

}  // namespace locklab
