#include "harness/real/cpu_placement.h"

#include <atomic>

namespace locklab {
namespace {

std::atomic<CpuPlacement> g_placement{CpuPlacement::kSplit};
std::atomic<unsigned> g_next_loop{0};  // which allowed CPU the next split's loop takes

// The CPUs this process could use when first asked (before any thread was pinned).
const std::optional<cpu_set_t>& Allowed() {
  static const std::optional<cpu_set_t> kAllowed = []() -> std::optional<cpu_set_t> {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return std::nullopt;
    return set;
  }();
  return kAllowed;
}

}  // namespace

void SetCpuPlacement(CpuPlacement p) { g_placement.store(p); }
CpuPlacement GetCpuPlacement() { return g_placement.load(); }

std::optional<CpuSplit> PlanCpuSplit() {
  const std::optional<cpu_set_t>& allowed = Allowed();
  if (GetCpuPlacement() != CpuPlacement::kSplit || !allowed || CPU_COUNT(&*allowed) < 2) return std::nullopt;
  const int turn = static_cast<int>(g_next_loop.fetch_add(1) % static_cast<unsigned>(CPU_COUNT(&*allowed)));
  CpuSplit s;
  CPU_ZERO(&s.loop);
  s.servers = *allowed;
  for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE; ++cpu) {  // bounded by CPU_SETSIZE
    if (!CPU_ISSET(cpu, &*allowed) || seen++ != turn) continue;
    CPU_SET(cpu, &s.loop);
    CPU_CLR(cpu, &s.servers);
    s.loop_cpu = cpu;
    break;
  }
  return s;
}

std::string CpuPlacementText(const std::optional<CpuSplit>& split) {
  if (GetCpuPlacement() == CpuPlacement::kOs) return "the scheduler's (--cpu-placement os)";
  if (!split) return "the scheduler's (1 CPU)";
  std::string servers;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)  // bounded by CPU_SETSIZE
    if (CPU_ISSET(cpu, &split->servers)) servers += (servers.empty() ? "" : ",") + std::to_string(cpu);
  return "event loop on CPU " + std::to_string(split->loop_cpu) + ", redis-servers on CPU " + servers + " (split)";
}

LoopCpuPin::LoopCpuPin(const std::optional<CpuSplit>& split) {
  if (!split || sched_getaffinity(0, sizeof before_, &before_) != 0) return;
  pinned_ = sched_setaffinity(0, sizeof split->loop, &split->loop) == 0;
}

LoopCpuPin::~LoopCpuPin() {
  if (pinned_) sched_setaffinity(0, sizeof before_, &before_);
}

}  // namespace locklab
