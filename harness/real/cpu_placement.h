// Where the real backend's processes run. The simulator gives the client process and each Redis
// node a CPU of its own (sim/cost_model.h); on a small VM the kernel often runs redis-server on
// the very vCPU of the client that just woke it, so that the two take turns on one CPU and a
// burst of commands costs both sides' time in a row (measured on the 2-vCPU VM: a SET's round
// trip under the retry study's bursts 1.7 ms at the median, 0.2 ms with the two pinned apart).
// The default, split, pins the real runtime's event loop to the first CPU this process may use
// and every redis-server and redis-sentinel locklab starts to the others, as on machines of
// their own; os leaves both to the scheduler (what every real run before the option did).
// With fewer than two CPUs nothing is pinned.
#pragma once

#include <sched.h>

#include <optional>
#include <string>

namespace locklab {

enum class CpuPlacement { kSplit, kOs };

// Process-wide; the CLI sets it (--cpu-placement) before anything starts. Default kSplit.
void SetCpuPlacement(CpuPlacement p);
CpuPlacement GetCpuPlacement();

// The CPUs of a split placement, or nullopt when nothing is pinned (os, or fewer than two CPUs).
struct CpuSplit {
  cpu_set_t loop;     // the real runtime's event loop (and calibrate's own drivers)
  cpu_set_t servers;  // every redis-server and redis-sentinel
  int loop_cpu = 0;
};
std::optional<CpuSplit> PlanCpuSplit();

// One line for reports and profiles: "event loop on CPU 0, redis-servers on CPU 1 (split)",
// "the scheduler's (--cpu-placement os)" or "the scheduler's (1 CPU)".
std::string CpuPlacementText();

// Pins the calling thread to the split's loop CPU while it lives (nothing when there is no
// split); the thread's earlier CPUs come back when it ends.
class LoopCpuPin {
 public:
  LoopCpuPin();
  ~LoopCpuPin();
  LoopCpuPin(const LoopCpuPin&) = delete;
  LoopCpuPin& operator=(const LoopCpuPin&) = delete;

 private:
  bool pinned_ = false;
  cpu_set_t before_;
};

}  // namespace locklab
