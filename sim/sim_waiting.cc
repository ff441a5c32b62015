// The simulator's waiting at nodes (parked BLPOPs, commands held behind them, dropped
// connections) and its pub/sub (subscriptions, messages, WaitMessage): see simulator.h.
#include <algorithm>

#include "sim/simulator_impl.h"

namespace locklab::sim {

void Simulator::Park(uint32_t id, int physical, int64_t deadline_ms) {
  InFlight& f = inflight_[id];
  NodeState& node = *nodes_[static_cast<size_t>(physical)];
  f.parked = true;
  f.park_node = physical;
  f.park_deadline_ms = deadline_ms;
  node.conns[f.client].parked = id;
  const auto& argv = f.cmd.argv;
  for (size_t i = 1; f.wait_replicas < 0 && i + 1 < argv.size(); ++i) {  // a WAIT waits on no key
    if (std::find(argv.begin() + 1, argv.begin() + static_cast<std::ptrdiff_t>(i), argv[i]) !=
        argv.begin() + static_cast<std::ptrdiff_t>(i))
      continue;  // a key named twice waits once, as in Redis
    node.waiting[std::string(argv[i])].push_back(id);
  }
  ++node.parked;
  ScheduleBlockTimeout(id);
  if (!f.deliver_pending && f.call != nullptr)
    Push(std::max(f.deadline_us, now_us_), kHeldDeadline, static_cast<int32_t>(id), f.use);
}

// Redis times a blocked client out once its clock (ms) is past the deadline (blocked.c): the
// first true time at which the node's wall clock reads (deadline + 1) ms, as the clock stands
// now. A later jump of the node's clock reschedules it (kNodeClockJump).
void Simulator::ScheduleBlockTimeout(uint32_t id) {
  InFlight& f = inflight_[id];
  const Clock& c = nodes_[static_cast<size_t>(f.park_node)]->clock;
  f.park_timer = ++timer_seq_;
  if (f.park_deadline_ms > 4'000'000'000'000'000LL) return;  // beyond any run: never fires
  const int64_t mono_target = (f.park_deadline_ms + 1) * 1000 - kSimEpochUs - c.offset_us - c.jumps_us;
  const int64_t mono_now = c.MonotonicUs(now_us_);
  if (mono_target - mono_now > 2 * config_.max_time_us + 1'000'000) return;  // after the run's time limit
  const int64_t at = mono_target <= mono_now ? now_us_ : std::max(now_us_, c.TrueForMonotonicUs(mono_target));
  Push(at, kBlockTimeout, static_cast<int32_t>(id), f.park_timer);
}

void Simulator::Unpark(uint32_t id) {
  InFlight& f = inflight_[id];
  NodeState& node = *nodes_[static_cast<size_t>(f.park_node)];
  f.parked = false;
  f.park_timer = 0;
  --node.parked;
  const auto& argv = f.cmd.argv;
  for (size_t i = 1; i + 1 < argv.size(); ++i) {
    auto it = node.waiting.find(argv[i]);
    if (it == node.waiting.end()) continue;
    std::erase(it->second, id);
    if (it->second.empty()) node.waiting.erase(it);
  }
  auto c = node.conns.find(f.client);
  if (c == node.conns.end()) return;
  c->second.parked = kNoCall;
  if (c->second.held.empty()) {
    node.conns.erase(c);
  } else {  // what waited behind it runs next, after this instant's current work
    Push(now_us_, kDrain, f.park_node, static_cast<uint64_t>(f.client));
  }
}

// After a command that created lists: each such key serves its parked BLPOPs in the order they
// blocked, one element each, while the list has elements (blocked.c handleClientsBlockedOnKeys).
void Simulator::ServeReady(int physical) {
  NodeState& node = *nodes_[static_cast<size_t>(physical)];
  std::vector<std::string> keys;
  node.store.TakeReadyKeys(&keys);
  const bool is_master_with_replica = config_.with_replica && !repl_cut_ && physical == 0;
  std::vector<std::string> touched;  // reused: one allocation per call, not per BLPOP served
  for (const std::string& key : keys) {
    for (;;) {
      auto it = node.waiting.find(key);
      if (it == node.waiting.end() || it->second.empty()) break;
      touched.clear();
      std::optional<std::string> v = node.store.PopHead(key, node.clock.WallUs(now_us_) / 1000, &touched);
      if (!v) break;
      const uint32_t id = it->second.front();
      Unpark(id);
      node.tx.NoteWritten(touched);
      if (is_master_with_replica) Replicate(physical, touched);
      Reply r = Reply::Array({Reply::Str(key), Reply::Str(std::move(*v))});
      const InFlight& f = inflight_[id];
      if (on_command_) on_command_(now_us_, f.client, f.endpoint, f.cmd, r);
      AnswerFromNode(physical, id, std::move(r), DrawUs(config_.cost.node.blpop_serve_us));
    }
  }
}

// The messages of the PUBLISH that just ran, one to each subscriber, leaving with its reply.
void Simulator::SendMessages(int64_t depart) {
  for (const auto& [client, endpoint] : messages_out_) {
    const Network::Hop hop = net_.Draw(client, endpoint, depart);
    if (hop.dropped()) continue;
    if (client_passes() && hop.delay_us > 0) {  // read when it arrives, held after (ReadHeld)
      Push(ArriveUs(depart * 1000, /*request=*/false, 0, client, endpoint), kMessage, client,
           kMessageUnread + static_cast<uint64_t>(hop.delay_us));
    } else {
      Push(ArriveUs(depart * 1000, /*request=*/false, hop.delay_us, client, endpoint), kMessage, client,
           hop.delay_us > 0 ? kMessageHeld : kMessagePlain);
    }
  }
  messages_out_.clear();
}

// A call its node will never answer (the node crashed with it parked or held): the client's
// connection is gone with the call on it, so its caller gets kTimeout (outcome unknown) now,
// as the real runtime's caller does when the server is killed under its connection.
void Simulator::EndHeld(uint32_t id) {
  InFlight& f = inflight_[id];
  f.node_pending = false;
  if (f.deliver_pending) return;
  if (f.call == nullptr) {
    FreeInFlight(id);
    return;
  }
  f.reply = Reply::Timeout();
  f.deliver_pending = true;
  Push(now_us_, kDeliver, static_cast<int32_t>(id), 0);
}

// The node's connections are gone (crash, restart, failover): parked BLPOPs and what waits
// behind them get no reply, subscriptions end.
void Simulator::DropConnections(int physical) {
  NodeState& node = *nodes_[static_cast<size_t>(physical)];
  for (auto& [client, conn] : node.conns) {
    if (conn.parked != kNoCall) {
      inflight_[conn.parked].parked = false;
      inflight_[conn.parked].park_timer = 0;
      EndHeld(conn.parked);
    }
    for (uint32_t id : conn.held) {
      inflight_[id].held = false;
      EndHeld(id);
    }
  }
  for (const auto& r : node.pass) EndHeld(r.id);  // read, run, never written
  node.pass.clear();
  node.pass_open = false;  // its kNodePass finds nothing
  node.conns.clear();
  node.waiting.clear();
  node.parked = 0;
  node.subscribers.clear();
  for (size_t c = 0; c < clients_.size(); ++c) {
    Process& p = *clients_[c];
    for (size_t i = 0; i < p.subs.size(); ++i) {
      Process::SubRec& r = p.subs[i];
      if (r.state == Process::SubRec::State::kNone || endpoint_[static_cast<size_t>(r.endpoint)] != physical) continue;
      r.state = Process::SubRec::State::kNone;
      ++r.gen;
      if (r.callers.empty()) continue;
      for (auto& caller : r.callers) caller.second = now_us_;  // cannot be made: false now
      Push(now_us_, kSubDeadline, static_cast<int32_t>(c), SubRef(i, r.gen));
    }
  }
}

void Simulator::OnBlockTimeout(uint32_t id, uint64_t token) {
  InFlight& f = inflight_[id];
  if (!f.parked || f.park_timer != token) return;  // served, dropped, or rescheduled
  const int physical = f.park_node;
  NodeState& node = *nodes_[static_cast<size_t>(physical)];
  if (now_us_ < node.paused_until_us) {
    Push(node.paused_until_us, kBlockTimeout, static_cast<int32_t>(id), token);
    return;
  }
  if (node.clock.WallUs(now_us_) / 1000 <= f.park_deadline_ms) {  // the node's clock went back
    ScheduleBlockTimeout(id);
    return;
  }
  Unpark(id);
  // A BLPOP gets nil; a WAIT the replicas that have acknowledged by now.
  Reply r = f.wait_replicas < 0 ? Reply::Nil() : Reply::Int(AckedReplicas(physical, f.wait_offset));
  if (on_command_) on_command_(now_us_, f.client, f.endpoint, f.cmd, r);
  AnswerFromNode(physical, id, std::move(r), DrawUs(config_.cost.node.command_us));
}

// --- WAIT. ---

int64_t Simulator::AckedReplicas(int physical, int64_t offset) const {
  const bool linked = config_.with_replica && physical == 0 && endpoint_[0] == 0 && !repl_cut_ && nodes_.back()->up;
  return linked && repl_applied_ >= offset ? 1 : 0;
}

bool Simulator::ParkWait(uint32_t id, int physical, const BlockRequest& block, int64_t node_ms, Reply* reply) {
  InFlight& f = inflight_[id];
  NodeState& node = *nodes_[static_cast<size_t>(physical)];
  auto w = node.woff.find(f.client);
  const int64_t offset = w == node.woff.end() ? 0 : w->second;
  const int64_t acked = AckedReplicas(physical, offset);
  if (acked >= block.replicas) {
    *reply = Reply::Int(acked);
    return false;
  }
  if (node.parked >= kMaxParkedPerNode) {
    *reply = Reply::Error("ERR locklab: more than " + std::to_string(kMaxParkedPerNode) + " commands parked at this node");
    return false;
  }
  f.wait_replicas = block.replicas;
  f.wait_offset = offset;
  Park(id, physical, SaturatingAdd(node_ms, block.timeout_ms));
  // The replica applies the last item sent at repl_last_due_us_; its acknowledgement takes as
  // long again to come back.
  if (AckedReplicas(physical, 0) > 0)
    Push(SaturatingAdd(std::max(now_us_, repl_last_due_us_), config_.repl_delay_us), kWaitAck, static_cast<int32_t>(id),
         f.use);
  return true;
}

void Simulator::OnWaitAck(uint32_t id, uint64_t use) {
  InFlight& f = inflight_[id];
  if (!f.parked || f.use != use || f.wait_replicas < 0) return;  // answered, dropped, or another use
  const int physical = f.park_node;
  NodeState& node = *nodes_[static_cast<size_t>(physical)];
  if (now_us_ < node.paused_until_us) {
    Push(node.paused_until_us, kWaitAck, static_cast<int32_t>(id), use);
    return;
  }
  const int64_t acked = AckedReplicas(physical, f.wait_offset);
  if (acked < f.wait_replicas) return;  // the link broke meanwhile: the timeout answers
  Unpark(id);
  Reply r = Reply::Int(acked);
  if (on_command_) on_command_(now_us_, f.client, f.endpoint, f.cmd, r);
  AnswerFromNode(physical, id, std::move(r), DrawUs(config_.cost.node.command_us));
}

void Simulator::OnHeldDeadline(uint32_t id, uint64_t use) {
  InFlight& f = inflight_[id];
  if (f.use != use || !(f.parked || f.held) || f.deliver_pending || f.call == nullptr) return;
  f.reply = Reply::Timeout();  // the node still has it: it may run (or pop) later, unheard
  f.deliver_pending = true;
  Push(now_us_, kDeliver, static_cast<int32_t>(id), 0);
}

void Simulator::OnDrain(int physical, int client) {
  NodeState& node = *nodes_[static_cast<size_t>(physical)];
  if (!node.up) return;
  if (now_us_ < node.paused_until_us) {
    Push(node.paused_until_us, kDrain, physical, static_cast<uint64_t>(client));
    return;
  }
  for (;;) {
    auto it = node.conns.find(client);
    if (it == node.conns.end()) return;
    if (it->second.parked != kNoCall) return;  // parked again: the rest waits for that one
    if (it->second.held.empty()) {
      node.conns.erase(it);
      return;
    }
    const uint32_t id = it->second.held.front();
    it->second.held.pop_front();
    RunAtNode(id, physical);
  }
}

// --- Pub/sub. ---

void Simulator::StartSubscribe(int client, SubscribeCall* call) {
  using State = Process::SubRec::State;
  Process& p = *clients_[static_cast<size_t>(client)];
  auto finish_now = [&](bool ok) {  // from the event loop, at this instant
    call->ok = ok;
    Push(now_us_, kWake, client, reinterpret_cast<uint64_t>(call->waiter.address()));
  };
  if (call->node < 0 || call->node >= config_.nodes) return finish_now(false);
  size_t index = p.subs.size(), spare = p.subs.size();
  int active = 0;
  for (size_t i = 0; i < p.subs.size(); ++i) {
    const Process::SubRec& r = p.subs[i];
    if (r.state != State::kNone) ++active;
    if (r.endpoint == call->node && r.channel == call->channel) {
      index = i;
    } else if (r.state == State::kNone && r.callers.empty() && spare == p.subs.size()) {
      spare = i;
    }
  }
  const int64_t deadline = now_us_ + config_.command_timeout_us;
  if (index < p.subs.size() && p.subs[index].state == State::kConfirmed) return finish_now(true);
  if (index < p.subs.size() && p.subs[index].state == State::kPending) {  // shares the SUBSCRIBE on its way
    p.subs[index].callers.emplace_back(call, deadline);
    Push(deadline, kSubDeadline, client, SubRef(index, p.subs[index].gen));
    return;
  }
  if (active >= Env::kMaxSubscriptions) return finish_now(false);
  if (index == p.subs.size()) {
    if (spare < p.subs.size()) {
      index = spare;
    } else {
      p.subs.emplace_back();
    }
  }
  Process::SubRec& r = p.subs[index];
  r.endpoint = call->node;
  r.channel = call->channel;
  r.state = State::kPending;
  r.refused = false;
  ++r.gen;
  r.callers.emplace_back(call, deadline);
  CountCommand(client, Command::Of("SUBSCRIBE", r.channel));
  const Network::Hop hop = net_.Draw(client, r.endpoint, now_us_);
  const int64_t leave_ns = ClientSendNs(client, /*held=*/hop.delay_us > 0);
  if (!hop.dropped())
    Push(ArriveUs(leave_ns, /*request=*/true, hop.delay_us, client, r.endpoint), kSubArrive, client, SubRef(index, r.gen));
  Push(deadline, kSubDeadline, client, SubRef(index, r.gen));
}

void Simulator::OnSubArrive(int client, uint64_t ref) {
  Process& p = *clients_[static_cast<size_t>(client)];
  const auto index = static_cast<size_t>(ref & 0xffffffffu);
  if (index >= p.subs.size() || p.subs[index].gen != static_cast<uint32_t>(ref >> 32)) return;
  Process::SubRec& r = p.subs[index];
  const int physical = endpoint_[static_cast<size_t>(r.endpoint)];
  NodeState& node = *nodes_[static_cast<size_t>(physical)];
  if (node.up && now_us_ < node.paused_until_us) {
    Push(node.paused_until_us, kSubArrive, client, ref);
    return;
  }
  int64_t depart = now_us_;
  r.refused = !node.up;
  if (node.up) {
    auto& subs = node.subscribers[r.channel];
    const std::pair<int, int> me{client, r.endpoint};
    if (std::find(subs.begin(), subs.end(), me) == subs.end()) subs.push_back(me);
    if (on_command_) {  // Redis answers ["subscribe", channel, channels this connection has]
      int64_t channels = 0;
      for (const auto& [name, list] : node.subscribers)
        channels += std::find(list.begin(), list.end(), me) != list.end();
      const Reply reply = Reply::Array({Reply::Str("subscribe"), Reply::Str(r.channel), Reply::Int(channels)});
      on_command_(now_us_, client, r.endpoint, Command::Of("SUBSCRIBE", r.channel), reply);
    }
    depart = Depart(physical, DrawUs(config_.cost.node.command_us));
  }
  const Network::Hop hop = net_.Draw(client, r.endpoint, depart);
  if (!hop.dropped())
    Push(ArriveUs(depart * 1000, /*request=*/false, hop.delay_us, client, r.endpoint), kSubConfirm, client, ref);
}

void Simulator::FinishSubscribers(int client, size_t index, bool ok, bool only_due) {
  // Collect first: a resumed caller may subscribe again and grow `subs`.
  std::vector<SubscribeCall*> done;
  auto& callers = clients_[static_cast<size_t>(client)]->subs[index].callers;
  for (auto it = callers.begin(); it != callers.end();) {
    if (!only_due || it->second <= now_us_) {
      done.push_back(it->first);
      it = callers.erase(it);
    } else {
      ++it;
    }
  }
  for (SubscribeCall* call : done) call->Finish(ok);
}

void Simulator::OnSubConfirm(int client, uint64_t ref) {
  if (!ClientGate(client, kSubConfirm, client, ref)) return;
  Process& p = *clients_[static_cast<size_t>(client)];
  const auto index = static_cast<size_t>(ref & 0xffffffffu);
  if (index >= p.subs.size() || p.subs[index].gen != static_cast<uint32_t>(ref >> 32)) return;
  Process::SubRec& r = p.subs[index];
  const bool ok = !r.refused;
  if (ok) {
    r.state = Process::SubRec::State::kConfirmed;
  } else {
    r.state = Process::SubRec::State::kNone;
    ++r.gen;
  }
  FinishSubscribers(client, index, ok, /*only_due=*/false);
}

void Simulator::OnSubDeadline(int client, uint64_t ref) {
  if (!ClientGate(client, kSubDeadline, client, ref)) return;
  Process& p = *clients_[static_cast<size_t>(client)];
  const auto index = static_cast<size_t>(ref & 0xffffffffu);
  if (index >= p.subs.size() || p.subs[index].gen != static_cast<uint32_t>(ref >> 32)) return;
  FinishSubscribers(client, index, false, /*only_due=*/true);
}

void Simulator::OnMessage(int client) {
  if (!ClientGate(client, kMessage, client, 0)) return;
  Process& p = *clients_[static_cast<size_t>(client)];
  if (!p.waiters.empty()) {
    MessageWait* w = p.waiters.front().second;
    p.waiters.pop_front();
    w->Finish(true);
    return;
  }
  if (p.queued_messages < Env::kMaxQueuedMessages) {
    ++p.queued_messages;
  } else {
    ++p.dropped_messages;
  }
}

void Simulator::StartWaitMessage(int client, MessageWait* wait) {
  Process& p = *clients_[static_cast<size_t>(client)];
  if (p.queued_messages > 0 || wait->timeout_us <= 0) {
    wait->got = p.queued_messages > 0;
    if (wait->got) --p.queued_messages;
    Push(now_us_, kWake, client, reinterpret_cast<uint64_t>(wait->waiter.address()));
    return;
  }
  const uint64_t id = ++p.next_waiter;
  p.waiters.emplace_back(id, wait);
  const Clock& c = p.clock;
  const int64_t at = c.TrueAfterUs(now_us_, wait->timeout_us);
  Push(std::max(at, now_us_), kWaitTimeout, client, id);
}

void Simulator::OnWaitTimeout(int client, uint64_t waiter) {
  if (!ClientGate(client, kWaitTimeout, client, waiter)) return;
  Process& p = *clients_[static_cast<size_t>(client)];
  for (auto it = p.waiters.begin(); it != p.waiters.end(); ++it) {
    if (it->first != waiter) continue;
    MessageWait* w = it->second;
    p.waiters.erase(it);
    w->Finish(false);
    return;
  }
}

}  // namespace locklab::sim
