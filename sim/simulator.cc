#include "sim/simulator.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cmath>
#include <limits>
#include <optional>

namespace locklab::sim {

namespace {

enum EventKind : uint8_t {
  kNodeReceive, kDeliver, kWake, kRepl, kFault,
  kBlockTimeout,  // a = InFlight id, b = timer token: a parked BLPOP's timeout at its node
  kHeldDeadline,  // a = InFlight id, b = its use: the caller's deadline while parked or held
  kDrain,         // a = physical node, b = client: run the commands held behind an answered BLPOP
  kSubArrive,     // a = client, b = SubRef: a SUBSCRIBE reaches its node
  kSubConfirm,    // a = client, b = SubRef: its answer reaches the client (gated)
  kSubDeadline,   // a = client, b = SubRef: callers whose deadline passed get false (gated)
  kMessage,       // a = client: a published message reaches the client (gated)
  kWaitTimeout,   // a = client, b = waiter id: a WaitMessage's timer (gated)
};

constexpr uint32_t kNoCall = 0xffffffffu;
constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();

// A subscription record named in events: its index in Process::subs and its generation.
uint64_t SubRef(size_t index, uint32_t gen) { return (static_cast<uint64_t>(gen) << 32) | index; }

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? kMaxInt64 : r;
}

// Case-insensitive equality of a command word with an upper-case stored name.
bool SameName(const std::string& word, const std::string& upper) {
  if (word.size() != upper.size()) return false;
  for (size_t i = 0; i < word.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(word[i])) != upper[i]) return false;
  return true;
}

}  // namespace

const char* SimFaultName(SimFault k) {
  switch (k) {
    case SimFault::kPauseClient: return "pause_client";
    case SimFault::kCrashClient: return "crash_client";
    case SimFault::kClientClockJump: return "client_clock_jump";
    case SimFault::kCrashNode: return "crash_node";
    case SimFault::kRestartNode: return "restart_node";
    case SimFault::kPauseNode: return "pause_node";
    case SimFault::kNodeClockJump: return "node_clock_jump";
    case SimFault::kPartition: return "partition";
    case SimFault::kFailover: return "failover";
    case SimFault::kPauseClientEnd: return "pause_client_end";
    case SimFault::kPauseNodeEnd: return "pause_node_end";
    case SimFault::kPromoteReplica: return "promote_replica";
  }
  return "?";
}

struct Simulator::Process {
  // One subscription (endpoint, channel) as the client sees it.
  struct SubRec {
    enum class State : uint8_t { kNone, kPending, kConfirmed };
    int endpoint = 0;
    std::string channel;
    State state = State::kNone;
    uint32_t gen = 0;      // bumped when the record starts over or its connection is lost
    bool refused = false;  // the answer on its way says the node was down
    std::vector<std::pair<SubscribeCall*, int64_t>> callers;  // waiting, with their deadlines
  };

  Clock clock;
  Rng rng{0};
  int64_t paused_until_us = 0;
  bool crashed = false;
  bool main_done = false;
  Task<void> main;
  std::vector<Task<void>> spawned;
  std::unique_ptr<ClientEnv> env;
  std::vector<SubRec> subs;
  int64_t queued_messages = 0;
  int64_t dropped_messages = 0;
  std::deque<std::pair<uint64_t, MessageWait*>> waiters;  // WaitMessage calls, longest waiting first
  uint64_t next_waiter = 0;
};

struct Simulator::NodeState {
  // One client's connection to this node, while a BLPOP of it is parked here or commands of it
  // wait behind one (otherwise there is no entry).
  struct Conn {
    uint32_t parked = kNoCall;
    std::deque<uint32_t> held;
  };

  Store store;
  Clock clock;
  bool up = true;
  int64_t busy_until_us = 0;
  int64_t paused_until_us = 0;
  std::map<int, Conn> conns;                                               // by client
  std::map<std::string, std::deque<uint32_t>, std::less<>> waiting;        // key -> parked BLPOPs, FIFO
  size_t parked = 0;
  std::map<std::string, std::vector<std::pair<int, int>>, std::less<>> subscribers;  // channel -> (client, endpoint)
};

// One command between StartCall and delivery. It owns the command (the caller's frame may be
// gone by the time a late request reaches its node) and lives until both the node side and
// the client side are finished with it.
struct Simulator::InFlight {
  int client = 0;
  int endpoint = 0;
  PendingCall* call = nullptr;
  Command cmd;
  Reply reply;
  int64_t deadline_us = 0;
  uint64_t use = 0;              // this use of the record (events of an earlier use are stale)
  bool node_pending = false;     // the node still has it: a kNodeReceive queued, or parked, or held
  bool deliver_pending = false;  // a kDeliver is queued (reply or timeout decided)
  bool parked = false;           // a BLPOP waiting at node park_node
  bool held = false;             // waiting at node park_node behind its connection's parked BLPOP
  int park_node = -1;            // physical node
  int64_t park_deadline_ms = 0;  // parked: times out once the node's wall clock (ms) is past this
  uint64_t park_timer = 0;       // parked: the token of its live kBlockTimeout event
};

struct Simulator::ReplItem {
  std::string key;
  std::optional<Entry> entry;
  uint32_t generation = 0;
};

struct Simulator::Fault {
  SimFault kind;
  int target;
  int node;
  int64_t duration_us;
  int64_t delta_us;
  int trigger = -1;  // the on_send trigger that planned it (its label goes into the detail)
};

struct Simulator::Matcher {
  int client;
  std::string name;  // upper case, or a script name
  int occurrence;
  int64_t extra_us;
  int seen = 0;
};

struct Simulator::Trigger {
  SimFault kind;
  int client;
  std::string name;  // upper case, a script name, or "*"
  int occurrence;
  int64_t duration_us;
  std::string label;
  int seen = 0;
};

class Simulator::ClientEnv : public Env {
 public:
  ClientEnv(Simulator* sim, int id) : sim_(sim), id_(id) {}
  void StartCall(PendingCall* call) override { sim_->StartCall(id_, call); }
  void StartSleep(int64_t us, std::coroutine_handle<> h) override { sim_->StartSleep(id_, us, h); }
  int node_count() const override { return sim_->config_.nodes; }
  int client_id() const override { return id_; }
  int64_t MonotonicUs() override { return proc().clock.MonotonicUs(sim_->now_us_); }
  int64_t WallUs() override { return proc().clock.WallUs(sim_->now_us_); }
  uint64_t Random() override { return proc().rng.Next(); }
  void Spawn(Task<void> task) override { sim_->Spawn(id_, std::move(task)); }
  void StartSubscribe(SubscribeCall* call) override { sim_->StartSubscribe(id_, call); }
  void StartWaitMessage(MessageWait* wait) override { sim_->StartWaitMessage(id_, wait); }

 private:
  Process& proc() { return *sim_->clients_[static_cast<size_t>(id_)]; }
  Simulator* sim_;
  int id_;
};

Simulator::Simulator(const SimConfig& config) : config_(config), net_rng_(config.seed * 2 + 1) {
  assert(config_.clients >= 1 && config_.nodes >= 1 && config_.service_us >= 1);
  for (int c = 0; c < config_.clients; ++c) {
    auto p = std::make_unique<Process>();
    p->rng = Rng(config_.seed ^ (0x5851f42d4c957f2dULL * static_cast<uint64_t>(c + 1)));
    p->env = std::make_unique<ClientEnv>(this, c);
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
  cmd_by_client_.assign(static_cast<size_t>(config_.clients), 0);
}

Simulator::~Simulator() {
  // Drop pending work first, then the frames: nothing may resume a destroyed coroutine.
  queue_.clear();
  for (auto& p : clients_) {
    p->spawned.clear();
    p->main = Task<void>();
  }
}

Env& Simulator::env(int client) { return *clients_[static_cast<size_t>(client)]->env; }

Store& Simulator::store(int endpoint) { return nodes_[static_cast<size_t>(endpoint_[static_cast<size_t>(endpoint)])]->store; }

bool Simulator::client_crashed(int client) const { return clients_[static_cast<size_t>(client)]->crashed; }

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
}

void Simulator::SetNodeClock(int node, int64_t offset_us, double drift_ppm) {
  auto& c = nodes_[static_cast<size_t>(node)]->clock;
  c.offset_us = offset_us;
  c.drift_ppm = drift_ppm;
}

void Simulator::Push(int64_t t_us, uint8_t kind, int32_t a, uint64_t b) {
  queue_.push(Event{t_us, seq_++, kind, a, b});
}

void Simulator::PlanFault(SimFault kind, int64_t at_us, int target, int node, int64_t duration_us,
                          int64_t delta_us) {
  faults_.push_back(Fault{kind, target, node, duration_us, delta_us, -1});
  Push(std::max<int64_t>(at_us, 0), kFault, static_cast<int32_t>(faults_.size() - 1), 0);
}

namespace {

// A command name as Command::Name() gives it: a script's name as is, a command word upper-cased.
std::string MatchName(const std::string& name) {
  for (int s = 1; s < static_cast<int>(Script::kCount); ++s)
    if (ScriptName(static_cast<Script>(s)) == name) return name;
  std::string upper = name;
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return upper;
}

}  // namespace

void Simulator::DelayMessage(int client, const std::string& name, int occurrence, int64_t extra_us) {
  matchers_.push_back(Matcher{client, MatchName(name), occurrence, extra_us, 0});
}

void Simulator::PlanFaultOnSend(SimFault kind, int client, const std::string& name, int occurrence,
                                int64_t duration_us, const std::string& label) {
  assert(kind == SimFault::kPauseClient || kind == SimFault::kCrashClient);
  triggers_.push_back(Trigger{kind, client, MatchName(name), occurrence, duration_us, label, 0});
}

void Simulator::FireTriggers(int client, const std::string& name) {
  for (size_t i = 0; i < triggers_.size(); ++i) {
    Trigger& t = triggers_[i];
    if (t.client != client || (t.name != "*" && t.name != name)) continue;
    if (++t.seen != t.occurrence) continue;  // fires once: `seen` only grows
    PlanFault(t.kind, now_us_, client, 0, t.kind == SimFault::kPauseClient ? t.duration_us : 0, 0);
    faults_.back().trigger = static_cast<int>(i);
  }
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

int64_t Simulator::DrawDelayUs() {
  const int64_t mean = config_.net.mean_us;
  switch (config_.net.dist) {
    case NetModel::Dist::kConstant: return mean;
    case NetModel::Dist::kUniform: return mean == 0 ? 0 : net_rng_.Uniform(0, 2 * mean);
    case NetModel::Dist::kLongTail: {
      // Lognormal with sigma 1 and the given mean, capped at 20x the mean.
      double v = static_cast<double>(mean) * std::exp(net_rng_.Normal() - 0.5);
      return std::min<int64_t>(static_cast<int64_t>(v), 20 * mean);
    }
  }
  return mean;
}

bool Simulator::Partitioned(int client, int node, int64_t t_us) const {
  for (const auto& p : partitions_)
    if (p.client == client && p.node == node && t_us >= p.from_us && t_us < p.to_us) return true;
  return false;
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

void Simulator::CountCommand(int client, const Command& cmd) {
  ++cmd_total_;
  ++cmd_by_client_[static_cast<size_t>(client)];
  if (cmd.script != Script::kNone) {
    std::string_view n = ScriptName(cmd.script);
    for (auto& [name, count] : cmd_by_name_)
      if (name == n) {
        ++count;
        return;
      }
    cmd_by_name_.emplace_back(std::string(n), 1);
    return;
  }
  const std::string& word = cmd.argv.empty() ? std::string() : cmd.argv[0];
  for (auto& [name, count] : cmd_by_name_)
    if (SameName(word, name)) {
      ++count;
      return;
    }
  cmd_by_name_.emplace_back(cmd.Name(), 1);
}

std::vector<std::pair<std::string, int64_t>> Simulator::commands_by_name() const {
  auto v = cmd_by_name_;
  std::sort(v.begin(), v.end());
  return v;
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
  f.node_pending = f.deliver_pending = f.parked = f.held = false;
  // A BLPOP may wait its own timeout at the node: the command timeout counts from after it.
  if (int64_t block_ms = 0; BlpopTimeoutMs(f.cmd, &block_ms) && block_ms > 0)
    f.deadline_us = SaturatingAdd(f.deadline_us, block_ms > kMaxInt64 / 1000 ? kMaxInt64 : block_ms * 1000);

  int64_t delay = DrawDelayUs();
  std::string name;  // computed once, and only when a matcher or trigger needs it
  if (!matchers_.empty()) {
    for (auto& m : matchers_) {
      if (m.client != client) continue;
      if (name.empty()) name = f.cmd.Name();
      if ((m.name == "*" || m.name == name) && ++m.seen == m.occurrence) delay += m.extra_us;
    }
  }
  const bool lost = net_rng_.Chance(config_.net.loss) || Partitioned(client, f.endpoint, now_us_);
  if (!lost) {
    f.node_pending = true;
    Push(now_us_ + delay, kNodeReceive, static_cast<int32_t>(id), 0);
  }
  if (lost || now_us_ + delay >= f.deadline_us) {
    f.reply = Reply::Timeout();
    f.deliver_pending = true;
    Push(f.deadline_us, kDeliver, static_cast<int32_t>(id), 0);
  }
  // Command-triggered faults: the command is on its way; the fault comes next at this instant.
  if (!triggers_.empty()) {
    if (name.empty()) name = f.cmd.Name();
    FireTriggers(client, name);
  }
}

void Simulator::StartSleep(int client, int64_t us, std::coroutine_handle<> h) {
  const Clock& c = clients_[static_cast<size_t>(client)]->clock;
  int64_t wake = us <= 0 ? now_us_ : c.TrueForMonotonicUs(c.MonotonicUs(now_us_) + us);
  Push(std::max(wake, now_us_), kWake, client, reinterpret_cast<uint64_t>(h.address()));
}

void Simulator::Spawn(int client, Task<void> task) {
  auto& spawned = clients_[static_cast<size_t>(client)]->spawned;
  std::erase_if(spawned, [](const Task<void>& t) { return t.done(); });
  Push(now_us_, kWake, client, reinterpret_cast<uint64_t>(task.handle().address()));
  spawned.push_back(std::move(task));
}

bool Simulator::ClientGate(int client, uint8_t kind, int32_t a, uint64_t b) {
  Process& p = *clients_[static_cast<size_t>(client)];
  if (p.crashed) return false;
  if (now_us_ < p.paused_until_us) {
    Push(p.paused_until_us, kind, a, b);
    return false;
  }
  return true;
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
  for (const auto& key : touched) {
    uint32_t rid;
    if (free_repl_.empty()) {
      rid = static_cast<uint32_t>(repl_.size());
      repl_.emplace_back();
    } else {
      rid = free_repl_.back();
      free_repl_.pop_back();
    }
    repl_[rid] = ReplItem{key, node.store.Snapshot(key), repl_generation_};
    Push(now_us_ + config_.repl_delay_us, kRepl, static_cast<int32_t>(rid), 0);
  }
}

int64_t Simulator::Depart(int physical) {
  NodeState& node = *nodes_[static_cast<size_t>(physical)];
  const int64_t depart = std::max(now_us_, node.busy_until_us) + config_.service_us;
  node.busy_until_us = depart;
  return depart;
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
  Reply reply = node.store.Execute(f.cmd, node_ms, is_master_with_replica ? &touched : nullptr, &block);
  Replicate(physical, touched);
  if (block.blocked) {
    if (node.parked < kMaxParkedPerNode) {
      Park(id, physical, SaturatingAdd(node_ms, block.timeout_ms));
      return;
    }
    reply = Reply::Error("ERR locklab: more than " + std::to_string(kMaxParkedPerNode) + " BLPOPs parked at this node");
  }
  if (on_command_) on_command_(now_us_, f.client, f.endpoint, f.cmd, reply);
  const int64_t depart = Depart(physical);
  ReplyFromNode(id, std::move(reply), depart);
  if (!messages_out_.empty()) SendMessages(depart);
  if (node.store.has_ready_keys()) {
    if (node.parked > 0) {
      ServeReady(physical);
    } else {
      node.store.TakeReadyKeys(&scratch_keys_);  // nobody waits: forget them
    }
  }
}

// The node is done with the call; its reply (or error) leaves the node at `depart`.
void Simulator::ReplyFromNode(uint32_t id, Reply reply, int64_t depart) {
  InFlight& f = inflight_[id];
  f.node_pending = false;
  if (f.deliver_pending) {  // the caller already timed out: the command ran, nobody hears of it
    return;
  }
  if (f.call == nullptr) {  // ... and the timeout has been delivered already
    FreeInFlight(id);
    return;
  }
  const int64_t arrive = depart + DrawDelayUs();
  const bool lost = net_rng_.Chance(config_.net.loss) || Partitioned(f.client, f.endpoint, depart);
  f.deliver_pending = true;
  if (lost || arrive >= f.deadline_us) {
    f.reply = Reply::Timeout();
    Push(f.deadline_us, kDeliver, static_cast<int32_t>(id), 0);
  } else {
    f.reply = std::move(reply);
    Push(arrive, kDeliver, static_cast<int32_t>(id), 0);
  }
}

void Simulator::Park(uint32_t id, int physical, int64_t deadline_ms) {
  InFlight& f = inflight_[id];
  NodeState& node = *nodes_[static_cast<size_t>(physical)];
  f.parked = true;
  f.park_node = physical;
  f.park_deadline_ms = deadline_ms;
  node.conns[f.client].parked = id;
  const auto& argv = f.cmd.argv;
  for (size_t i = 1; i + 1 < argv.size(); ++i) {
    if (std::find(argv.begin() + 1, argv.begin() + static_cast<std::ptrdiff_t>(i), argv[i]) !=
        argv.begin() + static_cast<std::ptrdiff_t>(i))
      continue;  // a key named twice waits once, as in Redis
    node.waiting[argv[i]].push_back(id);
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
  for (const std::string& key : keys) {
    for (;;) {
      auto it = node.waiting.find(key);
      if (it == node.waiting.end() || it->second.empty()) break;
      std::vector<std::string> touched;
      std::optional<std::string> v =
          node.store.PopHead(key, node.clock.WallUs(now_us_) / 1000, is_master_with_replica ? &touched : nullptr);
      if (!v) break;
      const uint32_t id = it->second.front();
      Unpark(id);
      Replicate(physical, touched);
      Reply r = Reply::Array({Reply::Str(key), Reply::Str(std::move(*v))});
      const InFlight& f = inflight_[id];
      if (on_command_) on_command_(now_us_, f.client, f.endpoint, f.cmd, r);
      ReplyFromNode(id, std::move(r), Depart(physical));
    }
  }
}

// The messages of the PUBLISH that just ran, one to each subscriber, leaving with its reply.
void Simulator::SendMessages(int64_t depart) {
  for (const auto& [client, endpoint] : messages_out_) {
    const int64_t arrive = depart + DrawDelayUs();
    const bool lost = net_rng_.Chance(config_.net.loss) || Partitioned(client, endpoint, depart);
    if (!lost) Push(arrive, kMessage, client, 0);
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
  if (on_command_) on_command_(now_us_, f.client, f.endpoint, f.cmd, Reply::Nil());
  ReplyFromNode(id, Reply::Nil(), Depart(physical));
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

void Simulator::OnDeliver(uint32_t id) {
  InFlight& f = inflight_[id];
  const bool crashed = clients_[static_cast<size_t>(f.client)]->crashed;
  if (!crashed && !ClientGate(f.client, kDeliver, static_cast<int32_t>(id), 0)) return;  // paused
  f.deliver_pending = false;
  PendingCall* call = f.call;
  Reply reply = std::move(f.reply);
  f.call = nullptr;
  if (!f.node_pending) FreeInFlight(id);
  if (!crashed) call->Finish(std::move(reply));
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
  const int64_t delay = DrawDelayUs();
  const bool lost = net_rng_.Chance(config_.net.loss) || Partitioned(client, r.endpoint, now_us_);
  if (!lost) Push(now_us_ + delay, kSubArrive, client, SubRef(index, r.gen));
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
    depart = Depart(physical);
  }
  const int64_t arrive = depart + DrawDelayUs();
  const bool lost = net_rng_.Chance(config_.net.loss) || Partitioned(client, r.endpoint, depart);
  if (!lost) Push(arrive, kSubConfirm, client, ref);
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
  const int64_t at = c.TrueForMonotonicUs(c.MonotonicUs(now_us_) + wait->timeout_us);
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

void Simulator::OnWake(int client, uint64_t handle) {
  if (!ClientGate(client, kWake, client, handle)) return;
  std::coroutine_handle<>::from_address(reinterpret_cast<void*>(handle)).resume();
}

void Simulator::OnRepl(uint32_t id) {
  ReplItem& item = repl_[id];
  NodeState& replica = *nodes_.back();
  if (item.generation == repl_generation_ && replica.up) replica.store.Apply(item.key, item.entry);
  item.key.clear();
  item.entry.reset();
  free_repl_.push_back(id);
}

void Simulator::OnFault(uint32_t id) {
  const Fault f = faults_[id];
  auto report = [&](int client, const std::string& detail) {
    if (!on_fault_) return;
    const std::string& label = f.trigger >= 0 ? triggers_[static_cast<size_t>(f.trigger)].label : std::string();
    on_fault_(now_us_, client, f.kind, f.duration_us != 0 ? f.duration_us : f.delta_us,
              label.empty() ? detail : detail + " " + label);
  };
  auto node_at = [&](int endpoint) -> NodeState& {
    return *nodes_[static_cast<size_t>(endpoint_[static_cast<size_t>(endpoint)])];
  };
  switch (f.kind) {
    case SimFault::kPauseClient: {
      Process& p = *clients_[static_cast<size_t>(f.target)];
      if (p.crashed) return;
      const int64_t until = now_us_ + f.duration_us;
      if (until <= p.paused_until_us) return;  // already paused for longer
      const bool was_paused = now_us_ < p.paused_until_us;
      p.paused_until_us = until;
      if (!was_paused) report(f.target, "pause " + std::to_string(f.duration_us / 1000) + " ms");
      faults_.push_back(Fault{SimFault::kPauseClientEnd, f.target, 0, 0, 0});
      Push(until, kFault, static_cast<int32_t>(faults_.size() - 1), 0);
      return;
    }
    case SimFault::kPauseClientEnd: {
      Process& p = *clients_[static_cast<size_t>(f.target)];
      if (!p.crashed && p.paused_until_us == now_us_) report(f.target, "resume");
      return;
    }
    case SimFault::kCrashClient: {
      Process& p = *clients_[static_cast<size_t>(f.target)];
      if (p.crashed) return;
      p.crashed = true;
      if (!p.main_done && p.main.valid()) --mains_left_;
      report(f.target, "crash");
      return;
    }
    case SimFault::kClientClockJump:
      clients_[static_cast<size_t>(f.target)]->clock.jumps_us += f.delta_us;
      report(f.target, "wall clock jumps " + std::to_string(f.delta_us / 1000) + " ms");
      return;
    case SimFault::kCrashNode: {
      NodeState& n = node_at(f.target);
      DropConnections(endpoint_[static_cast<size_t>(f.target)]);
      n.up = false;
      n.store.Clear();
      if (&n == nodes_[0].get()) ++repl_generation_;
      report(-1, "node " + std::to_string(f.target) + " crashes (data lost)");
      return;
    }
    case SimFault::kRestartNode: {
      NodeState& n = node_at(f.target);
      DropConnections(endpoint_[static_cast<size_t>(f.target)]);
      n.up = true;
      n.store.Clear();
      n.busy_until_us = now_us_;
      report(-1, "node " + std::to_string(f.target) + " restarts empty");
      return;
    }
    case SimFault::kPauseNode: {
      NodeState& n = node_at(f.target);
      n.paused_until_us = std::max(n.paused_until_us, now_us_ + f.duration_us);
      report(-1, "node " + std::to_string(f.target) + " pauses " + std::to_string(f.duration_us / 1000) + " ms");
      faults_.push_back(Fault{SimFault::kPauseNodeEnd, f.target, 0, 0, 0});
      Push(n.paused_until_us, kFault, static_cast<int32_t>(faults_.size() - 1), 0);
      return;
    }
    case SimFault::kPauseNodeEnd:
      if (node_at(f.target).paused_until_us == now_us_) report(-1, "node " + std::to_string(f.target) + " resumes");
      return;
    case SimFault::kNodeClockJump:
      node_at(f.target).clock.jumps_us += f.delta_us;
      for (const auto& [client, conn] : node_at(f.target).conns)  // parked BLPOPs time out by this clock
        if (conn.parked != kNoCall) ScheduleBlockTimeout(conn.parked);
      report(-1, "node " + std::to_string(f.target) + " wall clock jumps " + std::to_string(f.delta_us / 1000) + " ms");
      return;
    case SimFault::kPartition:
      partitions_.push_back(Partition{f.target, f.node, now_us_, now_us_ + f.duration_us});
      report(f.target, "cut off from node " + std::to_string(f.node) + " for " +
                           std::to_string(f.duration_us / 1000) + " ms");
      return;
    case SimFault::kFailover: {
      if (!config_.with_replica || endpoint_[0] != 0) {
        report(-1, "failover ignored: node 0 has no replica");
        return;
      }
      // First the replica is cut off: replication in flight and later writes never reach it.
      repl_cut_ = true;
      ++repl_generation_;
      report(-1, "node 0's replica is cut off from its master");
      faults_.push_back(Fault{SimFault::kPromoteReplica, 0, 0, 0, 0});
      Push(now_us_ + f.duration_us, kFault, static_cast<int32_t>(faults_.size() - 1), 0);
      return;
    }
    case SimFault::kPromoteReplica: {
      NodeState& master = *nodes_[0];
      DropConnections(0);
      master.up = false;
      master.store.Clear();
      endpoint_[0] = static_cast<int>(nodes_.size() - 1);
      report(-1, "node 0's master crashes; its replica is promoted in its place (unreplicated writes lost)");
      return;
    }
  }
}

bool Simulator::Run(std::string* error) {
  for (int c = 0; c < config_.clients; ++c) {
    Process& p = *clients_[static_cast<size_t>(c)];
    if (p.main.valid()) Push(0, kWake, c, reinterpret_cast<uint64_t>(p.main.handle().address()));
  }
  while (mains_left_ > 0) {
    if (queue_.empty()) {
      *error = "simulation stalled at t=" + std::to_string(now_us_ / 1000) + " ms: " +
               std::to_string(mains_left_) + " client(s) wait for something that never happens";
      return false;
    }
    const Event ev = queue_.top();
    queue_.pop();
    now_us_ = ev.t_us;
    if (++events_ > config_.max_events) {
      *error = "simulation exceeded its event limit (" + std::to_string(config_.max_events) +
               " events) at t=" + std::to_string(now_us_ / 1000) + " ms: fewer requests or clients, or a bigger limit";
      return false;
    }
    if (now_us_ > config_.max_time_us) {
      *error = "simulation exceeded its time limit (" + std::to_string(config_.max_time_us / 1000000) +
               " s of virtual time): a client may be retrying forever";
      return false;
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
    }
  }
  return true;
}

}  // namespace locklab::sim
