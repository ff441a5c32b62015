// Runtime: what the harness needs from a backend to run clients and collect a history.
// Two implementations: SimRuntime (sim_runtime.h, the deterministic simulator) and
// RedisRuntime (redis_runtime.h, real redis-server processes driven by hiredis + libevent).
//
// Faults are planned before Run() as absolute true times (µs from the start of the run), or, for
// client pauses and crashes with FaultAction::on_send, as triggers on a client's n-th command.
// A runtime that cannot apply a fault exactly says so in Notes() (never silently).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "algorithms/env.h"
#include "algorithms/status.h"
#include "algorithms/task.h"
#include "sim/cost_model.h"
#include "sim/fault.h"
#include "sim/history.h"
#include "sim/net_model.h"
#include "sim/pause_draws.h"

namespace locklab {

// The fault plan (FaultAction, its names and its one check, ValidateFault) is sim/fault.h;
// the network model (NetSetting = sim::NetModel) is sim/net_model.h: both runtimes share them.
using NetSetting = sim::NetModel;
using sim::NetDistName;
using sim::ParseNetDist;

struct ClockSetting {
  int64_t offset_us = 0;    // wall clock offset from true time
  double drift_ppm = 0;     // both clocks run (1 + drift_ppm/1e6) times as fast as true time
};

// What both backends are built from.
struct BackendConfig {
  int clients = 1;
  int nodes = 1;              // Redis endpoints the algorithm addresses
  bool with_replica = false;  // endpoint 0 is a master with one asynchronous replica
  // Real backend only: three redis-sentinel watch endpoint 0 and its replica, clients find the
  // master through them, and a failover fault only kills the master: Sentinel promotes.
  bool failover_by_sentinel = false;
  uint64_t seed = 1;
  int64_t command_timeout_us = 1'000'000;  // a command with no reply by then is kTimeout
  NetSetting net;
  sim::CostModel cost = sim::LegacyCostModel();  // simulator only: what each step costs
  bool trace_commands = true;  // record every executed command in the history (timelines); benchmarks
                               // that compare with libraries logging only lock events turn it off
};

struct RuntimeLimits {
  int64_t max_duration_us = 600'000'000;  // stop (with an error) past this much true time
  int64_t max_events = 2'000'000'000;     // simulator only: event budget
};

struct CommandStats {
  int64_t total = 0;
  std::map<std::string, int64_t> by_name;  // "SET", "compare_and_delete", ...
  std::vector<int64_t> by_client;
};

class Runtime {
 public:
  virtual ~Runtime() = default;

  virtual int client_count() const = 0;
  virtual int node_count() const = 0;
  virtual Env& env(int client) = 0;
  // True time now, µs since the run started.
  virtual int64_t TrueNowUs() = 0;
  // The history the runtime appends faults and executed commands to.
  virtual void set_history(History* h) = 0;

  virtual void SetClientClock(int client, const ClockSetting& c) = 0;
  virtual void SetNodeClock(int node, const ClockSetting& c) = 0;
  // Checks `f` (ValidateFault, then what this backend can do) and plans it; Invalid when it is
  // not a valid fault for this world or the runtime cannot do it at all.
  virtual Status PlanFault(const FaultAction& f) = 0;
  // Plans `pause` (a kPauseClient planned at a time) once at each of the times `draws` gives
  // (sim/pause_draws.h; rising): the same as PlanFault with each time in turn, which is what this
  // default does; the simulator checks and stores the pause once for all of them and draws each
  // time when the one before is reached (a run plans hundreds per client and reaches a few).
  virtual Status PlanPauses(FaultAction pause, sim::PauseDraws draws) {
    for (size_t i = 0; i < draws.count; ++i) {
      pause.at_us = draws.Next();
      if (Status s = PlanFault(pause); !s.ok()) return s;
    }
    return Status::Ok();
  }

  // Starts `main` as client `client`'s main task when Run() begins.
  virtual void StartClient(int client, Task<void> main) = 0;
  // Runs until every client's main task finished (or crashed). Failed when a limit was hit or
  // the backend failed.
  virtual Status Run(const RuntimeLimits& limits) = 0;

  virtual CommandStats Commands() const = 0;
  // What the runtime wants the report to say about how faults were applied (real backends:
  // measured delays, refusals). Empty for the simulator.
  virtual std::vector<std::string> Notes() const { return {}; }
  // The planned faults fired by a client's n-th command (delay_message, on_send) whose n-th
  // command never came: one line each (sim::Network::Unfired).
  virtual std::vector<std::string> UnfiredFaults() const = 0;
  // CPU the client process(es) spent in the last Run, µs: the simulator's charged client costs
  // (every client process's summed), the real runtime's thread CPU (user + system, getrusage
  // RUSAGE_THREAD: its one event loop with every client, history included). < 0: not known.
  virtual double ClientCpuUs() const { return -1; }
};

}  // namespace locklab
