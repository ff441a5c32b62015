#include "sim/simulator.h"

#include <algorithm>
#include <cassert>

#include "sim/simulator_impl.h"

namespace locklab::sim {

Simulator::Simulator(SimConfig config)
    : config_(std::move(config)), net_(config_.net, config_.seed), cost_rng_(config_.seed ^ kCostStreamSalt) {
  assert(config_.clients >= 1 && config_.nodes >= 1);
  InitCosts();
  for (int c = 0; c < config_.clients; ++c) {
    auto p = std::make_unique<Process>();
    p->env = std::make_unique<ClientEnv>(this, c, config_.seed ^ (0x5851f42d4c957f2dULL * static_cast<uint64_t>(c + 1)));
    clients_.push_back(std::move(p));
  }
  int physical = config_.nodes + (config_.with_replica ? 1 : 0);
  for (int n = 0; n < physical; ++n) {
    nodes_.push_back(std::make_unique<NodeState>());
    // PUBLISH: count this node's subscribers of the channel; RunAtNode sends them the message.
    nodes_.back()->store.set_publish_hook([this, n](std::string_view channel, std::string_view) -> int64_t {
      NodeState& node = *nodes_[static_cast<size_t>(n)];
      auto it = node.subscribers.find(channel);
      if (it == node.subscribers.end()) return 0;
      for (const auto& s : it->second) messages_out_.push_back(s);
      return static_cast<int64_t>(it->second.size());
    });
  }
  for (int n = 0; n < config_.nodes; ++n) endpoint_.push_back(n);
  for (int n = 0; n < physical; ++n) {
    nodes_[static_cast<size_t>(n)]->expire_rng = Rng(config_.seed ^ (0xd1b54a32d192ed03ULL * static_cast<uint64_t>(n + 1)));
    if (n < config_.nodes) StartExpireCycle(n);  // the replica runs none until promoted
  }
  cmd_by_client_.assign(static_cast<size_t>(config_.clients), 0);
  InitStalls();
}

Simulator::~Simulator() {
  // Drop pending work first, then the frames: nothing may resume a destroyed coroutine.
  queue_.clear();
  now_queue_.clear();
  charged_queue_.clear();
  planned_.clear();
  for (auto& p : clients_) {
    p->spawned.clear();
    p->main = Task<void>();
  }
}

Env& Simulator::env(int client) { return *clients_[static_cast<size_t>(client)]->env; }

Store& Simulator::store(int endpoint) { return nodes_[static_cast<size_t>(endpoint_[static_cast<size_t>(endpoint)])]->store; }

bool Simulator::client_crashed(int client) const {
  return crashed_clients_ > 0 && clients_[static_cast<size_t>(client)]->crashed;
}

size_t Simulator::parked(int endpoint) const {
  return nodes_[static_cast<size_t>(endpoint_[static_cast<size_t>(endpoint)])]->parked;
}

int64_t Simulator::messages_dropped(int client) const {
  return clients_[static_cast<size_t>(client)]->dropped_messages;
}

void Simulator::SetClientClock(int client, int64_t offset_us, double drift_ppm) {
  auto& c = clients_[static_cast<size_t>(client)]->clock;
  c.offset_us = offset_us;
  c.drift_ppm = drift_ppm;
  if (drift_ppm != 0) clients_drift_ = true;
}

void Simulator::SetNodeClock(int node, int64_t offset_us, double drift_ppm) {
  auto& c = nodes_[static_cast<size_t>(node)]->clock;
  c.offset_us = offset_us;
  c.drift_ppm = drift_ppm;
}

void Simulator::Push(int64_t t_us, uint8_t kind, int32_t a, uint64_t b, uint8_t charged) {
  const Event ev{t_us, seq_++, kind, charged, a, b};
  if (running_ && t_us == now_us_) {
    now_queue_.push_back(ev);
  } else {
    queue_.push(ev);
  }
}

Status Simulator::PlanFault(const FaultAction& f) {
  const FaultWorld world{config_.clients, config_.nodes, config_.with_replica};
  if (Status s = ValidateFault(f, world); !s.ok()) return s;
  if (!f.on_send.empty()) {
    if (!net_.AddTrigger(f)) return Status::Invalid("too many on_send faults");
    return Status::Ok();
  }
  if (f.kind == FaultAction::Kind::kDelayMessage) {
    if (!net_.AddDelay(f)) return Status::Invalid("too many delay_message faults");
    return Status::Ok();
  }
  if (running_) {
    PushFault(f, kApply, f.at_us);
    return Status::Ok();
  }
  // Before the run: kept aside in planned_ (see Next), with the key the heap would give it.
  faults_.push_back(Fault{f, kApply});
  const int64_t at_us = std::max<int64_t>(f.at_us, 0);
  PlanTimes(static_cast<int32_t>(faults_.size() - 1), {at_us}, PauseDraws{}, at_us);
  return Status::Ok();
}

Status Simulator::PlanPauses(FaultAction pause, const std::vector<int64_t>& at_us) {
  if (at_us.empty()) return Status::Ok();
  if (Status s = CheckPause(&pause, at_us.front()); !s.ok()) return s;
  PlanTimes(static_cast<int32_t>(faults_.size() - 1), at_us, PauseDraws{}, at_us.front());
  return Status::Ok();
}

Status Simulator::PlanPauses(FaultAction pause, PauseDraws draws) {
  if (draws.count == 0) return Status::Ok();
  const int64_t first_us = draws.Next();
  if (Status s = CheckPause(&pause, first_us); !s.ok()) return s;
  PlanTimes(static_cast<int32_t>(faults_.size() - 1), {}, std::move(draws), first_us);
  return Status::Ok();
}

// A timed pause_client before the run, checked with its first time and kept as a fault (its
// handler reads no at_us); Invalid otherwise.
Status Simulator::CheckPause(FaultAction* pause, int64_t first_us) {
  if (running_ || pause->kind != FaultAction::Kind::kPauseClient || !pause->on_send.empty())
    return Status::Invalid("PlanPauses: a timed pause_client, planned before the run");
  pause->at_us = first_us;
  const FaultWorld world{config_.clients, config_.nodes, config_.with_replica};
  if (Status s = ValidateFault(*pause, world); !s.ok()) return s;  // only at_us differs between them
  faults_.push_back(Fault{std::move(*pause), kApply});
  return Status::Ok();
}

void Simulator::PlanTimes(int32_t fault, std::vector<int64_t> at_us, PauseDraws draws, int64_t first_us) {
  PlannedTimes& p = planned_times_.emplace_back();
  p.count = at_us.empty() ? draws.count : at_us.size();
  p.at_us = std::move(at_us);
  p.draws = std::move(draws);
  p.seq0 = seq_;
  p.fault = fault;
  seq_ += p.count;  // the keys its times would have had, planned one by one
  planned_.push_back(Event{first_us, p.seq0, kFault, 0, fault, planned_times_.size() - 1});
}

// Out of line: Next, inlined in Run, stays small for the common case of no planned faults.
[[gnu::noinline]] void Simulator::TakePlanned() {
  const uint64_t index = planned_.front().b;
  std::pop_heap(planned_.begin(), planned_.end(), EarliestFirst);
  planned_.pop_back();
  PlannedTimes& p = planned_times_[index];
  if (++p.next >= p.count) return;
  const int64_t t_us = p.at_us.empty() ? p.draws.Next() : p.at_us[p.next];
  planned_.push_back(Event{t_us, p.seq0 + p.next, kFault, 0, p.fault, index});
  std::push_heap(planned_.begin(), planned_.end(), EarliestFirst);
}

// Inline in Run, its one caller: as a call, its register saves and the copy out through *ev
// were 3.5% of a simulated command's instructions.
[[gnu::always_inline]] inline bool Simulator::Next(Event* ev) {
  // The smallest key of: the current instant's queue, the wheel, the charged FIFO, the planned
  // faults.
  enum Source { kNone, kNow, kWheel, kCharged, kPlanned } from = kNone;
  const Event* best = nullptr;
  if (!now_queue_.empty()) {
    best = &now_queue_.front();
    from = kNow;
  }
  if (!queue_.empty() && (best == nullptr || queue_.top().key() < best->key())) {
    best = &queue_.top();
    from = kWheel;
  }
  if (!charged_queue_.empty() && (best == nullptr || charged_queue_.front().key() < best->key())) {
    best = &charged_queue_.front();
    from = kCharged;
  }
  if (!planned_.empty() && (best == nullptr || planned_.front().key() < best->key())) {
    best = &planned_.front();
    from = kPlanned;
  }
  if (from == kNone) return false;
  *ev = *best;
  switch (from) {
    case kNow: now_queue_.pop_front(); break;
    case kWheel: queue_.pop(); break;
    case kCharged: charged_queue_.pop_front(); break;
    case kPlanned:
      TakePlanned();
      break;
    case kNone: break;
  }
  return true;
}

void Simulator::PushFault(const FaultAction& f, uint8_t step, int64_t at_us) {
  faults_.push_back(Fault{f, step});
  Push(std::max<int64_t>(at_us, 0), kFault, static_cast<int32_t>(faults_.size() - 1), 0);
}

void Simulator::FireTriggers(int client, const std::string& name) {
  fired_.clear();
  net_.FireTriggers(client, name, &fired_);
  for (const FaultAction& f : fired_) PushFault(f, kApply, now_us_);
}

void Simulator::StartClient(int client, Task<void> main) {
  clients_[static_cast<size_t>(client)]->main = RunMain(client, std::move(main));
  ++mains_left_;
}

Task<void> Simulator::RunMain(int client, Task<void> main) {
  co_await main;
  clients_[static_cast<size_t>(client)]->main_done = true;
  --mains_left_;
}

uint32_t Simulator::AllocInFlight() {
  if (!free_inflight_.empty()) {
    uint32_t id = free_inflight_.back();
    free_inflight_.pop_back();
    return id;
  }
  inflight_.emplace_back();
  return static_cast<uint32_t>(inflight_.size() - 1);
}

void Simulator::FreeInFlight(uint32_t id) {
  // The command and reply buffers stay: the next call moves its own in over them.
  inflight_[id].call = nullptr;
  free_inflight_.push_back(id);
}

// Counted by script, or by the first word exactly as sent: no case folding per command, only
// once per run in commands_by_name (a client that writes "set" and "SET" gets one "SET" row).
void Simulator::CountCommand(int client, const Command& cmd) {
  ++cmd_total_;
  ++cmd_by_client_[static_cast<size_t>(client)];
  if (cmd.script != Script::kNone) {
    ++cmd_by_script_[static_cast<size_t>(cmd.script)];
    return;
  }
  const std::string_view word = cmd.argv.empty() ? std::string_view() : std::string_view(cmd.argv[0]);
  for (WordCount& w : cmd_by_word_)
    if (w.word == word) {
      ++w.count;
      return;
    }
  cmd_by_word_.push_back(WordCount{std::string(word), cmd.Name(), 1});
}

std::vector<std::pair<std::string, int64_t>> Simulator::commands_by_name() const {
  std::map<std::string, int64_t> by_name;  // sorted, one row per name
  for (size_t s = 0; s < cmd_by_script_.size(); ++s)
    if (cmd_by_script_[s] > 0) by_name[std::string(ScriptName(static_cast<Script>(s)))] += cmd_by_script_[s];
  for (const WordCount& w : cmd_by_word_) by_name[w.name] += w.count;
  return {by_name.begin(), by_name.end()};
}

void Simulator::StartCall(int client, PendingCall* call) {
  CountCommand(client, call->cmd);
  const uint32_t id = AllocInFlight();
  InFlight& f = inflight_[id];
  f.client = client;
  f.endpoint = call->node;
  f.call = call;
  f.cmd = std::move(call->cmd);
  f.deadline_us = now_us_ + config_.command_timeout_us;
  f.use = ++use_seq_;
  f.node_pending = f.deliver_pending = f.parked = f.held = f.reply_held = f.reply_unread = f.reply_after_hold = false;
  f.wait_replicas = -1;
  // A BLPOP or a WAIT may wait its own timeout at the node: the command timeout counts from after it.
  if (int64_t block_ms = 0; (BlpopTimeoutMs(f.cmd, &block_ms) || WaitTimeoutMs(f.cmd, &block_ms)) && block_ms > 0)
    f.deadline_us = SaturatingAdd(f.deadline_us, block_ms > kMaxInt64 / 1000 ? kMaxInt64 : block_ms * 1000);

  const Network::Hop hop = net_.Draw(client, f.endpoint, now_us_);
  int64_t delay = hop.delay_us;
  std::string name;  // computed once, and only when a matcher or trigger needs it
  if (net_.has_delays()) {
    name = f.cmd.Name();
    delay += net_.ExtraDelayUs(client, name, nullptr);
  }
  const bool lost = hop.dropped();
  if (delay > 0 && !lost && config_.cost.loop.held_request_waits) {  // the hold is a timer of the process
    ChargeCpuNs(client, config_.cost.client.hold_us, /*held=*/false);
    f.node_pending = true;
    Push(SaturatingAdd(now_us_, delay), kSendHeld, static_cast<int32_t>(id), 0);
  } else {
    const int64_t leave_ns = ClientSendNs(client, /*held=*/delay > 0);
    if (on_loop_ && client_passes()) on_loop_(loop_passes_, 'W', client, leave_ns / 1000, -1, -1);  // written at once
    SendRequest(id, leave_ns, delay, lost);
  }
  // Command-triggered faults: the command is on its way; the fault comes next at this instant.
  if (net_.has_triggers()) {
    if (name.empty()) name = f.cmd.Name();
    FireTriggers(client, name);
  }
}

// The request `id` leaves its client at leave_ns with `injected_us` of delay still to go (a lost
// one takes its path all the same, for the draws); its caller gets kTimeout at its deadline when
// it is lost or arrives too late to be answered before.
void Simulator::SendRequest(uint32_t id, int64_t leave_ns, int64_t injected_us, bool lost) {
  InFlight& f = inflight_[id];
  const int64_t arrive = ArriveUs(leave_ns, /*request=*/true, injected_us, f.client, f.endpoint);
  if (!lost) {
    f.node_pending = true;
    Push(arrive, kNodeReceive, static_cast<int32_t>(id), 0);
  }
  if ((lost || arrive >= f.deadline_us) && !f.deliver_pending) {
    f.reply = Reply::Timeout();
    f.deliver_pending = true;
    Push(std::max(f.deadline_us, now_us_), kDeliver, static_cast<int32_t>(id), 0);
  }
}

void Simulator::StartSleep(int client, int64_t us, std::coroutine_handle<> h) {
  const int64_t wake = us <= 0 ? now_us_ : MonotonicClockOf(client).TrueAfterUs(now_us_, us);
  Push(std::max(wake, now_us_), kWake, client, reinterpret_cast<uint64_t>(h.address()));
}

void Simulator::Spawn(int client, Task<void> task) {
  auto& spawned = clients_[static_cast<size_t>(client)]->spawned;
  std::erase_if(spawned, [](const Task<void>& t) { return t.done(); });
  Push(now_us_, kWake, client, reinterpret_cast<uint64_t>(task.handle().address()));
  spawned.push_back(std::move(task));
}

bool Simulator::ClientGate(int client, uint8_t kind, int32_t a, uint64_t b) {
  if (ClientRuns(client)) return true;
  const Process& p = *clients_[static_cast<size_t>(client)];
  if (!p.crashed) Push(p.paused_until_us, kind, a, b);  // paused: deferred to its end
  return false;
}

void Simulator::OnNodeReceive(uint32_t id) {
  InFlight& f = inflight_[id];
  const int physical = endpoint_[static_cast<size_t>(f.endpoint)];
  NodeState& node = *nodes_[static_cast<size_t>(physical)];
  if (node.up && now_us_ < node.paused_until_us) {  // a stopped server reads nothing
    Push(node.paused_until_us, kNodeReceive, static_cast<int32_t>(id), 0);
    return;
  }
  if (node.up && !node.conns.empty()) {
    auto it = node.conns.find(f.client);
    if (it != node.conns.end()) {  // a BLPOP of this connection is parked, or commands wait behind one
      if (it->second.held.size() >= kMaxHeldPerConnection) {
        ReplyFromNode(id, Reply::Error("ERR locklab: more than " + std::to_string(kMaxHeldPerConnection) +
                                       " commands wait behind a parked BLPOP on this connection"),
                      now_us_);
        return;
      }
      f.held = true;
      f.park_node = physical;
      it->second.held.push_back(id);
      if (!f.deliver_pending && f.call != nullptr)
        Push(std::max(f.deadline_us, now_us_), kHeldDeadline, static_cast<int32_t>(id), f.use);
      return;
    }
  }
  RunAtNode(id, physical);
}

void Simulator::Replicate(int physical, const std::vector<std::string>& touched) {
  NodeState& node = *nodes_[static_cast<size_t>(physical)];
  for (const auto& key : touched)
    PushRepl(ReplItem{key, node.store.Snapshot(key), repl_generation_}, now_us_ + config_.repl_delay_us);
}

void Simulator::PushRepl(ReplItem item, int64_t due_us) {
  uint32_t rid;
  if (free_repl_.empty()) {
    rid = static_cast<uint32_t>(repl_.size());
    repl_.emplace_back();
  } else {
    rid = free_repl_.back();
    free_repl_.pop_back();
  }
  item.offset = ++repl_sent_;
  repl_last_due_us_ = due_us;
  repl_[rid] = std::move(item);
  Push(due_us, kRepl, static_cast<int32_t>(rid), 0);
}

void Simulator::RunAtNode(uint32_t id, int physical) {
  InFlight& f = inflight_[id];
  NodeState& node = *nodes_[static_cast<size_t>(physical)];
  f.held = false;
  if (!node.up) {
    ReplyFromNode(id, Reply::Error("ERR connection refused (node down)"), now_us_);
    return;
  }
  const int64_t node_ms = node.clock.WallUs(now_us_) / 1000;
  const bool is_master_with_replica = config_.with_replica && !repl_cut_ && physical == 0;
  std::vector<std::string> touched;
  BlockRequest block;
  Reply reply = node.tx.Execute(node.store, f.client, f.cmd, node_ms, is_master_with_replica ? &touched : nullptr, &block);
  Replicate(physical, touched);
  if (!touched.empty()) node.woff[f.client] = repl_sent_;
  if (block.wait && ParkWait(id, physical, block, node_ms, &reply)) return;
  if (block.blocked && !block.wait) {
    if (node.parked < kMaxParkedPerNode) {
      Park(id, physical, SaturatingAdd(node_ms, block.timeout_ms));
      return;
    }
    reply = Reply::Error("ERR locklab: more than " + std::to_string(kMaxParkedPerNode) + " BLPOPs parked at this node");
  }
  if (on_command_) on_command_(now_us_, f.client, f.endpoint, f.cmd, reply);
  AnswerFromNode(physical, id, std::move(reply), CommandCostUs(f.cmd, messages_out_.size()));
  if (node.store.has_ready_keys()) {
    if (node.parked > 0) {
      ServeReady(physical);
    } else {
      node.store.TakeReadyKeys(&scratch_keys_);  // nobody waits: forget them
    }
  }
}

// The node has run the call (and made messages_out_ if it was a PUBLISH) at a cost of cost_us:
// its reply leaves when the node's thread is done with it, or (passes) when its pass writes it.
void Simulator::AnswerFromNode(int physical, uint32_t id, Reply&& reply, double cost_us) {
  if (passes()) {
    JoinPass(physical, id, std::move(reply), cost_us);
    return;
  }
  const int64_t depart = Depart(physical, cost_us);
  ReplyFromNode(id, std::move(reply), depart);
  if (!messages_out_.empty()) SendMessages(depart);
}

// The node is done with the call; its reply (or error) leaves the node at `depart`.
void Simulator::ReplyFromNode(uint32_t id, Reply&& reply, int64_t depart) {
  InFlight& f = inflight_[id];
  f.node_pending = false;
  if (f.deliver_pending) {  // the caller already timed out: the command ran, nobody hears of it
    return;
  }
  if (f.call == nullptr) {  // ... and the timeout has been delivered already
    FreeInFlight(id);
    return;
  }
  const Network::Hop hop = net_.Draw(f.client, f.endpoint, depart);
  // Client passes: a held reply is read when it arrives and held after (ReadHeld).
  const bool read_first = client_passes() && hop.delay_us > 0;
  const int64_t wire = ArriveUs(depart * 1000, /*request=*/false, read_first ? 0 : hop.delay_us, f.client, f.endpoint);
  const int64_t arrive = read_first ? SaturatingAdd(wire, hop.delay_us) : wire;
  const bool lost = hop.dropped();
  f.deliver_pending = true;
  f.reply_held = hop.delay_us > 0 && !read_first;
  if (lost || arrive >= f.deadline_us) {
    f.reply = Reply::Timeout();
    Push(f.deadline_us, kDeliver, static_cast<int32_t>(id), 0);
  } else {
    f.reply = std::move(reply);
    f.reply_unread = read_first;
    f.reply_hold_us = hop.delay_us;
    Push(wire, kDeliver, static_cast<int32_t>(id), 0);
  }
}

void Simulator::OnDeliver(uint32_t id) {
  InFlight& f = inflight_[id];
  const bool crashed = client_crashed(f.client);
  if (!crashed && !ClientGate(f.client, kDeliver, static_cast<int32_t>(id), 0)) return;  // paused
  f.deliver_pending = false;
  PendingCall* call = f.call;
  f.call = nullptr;
  if (!f.node_pending) FreeInFlight(id);
  // Finish moves the reply out of the record before it resumes the caller (which may reuse it);
  // a crashed caller's is never read again (the record's next use gets a reply of its own).
  if (!crashed) call->Finish(std::move(f.reply));
}


void Simulator::OnWake(int client, uint64_t handle) {
  if (!ClientGate(client, kWake, client, handle)) return;
  std::coroutine_handle<>::from_address(reinterpret_cast<void*>(handle)).resume();
}

void Simulator::OnRepl(uint32_t id) {
  ReplItem& item = repl_[id];
  NodeState& replica = *nodes_.back();
  if (item.generation == repl_generation_ && replica.up) {
    replica.store.Apply(item.key, item.entry);
    repl_applied_ = std::max(repl_applied_, item.offset);
  }
  item.key.clear();
  item.entry.reset();
  free_repl_.push_back(id);
}

Status Simulator::Run() {
  for (int c = 0; c < config_.clients; ++c) {
    Process& p = *clients_[static_cast<size_t>(c)];
    if (p.main.valid()) Push(0, kWake, c, reinterpret_cast<uint64_t>(p.main.handle().address()));
  }
  running_ = true;
  // A heap, earliest first (most planned faults are never reached: no full sort).
  std::make_heap(planned_.begin(), planned_.end(), EarliestFirst);
  while (mains_left_ > 0) {
    Event ev;
    if (!Next(&ev)) {
      return Status::Failed("simulation stalled at t=" + std::to_string(now_us_ / 1000) + " ms: " +
                            std::to_string(mains_left_) + " client(s) wait for something that never happens");
    }
    now_us_ = ev.t_us;
    if (now_us_ >= next_stall_us_) RunStalls();  // stalls due up to now first: they move busy-until times
    if (client_costs_ && !ev.charged && ChargeClient(ev)) continue;  // put back until the client's CPU is done
    if (++events_ > config_.max_events) {
      return Status::Failed("simulation exceeded its event limit (" + std::to_string(config_.max_events) +
                            " events) at t=" + std::to_string(now_us_ / 1000) +
                            " ms: fewer requests or clients, or a bigger limit");
    }
    if (now_us_ > config_.max_time_us) {
      return Status::Failed("simulation exceeded its time limit (" + std::to_string(config_.max_time_us / 1000000) +
                            " s of virtual time): a client may be retrying forever");
    }
    if (now_us_ >= next_expire_us_) RunExpireCycles();  // cycles due up to now run first
    const size_t pass_cpu = ev.charged == kChargedInPass ? CpuOfClientEvent(ev) : 0;
    if (ev.charged == kChargedInPass && ReadHeld(ev)) {
      StepClientPass(pass_cpu);
      continue;
    }
    switch (ev.kind) {
      case kNodeReceive: OnNodeReceive(static_cast<uint32_t>(ev.a)); break;
      case kDeliver: OnDeliver(static_cast<uint32_t>(ev.a)); break;
      case kWake: OnWake(ev.a, ev.b); break;
      case kRepl: OnRepl(static_cast<uint32_t>(ev.a)); break;
      case kFault: OnFault(static_cast<uint32_t>(ev.a)); break;
      case kBlockTimeout: OnBlockTimeout(static_cast<uint32_t>(ev.a), ev.b); break;
      case kHeldDeadline: OnHeldDeadline(static_cast<uint32_t>(ev.a), ev.b); break;
      case kDrain: OnDrain(ev.a, static_cast<int>(ev.b)); break;
      case kSubArrive: OnSubArrive(ev.a, ev.b); break;
      case kSubConfirm: OnSubConfirm(ev.a, ev.b); break;
      case kSubDeadline: OnSubDeadline(ev.a, ev.b); break;
      case kMessage: OnMessage(ev.a); break;
      case kWaitTimeout: OnWaitTimeout(ev.a, ev.b); break;
      case kWaitAck: OnWaitAck(static_cast<uint32_t>(ev.a), ev.b); break;
      case kNodePass: OnNodePass(ev.a, ev.b); break;
      case kSendHeld: SendRequest(static_cast<uint32_t>(ev.a), now_us_ * 1000, 0, /*lost=*/false); break;
      case kClientPass: OnClientPass(static_cast<size_t>(ev.a), ev.b); break;
    }
    if (ev.charged == kChargedInPass) StepClientPass(pass_cpu);  // its sends are written: the next
  }
  return Status::Ok();
}

}  // namespace locklab::sim
