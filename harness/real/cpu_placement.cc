#include "harness/real/cpu_placement.h"

#include <atomic>

namespace locklab {
namespace {

std::atomic<CpuPlacement> g_placement{CpuPlacement::kSplit};

}  // namespace

void SetCpuPlacement(CpuPlacement p) { g_placement.store(p); }
CpuPlacement GetCpuPlacement() { return g_placement.load(); }

std::optional<CpuSplit> PlanCpuSplit() {
  if (GetCpuPlacement() != CpuPlacement::kSplit) return std::nullopt;
  // The CPUs this process could use when first asked (before any thread was pinned).
  static const std::optional<cpu_set_t> kAllowed = []() -> std::optional<cpu_set_t> {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return std::nullopt;
    return set;
  }();
  if (!kAllowed || CPU_COUNT(&*kAllowed) < 2) return std::nullopt;
  const cpu_set_t& allowed = *kAllowed;
  CpuSplit s;
  CPU_ZERO(&s.loop);
  s.servers = allowed;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {  // bounded by CPU_SETSIZE
    if (!CPU_ISSET(cpu, &allowed)) continue;
    CPU_SET(cpu, &s.loop);
    CPU_CLR(cpu, &s.servers);
    s.loop_cpu = cpu;
    break;
  }
  return s;
}

std::string CpuPlacementText() {
  if (GetCpuPlacement() == CpuPlacement::kOs) return "the scheduler's (--cpu-placement os)";
  const std::optional<CpuSplit> s = PlanCpuSplit();
  if (!s) return "the scheduler's (1 CPU)";
  std::string servers;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)  // bounded by CPU_SETSIZE
    if (CPU_ISSET(cpu, &s->servers)) servers += (servers.empty() ? "" : ",") + std::to_string(cpu);
  return "event loop on CPU " + std::to_string(s->loop_cpu) + ", redis-servers on CPU " + servers + " (split)";
}

LoopCpuPin::LoopCpuPin() {
  const std::optional<CpuSplit> s = PlanCpuSplit();
  if (!s || sched_getaffinity(0, sizeof before_, &before_) != 0) return;
  pinned_ = sched_setaffinity(0, sizeof s->loop, &s->loop) == 0;
}

LoopCpuPin::~LoopCpuPin() {
  if (pinned_) sched_setaffinity(0, sizeof before_, &before_);
}

}  // namespace locklab
