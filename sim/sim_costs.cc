// The simulator's costs (simulator.h, "Costs"): node steps, client CPU, the path.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "sim/scripts.h"
#include "sim/simulator_impl.h"
#include "sim/store_words.h"

namespace locklab::sim {

namespace {

bool IsPublish(const Command& cmd) {
  return cmd.script == Script::kNone && !cmd.argv.empty() && words::EqNoCase(cmd.argv[0], "publish");
}

// By Script: the redis.call's in its Lua text, counted once per process (the texts are constant).
const std::vector<int>& ScriptCalls() {
  static const std::vector<int> calls = [] {
    std::vector<int> n(static_cast<size_t>(Script::kCount), 0);
    for (const ScriptDef& d : Scripts())
      for (const char* p = d.lua; (p = std::strstr(p, "redis.call(")) != nullptr; ++p) ++n[static_cast<size_t>(d.id)];
    return n;
  }();
  return calls;
}

}  // namespace

void Simulator::InitCosts() {
  const bool one = config_.cost.client.placement == ClientCosts::Placement::kOneProcess;
  cpu_busy_ns_.assign(one ? 1 : static_cast<size_t>(config_.clients), 0);
  wake_debt_ns_.assign(cpu_busy_ns_.size(), 0);
  send_shift_us_ = config_.cost.client.send_us.MeanUs();
  reply_shift_us_ = config_.cost.client.reply_us.MeanUs();
  const ClientCosts& c = config_.cost.client;
  wake_rows_ = WakeRows(c.wake_after_idle);
  client_costs_ = !c.send_us.points.empty() || !c.reply_us.points.empty() || !c.timer_us.points.empty() ||
                  !c.hold_us.points.empty() || !c.message_us.points.empty() || !c.wake_after_idle.empty() ||
                  !c.wake_cpu_us.points.empty();
  held_write_cost_ = c.held_write_us.points.empty() ? &c.send_us : &c.held_write_us;  // without the keys: as before
  held_read_cost_ = c.held_read_us.points.empty() ? &c.hold_us : &c.held_read_us;
  held_callback_cost_ = c.held_callback_us.points.empty() ? &c.reply_us : &c.held_callback_us;
  message_cost_ = c.message_us.points.empty() ? &c.reply_us : &c.message_us;  // older profiles: a reply's
  if (client_passes()) client_loops_.assign(cpu_busy_ns_.size(), ClientLoop{});
  if (c.cold_after_ms > 0) last_read_ns_.assign(static_cast<size_t>(config_.clients), 0);
  if (passes()) {
    client_costs_ = true;
    const size_t processes = one ? 1 : static_cast<size_t>(config_.clients);
    path_last_ns_.assign(processes * static_cast<size_t>(config_.nodes) * 2, 0);
  }
}

double Simulator::CommandCostUs(const Command& cmd, size_t receivers) {
  const NodeCosts& c = config_.cost.node;
  if (cmd.script != Script::kNone) {
    double us = DrawUs(c.script_us);
    const int calls = ScriptCalls()[static_cast<size_t>(cmd.script)];
    for (int i = 0; i < calls; ++i) us += DrawUs(c.script_call_us);
    return us;
  }
  double us = DrawUs(c.command_us);
  if (receivers > 0 && IsPublish(cmd))
    for (size_t i = 0; i < receivers; ++i) us += DrawUs(c.publish_per_receiver_us);
  return us;
}

int64_t Simulator::Depart(int physical, double cost_us) {
  NodeState& node = *nodes_[static_cast<size_t>(physical)];
  const int64_t now_ns = now_us_ * 1000;
  int64_t start = node.busy_until_ns;
  if (start <= now_ns) start = now_ns + Ns(DrawUs(config_.cost.node.wake_us));  // idle: the loop wakes up
  node.busy_until_ns = start + Ns(cost_us);
  return CeilUs(node.busy_until_ns);
}

int64_t Simulator::ChargeCpuNs(int client, const CostDist& cost, bool held, bool timer, int64_t extra_ns) {
  const size_t cpu = ProcessOf(client);
  const int64_t now_ns = now_us_ * 1000;
  if (timer && wake_debt_ns_[cpu] > 0) {  // the last wake-up's own CPU, spent after its handler's sends
    cpu_busy_ns_[cpu] += wake_debt_ns_[cpu];
    wake_debt_ns_[cpu] = 0;
  }
  int64_t start = WorkStartNs(cpu, now_ns);
  if (timer && cpu_busy_ns_[cpu] < now_ns) start += WakeFromIdleNs(cpu, now_ns);  // idle: the process wakes first
  const int64_t cost_ns = StepCostNs(cost, held) + extra_ns;
  cpu_busy_ns_[cpu] = start + cost_ns;
  client_cpu_ns_ += cost_ns;
  return cpu_busy_ns_[cpu];
}

int64_t Simulator::WakeFromIdleNs(size_t cpu, int64_t now_ns, bool socket) {
  int64_t late_ns = 0;
  if (!wake_rows_.empty()) {  // no rows: on time, and no draw
    const double idle_us = static_cast<double>(now_ns - cpu_busy_ns_[cpu]) / 1000.0;
    const double u = cost_rng_.Unit();
    late_ns = Ns(socket ? wake_rows_.SocketLateUs(idle_us, u) : wake_rows_.LateUs(idle_us, u));
  }
  ++client_wakes_;
  const int64_t wake_ns = Ns(DrawUs(config_.cost.client.wake_cpu_us));  // no draw when the profile has none
  client_cpu_ns_ += wake_ns;
  wake_debt_ns_[cpu] += wake_ns;
  return late_ns;
}

int64_t Simulator::ClientSendNs(int client, bool held) {
  return ChargeCpuNs(client, config_.cost.client.send_us, held, /*timer=*/false, ColdNs(client, /*read=*/false));
}

int64_t Simulator::ColdNs(int client, bool read) {
  const ClientCosts& c = config_.cost.client;
  if (c.cold_after_ms <= 0) return 0;
  int64_t& last_ns = last_read_ns_[static_cast<size_t>(client)];
  const int64_t now_ns = now_us_ * 1000;
  const bool cold = static_cast<double>(now_ns - last_ns) >= c.cold_after_ms * 1e6;
  if (read) last_ns = now_ns;
  return cold ? Ns(DrawUs(read ? c.cold_read_us : c.cold_write_us)) : 0;
}

int64_t Simulator::ColdStepNs(const Event& ev, int client) {
  if (config_.cost.client.cold_after_ms <= 0) return 0;
  const char kind = StepKind(ev);
  return kind == 'W' || kind == 'R' ? ColdNs(client, /*read=*/kind == 'R') : 0;
}

int64_t Simulator::ArriveUs(int64_t leave_ns, bool request, int64_t injected_us, int client, int endpoint) {
  if (passes()) return SaturatingAdd(CeilUs(FifoArriveNs(leave_ns, request, client, endpoint)), injected_us);
  if (config_.cost.one_way_us.points.empty()) return CeilUs(leave_ns) + injected_us;
  const double wire_us = DrawUs(config_.cost.one_way_us) - (request ? send_shift_us_ : reply_shift_us_);
  return SaturatingAdd(CeilUs(leave_ns + Ns(wire_us)), injected_us);
}

bool Simulator::ClientEventCost(const Event& ev, ClientCharge* out) {
  const ClientCosts& c = config_.cost.client;
  *out = ClientCharge{ClientOfEvent(ev), &c.timer_us, false, true};  // kWake, kWaitTimeout, kSubDeadline
  switch (ev.kind) {
    case kDeliver: {
      const InFlight& f = inflight_[static_cast<uint32_t>(ev.a)];
      if (f.reply_unread) {  // read, and its hold armed (client passes)
        out->cost = held_read_cost_;
        out->timer = false;
      } else if (f.reply.type != Reply::Type::kTimeout) {
        out->cost = f.reply_after_hold ? held_callback_cost_ : &c.reply_us;
        out->held = f.reply_held;
        out->timer = f.reply_held || f.reply_after_hold;
      }
      return true;
    }
    case kMessage:
      out->cost = ev.b >= kMessageUnread ? &c.hold_us : message_cost_;  // held_read_us: measured for replies
      out->held = ev.b == kMessageHeld;
      out->timer = ev.b == kMessageHeld || ev.b == kMessageAfterHold;
      return true;
    case kSubConfirm:
      out->cost = &c.reply_us;
      out->timer = false;
      return true;
    case kSendHeld:
      out->cost = held_write_cost_;
      return true;
    case kWake:
    case kWaitTimeout:
    case kSubDeadline: return true;
    default: return false;
  }
}

bool Simulator::ChargeClient(const Event& ev) {
  ClientCharge c;
  if (!ClientEventCost(ev, &c)) return false;
  if (!ClientRuns(c.client)) return false;  // the handler drops or defers it
  if (client_passes()) {
    JoinClientPass(ev, c);
    return true;
  }
  const bool timer = c.timer || passes();  // passes: whatever reaches an idle process waits for it to wake
  const int64_t ready_us = CeilUs(ChargeCpuNs(c.client, *c.cost, c.held, timer));
  if (ready_us <= now_us_) return false;
  PushCharged(ready_us, ev, /*charged=*/1);
  return true;
}

// ---------------------------------------------------------------------------------------------
// The passes loop (simulator.h, "Costs"; sim/cost_model.h, LoopCosts).

// Paths are (client process, endpoint, direction); a message never arrives before one sent
// earlier on its path.
int64_t Simulator::FifoArriveNs(int64_t leave_ns, bool request, int client, int endpoint) {
  const size_t path = (ProcessOf(client) * static_cast<size_t>(config_.nodes) + static_cast<size_t>(endpoint)) * 2 +
                      (request ? 0 : 1);
  int64_t& last = path_last_ns_[path];
  last = std::max(last, leave_ns + Ns(DrawUs(config_.cost.loop.wire_us)));
  return last;
}

void Simulator::JoinPass(int physical, uint32_t id, Reply&& reply, double cost_us) {
  NodeState& node = *nodes_[static_cast<size_t>(physical)];
  if (!node.pass_open) {
    const int64_t now_ns = now_us_ * 1000;
    int64_t poll_us = CeilUs(node.busy_until_ns);  // busy: it polls again once this pass is written
    if (node.busy_until_ns <= now_ns) {             // asleep: it wakes first
      const double idle_us = static_cast<double>(now_ns - node.busy_until_ns) / 1000.0;
      poll_us = now_us_ + static_cast<int64_t>(wake_rows_.SocketLateUs(idle_us, cost_rng_.Unit()));
    }
    node.pass_open = true;
    Push(poll_us, kNodePass, physical, ++node.pass_gen);
  }
  // Built in place: the reply moved once (a short reply's string is copied by a memcpy call per move).
  node.pass.emplace_back(id, std::move(reply), cost_us, std::move(messages_out_));
  messages_out_.clear();
}

void Simulator::OnNodePass(int physical, uint64_t gen) {
  NodeState& node = *nodes_[static_cast<size_t>(physical)];
  if (gen != node.pass_gen || !node.pass_open) return;  // the node crashed since: nothing to write
  if (now_us_ < node.paused_until_us) {                 // stopped: it polls once it resumes
    Push(node.paused_until_us, kNodePass, physical, gen);
    return;
  }
  node.pass_open = false;
  // Writing a reply only queues events, so nothing joins node.pass while it is written.
  std::vector<NodeState::PassReply>& pass = node.pass;
  const double write_us = DrawUs(config_.cost.loop.reply_write_us);
  int64_t t_ns = std::max(now_us_ * 1000, node.busy_until_ns) + Ns(DrawUs(config_.cost.node.wake_us));
  for (const auto& r : pass) t_ns += Ns(r.cost_us - write_us);
  for (size_t i = pass.size(); i-- > 0;) {  // the last read is written first
    t_ns += Ns(write_us);
    const int64_t depart = CeilUs(t_ns);
    messages_out_ = std::move(pass[i].messages);
    ReplyFromNode(pass[i].id, std::move(pass[i].reply), depart);
    if (!messages_out_.empty()) SendMessages(depart);
  }
  pass.clear();  // keeps its capacity for the next pass
  node.busy_until_ns = t_ns;
}

}  // namespace locklab::sim
