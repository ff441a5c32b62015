// Machine stalls (sim/cost_model.h, StallCosts; simulator.h, "Machine stalls").
//
// Like the expire cycles, stalls are not events: Run() calls RunStalls() before the first event
// at or after the earliest CPU's next stall, which applies every stall due by then, each at its
// own time. Nothing happened on the CPU between the previous event and them, so the outcome is
// that of an event per stall, without adding events or keeping an idle simulation from ending.
#include <algorithm>

#include "sim/simulator_impl.h"

namespace locklab::sim {

namespace {
constexpr uint64_t kStallStreamSalt = 0x57a11057a11057a1ULL;  // the stalls' stream: seed ^ this
}  // namespace

// One slot per client CPU (cpu_busy_ns_), then one per physical node; each CPU's first stall is
// drawn here, in that order, so the stream does not depend on what the run does.
void Simulator::InitStalls() {
  const StallCosts& m = config_.cost.machine;
  if (m.per_s <= 0 || m.length_us.points.empty()) return;
  stall_rng_ = Rng(config_.seed ^ kStallStreamSalt);
  stall_next_us_.assign(cpu_busy_ns_.size() + nodes_.size(), 0);
  for (int64_t& t : stall_next_us_) {
    t = NextStallAfterUs(0);
    next_stall_us_ = std::min(next_stall_us_, t);
  }
}

int64_t Simulator::NextStallAfterUs(int64_t t_us) {
  const double gap_us = stall_rng_.Exponential(1e6 / config_.cost.machine.per_s);
  return SaturatingAdd(t_us, std::max<int64_t>(1, static_cast<int64_t>(gap_us)));
}

// The CPU is taken away for the stall's length from t, or from the end of the step under way at
// t (busy-until: a step that has begun is not cut). A stall on an idle CPU that is over before
// now changes nothing (its idle time goes on).
void Simulator::StallCpu(int64_t* busy_ns, int64_t t_us, int64_t now_ns) {
  const int64_t t_ns = t_us * 1000;
  const int64_t length_ns = Ns(config_.cost.machine.length_us.AtUs(stall_rng_.Unit()));
  if (*busy_ns <= t_ns && t_ns + length_ns <= now_ns) return;
  *busy_ns = std::max(*busy_ns, t_ns) + length_ns;
}

// Each step applies one stall and moves that CPU's next one at least 1 µs on: bounded by the
// time passed.
void Simulator::RunStalls() {
  const int64_t now_ns = now_us_ * 1000;
  const size_t clients = cpu_busy_ns_.size();
  int64_t earliest = kMaxInt64;
  for (size_t i = 0; i < stall_next_us_.size(); ++i) {
    int64_t& next = stall_next_us_[i];
    while (next <= now_us_) {
      if (i < clients) {
        StallCpu(&cpu_busy_ns_[i], next, now_ns);
      } else if (NodeState& node = *nodes_[i - clients]; node.up) {
        StallCpu(&node.busy_until_ns, next, now_ns);
      }
      next = NextStallAfterUs(next);
    }
    earliest = std::min(earliest, next);
  }
  next_stall_us_ = earliest;
}

}  // namespace locklab::sim
