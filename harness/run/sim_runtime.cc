#include "harness/run/sim_runtime.h"

#include "sim/simulator.h"

namespace locklab {
namespace {

sim::NetModel ToNetModel(const NetSetting& n) {
  sim::NetModel m;
  m.mean_us = n.mean_us;
  m.loss = n.loss;
  switch (n.dist) {
    case NetSetting::Dist::kConstant: m.dist = sim::NetModel::Dist::kConstant; break;
    case NetSetting::Dist::kUniform: m.dist = sim::NetModel::Dist::kUniform; break;
    case NetSetting::Dist::kLongTail: m.dist = sim::NetModel::Dist::kLongTail; break;
  }
  return m;
}

class SimRuntime : public Runtime {
 public:
  SimRuntime(const BackendConfig& cfg, bool trace) : sim_(MakeConfig(cfg)), trace_(trace) {}

  int client_count() const override { return sim_.config().clients; }
  int node_count() const override { return sim_.config().nodes; }
  Env& env(int client) override { return sim_.env(client); }
  int64_t TrueNowUs() override { return sim_.now_us(); }

  void set_history(History* h) override {
    if (trace_)
      sim_.set_command_observer([h](int64_t t, int client, int node, const Command& c, const Reply& r) {
        h->Add(t, client, Ev::kCommand, node, c.ToString() + " -> " + ToString(r));
      });
    sim_.set_fault_observer([h](int64_t t, int client, sim::SimFault kind, int64_t value_us, const std::string& detail) {
      Ev ev = Ev::kFault;
      if (kind == sim::SimFault::kPauseClient) ev = Ev::kPauseStart;
      if (kind == sim::SimFault::kPauseClientEnd) ev = Ev::kPauseEnd;
      if (kind == sim::SimFault::kCrashClient) ev = Ev::kCrash;
      h->Add(t, client, ev, value_us, detail);
    });
  }

  void SetClientClock(int client, const ClockSetting& c) override {
    sim_.SetClientClock(client, c.offset_us, c.drift_ppm);
  }
  void SetNodeClock(int node, const ClockSetting& c) override { sim_.SetNodeClock(node, c.offset_us, c.drift_ppm); }

  bool PlanFault(const FaultAction& f, std::string* error) override {
    using K = FaultAction::Kind;
    const bool client_target = f.kind == K::kPauseClient || f.kind == K::kCrashClient ||
                               f.kind == K::kClientClockJump || f.kind == K::kPartition ||
                               f.kind == K::kDelayMessage;
    const int limit = client_target ? client_count() : node_count();
    if (f.target < 0 || f.target >= limit) {
      *error = std::string(FaultKindName(f.kind)) + ": target " + std::to_string(f.target) + " does not exist (" +
               std::to_string(limit) + (client_target ? " clients)" : " nodes)");
      return false;
    }
    if (f.kind == K::kPartition && (f.node < 0 || f.node >= node_count())) {
      *error = "partition: node " + std::to_string(f.node) + " does not exist";
      return false;
    }
    if (f.kind == K::kFailover && !sim_.config().with_replica) {
      *error = "failover needs a replica: run with replica=true";
      return false;
    }
    if (!f.on_send.empty()) {
      if (f.kind != K::kPauseClient && f.kind != K::kCrashClient) {
        *error = std::string(FaultKindName(f.kind)) + ": on_send applies only to pause_client and crash_client";
        return false;
      }
      if (f.occurrence < 1) {
        *error = std::string(FaultKindName(f.kind)) + ": on_send needs occurrence >= 1";
        return false;
      }
      sim_.PlanFaultOnSend(f.kind == K::kPauseClient ? sim::SimFault::kPauseClient : sim::SimFault::kCrashClient,
                           f.target, f.on_send, f.occurrence, f.duration_us, OnSendText(f));
      return true;
    }
    switch (f.kind) {
      case K::kPauseClient: Plan(sim::SimFault::kPauseClient, f); break;
      case K::kCrashClient: Plan(sim::SimFault::kCrashClient, f); break;
      case K::kClientClockJump: Plan(sim::SimFault::kClientClockJump, f); break;
      case K::kCrashNode: Plan(sim::SimFault::kCrashNode, f); break;
      case K::kRestartNode: Plan(sim::SimFault::kRestartNode, f); break;
      case K::kPauseNode: Plan(sim::SimFault::kPauseNode, f); break;
      case K::kNodeClockJump: Plan(sim::SimFault::kNodeClockJump, f); break;
      case K::kPartition: Plan(sim::SimFault::kPartition, f); break;
      case K::kFailover: Plan(sim::SimFault::kFailover, f); break;
      case K::kDelayMessage: sim_.DelayMessage(f.target, f.command, f.occurrence, f.duration_us); break;
    }
    return true;
  }

  void StartClient(int client, Task<void> main) override { sim_.StartClient(client, std::move(main)); }

  bool Run(const RuntimeLimits& limits, std::string* error) override {
    sim_.SetLimits(limits.max_events, limits.max_duration_us);
    return sim_.Run(error);
  }

  CommandStats Commands() const override {
    CommandStats s;
    s.total = sim_.commands_total();
    s.by_client = sim_.commands_by_client();
    for (const auto& [name, n] : sim_.commands_by_name()) s.by_name[name] = n;
    return s;
  }

 private:
  static sim::SimConfig MakeConfig(const BackendConfig& cfg) {
    sim::SimConfig s;
    s.clients = cfg.clients;
    s.nodes = cfg.nodes;
    s.with_replica = cfg.with_replica;
    s.seed = cfg.seed;
    s.command_timeout_us = cfg.command_timeout_us;
    s.net = ToNetModel(cfg.net);
    // Loopback-like floor: every message takes at least 50 µs even with no injected delay.
    s.net.mean_us += 50;
    return s;
  }
  void Plan(sim::SimFault kind, const FaultAction& f) {
    sim_.PlanFault(kind, f.at_us, f.target, f.node, f.duration_us, f.delta_us);
  }

  sim::Simulator sim_;
  bool trace_;
};

}  // namespace

std::unique_ptr<Runtime> MakeSimRuntime(const BackendConfig& cfg, bool trace_commands) {
  return std::make_unique<SimRuntime>(cfg, trace_commands);
}

}  // namespace locklab
