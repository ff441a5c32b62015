// The simulator's active expiry (sim/simulator.h, "Active expiry"; the cycle itself is
// Store::ActiveExpireCycle, sim/expire_cycle.h).
//
// A node's cycles are not events: Run() calls RunExpireCycles() before the first event at or
// after the earliest node's next cycle, which runs every cycle due by then, each at its own
// time (the node's wall clock then). Nothing else happened between the previous event and
// these cycles, so the result is the same as if each had been an event of its own, without
// changing the event count or keeping an idle simulation from ending.
#include <algorithm>

#include "sim/simulator_impl.h"

namespace locklab::sim {

void Simulator::StartExpireCycle(int physical) {
  NodeState& node = *nodes_[static_cast<size_t>(physical)];
  // Two draws per start, always (so a node's stream does not depend on what it stores): the
  // seed of its hash order, and the phase of its cron timer in (0, period].
  node.store.SetExpireHashSeed(node.expire_rng.Next());
  const int64_t phase_us = node.expire_rng.Uniform(1, kExpireCyclePeriodUs);
  if (!config_.active_expire) return;
  node.next_expire_us = node.clock.TrueAfterUs(now_us_, phase_us);
  next_expire_us_ = std::min(next_expire_us_, node.next_expire_us);
}

void Simulator::StopExpireCycle(int physical) { nodes_[static_cast<size_t>(physical)]->next_expire_us = kMaxInt64; }

void Simulator::RunExpireCycles() {
  int64_t earliest = kMaxInt64;
  for (size_t n = 0; n < nodes_.size(); ++n) {
    NodeState& node = *nodes_[n];
    // Each step runs a cycle and moves a period on, or moves a paused node's cycle to the end
    // of its pause (then the next step runs it): the steps are bounded by the time passed.
    const int64_t max_steps = 4 * ((now_us_ - std::min(node.next_expire_us, now_us_)) / kExpireCyclePeriodUs + 1);
    for (int64_t step = 0; step < max_steps && node.next_expire_us <= now_us_; ++step) {
      const int64_t t = node.next_expire_us;
      if (t < node.paused_until_us) {  // a stopped server's timer fires when it resumes
        node.next_expire_us = node.paused_until_us;
        continue;
      }
      ExpireCycleAt(static_cast<int>(n), t);
      node.next_expire_us = node.clock.TrueAfterUs(t, kExpireCyclePeriodUs);
    }
    earliest = std::min(earliest, node.next_expire_us);
  }
  next_expire_us_ = earliest;
}

void Simulator::ExpireCycleAt(int physical, int64_t t_us) {
  NodeState& node = *nodes_[static_cast<size_t>(physical)];
  const bool replicate = config_.with_replica && !repl_cut_ && physical == 0;
  expired_keys_.clear();
  node.store.ActiveExpireCycle(node.clock.WallUs(t_us) / 1000, replicate ? &expired_keys_ : nullptr);
  if (!replicate) return;
  // Each deletion reaches the replica repl_delay_us after the cycle, like a write's new state.
  // One already due (the cycle ran late, at a later event) is applied now: no event happened
  // in between, and a due replication may not go into the event queue's past.
  const int64_t due = t_us + config_.repl_delay_us;
  NodeState& replica = *nodes_.back();
  for (const std::string& key : expired_keys_) {
    if (due < now_us_) {
      if (replica.up) replica.store.Apply(key, std::nullopt);
      continue;
    }
    PushRepl(ReplItem{key, std::nullopt, repl_generation_}, due);
  }
}

}  // namespace locklab::sim
