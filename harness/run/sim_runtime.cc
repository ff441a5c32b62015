#include "harness/run/sim_runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "algorithms/command_record.h"
#include "sim/simulator.h"

namespace locklab {
namespace {

class SimRuntime : public Runtime {
 public:
  SimRuntime(const BackendConfig& cfg, bool trace) : sim_(MakeConfig(cfg)), trace_(trace) { OpenLoopLog(); }

  int client_count() const override { return sim_.config().clients; }
  int node_count() const override { return sim_.config().nodes; }
  Env& env(int client) override { return sim_.env(client); }
  int64_t TrueNowUs() override { return sim_.now_us(); }

  void set_history(History* h) override {
    if (trace_) {
      // The command and its reply as a record in the history's buffer; its text (c.ToString() +
      // " -> " + ToString(r)) is written only if a timeline reads it.
      h->set_record_text(&AppendCommandRecordText);
      sim_.set_command_observer([h](int64_t t, int client, int node, const Command& c, const Reply& r) {
        h->AddCommand(t, client, node, [&](std::string* out) { AppendCommandRecord(c, r, out); });
      });
    }
    sim_.set_fault_observer(
        [h](int64_t t, const FaultRecord& r) { h->Add(t, r.client, r.type, r.value, r.detail); });
  }

  void SetClientClock(int client, const ClockSetting& c) override {
    sim_.SetClientClock(client, c.offset_us, c.drift_ppm);
  }
  void SetNodeClock(int node, const ClockSetting& c) override { sim_.SetNodeClock(node, c.offset_us, c.drift_ppm); }

  Status PlanFault(const FaultAction& f) override { return sim_.PlanFault(f); }
  Status PlanPauses(FaultAction pause, sim::PauseDraws draws) override {
    return sim_.PlanPauses(std::move(pause), std::move(draws));
  }

  void StartClient(int client, Task<void> main) override { sim_.StartClient(client, std::move(main)); }

  Status Run(const RuntimeLimits& limits) override {
    sim_.SetLimits(limits.max_events, limits.max_duration_us);
    return sim_.Run();
  }

  std::vector<std::string> UnfiredFaults() const override { return sim_.network().Unfired(); }
  double ClientCpuUs() const override { return static_cast<double>(sim_.client_cpu_ns()) / 1000.0; }

  CommandStats Commands() const override {
    CommandStats s;
    s.total = sim_.commands_total();
    s.by_client = sim_.commands_by_client();
    for (const auto& [name, n] : sim_.commands_by_name()) s.by_name[name] = n;
    return s;
  }

 private:
  // LOCKLAB_SIM_LOOP_LOG=FILE: the client loop's steps, "PASS KIND CLIENT T_US WHAT" (the real
  // runtime's LOCKLAB_LOOP_LOG format, sim/simulator.h's LoopObserver; WHAT: a timer's due time,
  // a pass end's client CPU and wake-ups so far, nothing for a write or a read), to set the two
  // side by side. For one run: each run of a process truncates the file.
  void OpenLoopLog() {
    const char* path = std::getenv("LOCKLAB_SIM_LOOP_LOG");
    if (path == nullptr || *path == 0) return;
    loop_log_.reset(std::fopen(path, "w"));
    if (loop_log_ == nullptr) return;
    sim_.set_loop_observer([f = loop_log_.get()](int64_t pass, char kind, int client, int64_t t_us, int64_t x, int64_t y) {
      std::fprintf(f, "%lld %c %d %lld", static_cast<long long>(pass), kind, client, static_cast<long long>(t_us));
      for (const int64_t v : {x, y})
        if (v >= 0) std::fprintf(f, " %lld", static_cast<long long>(v));
      std::fputc('\n', f);
    });
  }

  static sim::SimConfig MakeConfig(const BackendConfig& cfg) {
    sim::SimConfig s;
    s.clients = cfg.clients;
    s.nodes = cfg.nodes;
    s.with_replica = cfg.with_replica;
    s.seed = cfg.seed;
    s.command_timeout_us = cfg.command_timeout_us;
    s.net = cfg.net;
    s.cost = cfg.cost;
    s.net.mean_us += cfg.cost.legacy_delay_floor_us;  // the legacy model's path; 0 for a profile
    if (cfg.cost.replica_one_way_us > 0)
      s.repl_delay_us = std::max<int64_t>(1, std::llround(cfg.cost.replica_one_way_us));
    return s;
  }

  struct CloseFile {
    void operator()(FILE* f) const { std::fclose(f); }
  };
  std::unique_ptr<FILE, CloseFile> loop_log_;  // before sim_: closed after the observer's last use
  sim::Simulator sim_;
  bool trace_;
};

}  // namespace

std::unique_ptr<Runtime> MakeSimRuntime(const BackendConfig& cfg, bool trace_commands) {
  return std::make_unique<SimRuntime>(cfg, trace_commands);
}

}  // namespace locklab
