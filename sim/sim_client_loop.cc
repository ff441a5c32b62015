// Client passes (sim/cost_model.h, LoopCosts::client_passes): a client process's event loop
// handles its events in passes, as libevent's event_base_loop does in the real runtime: it polls
// (epoll_wait), runs the callbacks of the sockets that were ready, then those of the timers
// that were due, and only then polls again.
#include <algorithm>
#include <utility>

#include "sim/simulator_impl.h"

namespace locklab::sim {

void Simulator::QueueClientPass(size_t cpu, bool timer) {
  ClientLoop& loop = client_loops_[cpu];
  const int64_t now_ns = now_us_ * 1000;
  if (loop.queued) {  // the queued pass takes it, unless a socket wakes the loop sooner
    if (loop.timer_wake && !timer) WakeForSocket(cpu, now_ns);
    return;
  }
  loop.queued = true;
  const int64_t busy_ns = cpu_busy_ns_[cpu];
  if (busy_ns > now_ns) {  // still writing what it sent: it polls once done
    Push(CeilUs(busy_ns), kClientPass, static_cast<int32_t>(cpu), loop.gen);
    return;
  }
  // Asleep in epoll_wait: it wakes late by how long it idled, and the wake-up's own CPU
  // (ClientCosts::wake_cpu_us) is spent when the pass is done (StepClientPass).
  const bool socket = config_.cost.loop.socket_wakes && !timer;
  const int64_t late_ns = WakeFromIdleNs(cpu, now_ns, socket);
  loop.idle_since_ns = busy_ns;
  loop.timer_wake = config_.cost.loop.socket_wakes && !socket && late_ns > 0;
  cpu_busy_ns_[cpu] = now_ns + late_ns;  // the pass begins when the process runs again
  Push(CeilUs(cpu_busy_ns_[cpu]), kClientPass, static_cast<int32_t>(cpu), loop.gen);
}

// epoll_wait returns for the socket after its own wake-up when that comes before the timer's;
// the pass queued for the timer is then stale (its generation is passed).
void Simulator::WakeForSocket(size_t cpu, int64_t now_ns) {
  ClientLoop& loop = client_loops_[cpu];
  const double idle_us = static_cast<double>(now_ns - loop.idle_since_ns) / 1000.0;
  const int64_t wake_ns = now_ns + Ns(wake_rows_.SocketLateUs(idle_us, cost_rng_.Unit()));
  if (wake_ns >= cpu_busy_ns_[cpu]) return;
  cpu_busy_ns_[cpu] = wake_ns;
  loop.timer_wake = false;
  Push(CeilUs(wake_ns), kClientPass, static_cast<int32_t>(cpu), ++loop.gen);
}

void Simulator::OnClientPass(size_t cpu, uint64_t gen) {
  ClientLoop& loop = client_loops_[cpu];
  if (gen != loop.gen) return;  // a socket woke the loop sooner (WakeForSocket)
  loop.timer_wake = false;
  loop.queued = false;
  loop.running = true;
  ++loop_passes_;
  loop.next = 0;
  // Sockets first, in the order they became ready; then the timers that were due, earliest
  // first (they arrived at their due times), as classified when they arrived. Swapped, not
  // copied: `arrived` keeps the emptied pass vectors' capacity.
  for (size_t k : {kSockets, kTimers}) {
    loop.pass[k].clear();
    std::swap(loop.pass[k], loop.arrived[k]);
  }
  StepClientPass(cpu);
}

void Simulator::StepClientPass(size_t cpu) {
  ClientLoop& loop = client_loops_[cpu];
  const int64_t now_ns = now_us_ * 1000;
  const size_t sockets = loop.pass[kSockets].size();
  while (loop.next < sockets + loop.pass[kTimers].size()) {
    const size_t i = loop.next++;
    const auto& [ev, c] = i < sockets ? loop.pass[kSockets][i] : loop.pass[kTimers][i - sockets];
    int64_t ready_us = now_us_;
    uint8_t charged = 1;  // a crashed or paused client's handler drops or defers it at once
    if (ClientRuns(c.client)) {
      int64_t& busy_ns = cpu_busy_ns_[cpu];
      const int64_t start_ns = WorkStartNs(cpu, now_ns);
      if (on_loop_) LogLoopStep(ev, c, start_ns);
      const int64_t cost_ns = StepCostNs(*c.cost, c.held) + ColdStepNs(ev, c.client);
      busy_ns = start_ns + cost_ns;
      client_cpu_ns_ += cost_ns;
      ready_us = std::max(now_us_, CeilUs(busy_ns));
      charged = kChargedInPass;
    }
    PushCharged(ready_us, ev, charged);
    if (charged == kChargedInPass) return;  // the next is charged once this one has run
  }
  // The wake-up's CPU, once the pass is done: the loop's way back to sleep in epoll_wait (the way
  // out is in the wake-up's lateness, which was measured as how late the callback ran).
  if (on_loop_) on_loop_(loop_passes_, 'E', -1, cpu_busy_ns_[cpu] / 1000, client_cpu_ns_ / 1000, client_wakes_);
  cpu_busy_ns_[cpu] += wake_debt_ns_[cpu];
  wake_debt_ns_[cpu] = 0;
  loop.running = false;
  for (size_t k : {kSockets, kTimers}) loop.pass[k].clear();
  loop.next = 0;
  // What arrived during the pass: the next pass, at once.
  if (!loop.arrived[kSockets].empty() || !loop.arrived[kTimers].empty()) {
    loop.queued = true;
    Push(std::max(now_us_, CeilUs(cpu_busy_ns_[cpu])), kClientPass, static_cast<int32_t>(cpu), loop.gen);
  }
}

char Simulator::StepKind(const Event& ev) const {
  if (ev.kind == kWake) return 'T';
  if (ev.kind == kSendHeld) return 'W';
  if (ev.kind != kDeliver) return 0;
  const InFlight& f = inflight_[static_cast<uint32_t>(ev.a)];
  if (f.reply.type == Reply::Type::kTimeout) return 0;  // a timeout reads nothing
  return f.reply_unread || !f.reply_after_hold ? 'R' : 'H';  // read, or a held reply's callback
}

void Simulator::LogLoopStep(const Event& ev, const ClientCharge& c, int64_t start_ns) {
  const char kind = StepKind(ev);
  if (kind != 0) on_loop_(loop_passes_, kind, c.client, start_ns / 1000, kind == 'T' ? ev.t_us : -1, -1);
}

}  // namespace locklab::sim
