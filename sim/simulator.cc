#include "sim/simulator.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cmath>
#include <optional>

namespace locklab::sim {

namespace {

enum EventKind : uint8_t { kNodeReceive, kDeliver, kWake, kRepl, kFault };

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
  Clock clock;
  Rng rng{0};
  int64_t paused_until_us = 0;
  bool crashed = false;
  bool main_done = false;
  Task<void> main;
  std::vector<Task<void>> spawned;
  std::unique_ptr<ClientEnv> env;
};

struct Simulator::NodeState {
  Store store;
  Clock clock;
  bool up = true;
  int64_t busy_until_us = 0;
  int64_t paused_until_us = 0;
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
  bool node_pending = false;     // a kNodeReceive is still queued
  bool deliver_pending = false;  // a kDeliver is queued (reply or timeout decided)
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
  for (int n = 0; n < physical; ++n) nodes_.push_back(std::make_unique<NodeState>());
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
  f.node_pending = f.deliver_pending = false;

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
  NodeState& node = *nodes_[static_cast<size_t>(endpoint_[static_cast<size_t>(f.endpoint)])];
  if (node.up && now_us_ < node.paused_until_us) {  // a stopped server reads nothing
    Push(node.paused_until_us, kNodeReceive, static_cast<int32_t>(id), 0);
    return;
  }
  f.node_pending = false;
  Reply reply;
  int64_t depart = now_us_;
  if (!node.up) {
    reply = Reply::Error("ERR connection refused (node down)");
  } else {
    const int64_t node_ms = node.clock.WallUs(now_us_) / 1000;
    const bool is_master_with_replica = config_.with_replica && !repl_cut_ && &node == nodes_[0].get();
    std::vector<std::string> touched;
    reply = node.store.Execute(f.cmd, node_ms, is_master_with_replica ? &touched : nullptr);
    for (auto& key : touched) {
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
    if (on_command_) on_command_(now_us_, f.client, f.endpoint, f.cmd, reply);
    depart = std::max(now_us_, node.busy_until_us) + config_.service_us;
    node.busy_until_us = depart;
  }
  if (f.deliver_pending) {  // the caller already timed out: the command ran, nobody hears of it
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
      n.up = false;
      n.store.Clear();
      if (&n == nodes_[0].get()) ++repl_generation_;
      report(-1, "node " + std::to_string(f.target) + " crashes (data lost)");
      return;
    }
    case SimFault::kRestartNode: {
      NodeState& n = node_at(f.target);
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
    }
  }
  return true;
}

}  // namespace locklab::sim
