// The simulator's micro benchmark workload (sim/simulator_bench.cc), shared with the end-to-end
// benchmark (harness/bench/end_to_end_bench.cc), which reports its own figures as ratios of this
// one measured in the same process.
#pragma once

#include <cstdint>
#include <string>

#include "algorithms/env.h"
#include "sim/simulator.h"

namespace locklab::sim::bench {

// Each client does SET NX PX / GET / compare-and-delete on its own key, as lock code does.
inline Task<void> CommandLoop(Env& env, int rounds) {
  const std::string key = "k" + std::to_string(env.client_id());
  for (int i = 0; i < rounds; ++i) {
    co_await env.Send(0, Command::Of("SET", key, "tok", "NX", "PX", "1000"));
    co_await env.Send(0, Command::Of("GET", key));
    co_await env.Send(0, Command::Run(Script::kCompareAndDelete, 1, key, "tok"));
  }
}

// Costs shaped like harness/profiles/default.json (every figure drawn, clients in one process).
inline CostModel DrawnCosts() {
  CostModel m;
  m.name = "bench";
  m.node.command_us = CostDist{{{0, 5.2}, {0.5, 5.7}, {0.9, 5.9}, {0.95, 8.3}, {1, 10.2}}};
  m.node.wake_us = CostDist{{{0, 0}, {0.05, 3.2}, {0.9, 3.8}, {0.95, 29}, {1, 30.4}}};
  m.node.script_us = CostDist{{{0, 6.2}, {0.9, 6.6}, {0.95, 8.9}, {1, 9.2}}};
  m.node.script_call_us = CostDist{{{0, 0.2}, {1, 0.4}}};
  m.client.placement = ClientCosts::Placement::kOneProcess;
  m.client.send_us = CostDist{{{0, 3.3}, {0.9, 3.6}, {1, 3.9}}};
  m.client.reply_us = m.client.send_us;
  m.client.timer_us = CostDist{{{0, 0.3}, {1, 0.43}}};
  m.client.hold_us = CostDist{{{0, 3.0}, {1, 4.0}}};
  m.one_way_us = CostDist{{{0, 3.7}, {0.5, 3.9}, {0.95, 4.7}, {1, 52.9}}};
  return m;
}

// One simulation of `clients` clients doing 30,000 commands in all; returns the commands
// simulated (0 when the run failed: *error says why).
inline int64_t SimulateCommands(int clients, bool drawn_costs, std::string* error) {
  SimConfig cfg;
  cfg.clients = clients;
  cfg.seed = 1;
  if (drawn_costs) cfg.cost = DrawnCosts();
  Simulator sim(cfg);
  const int rounds = 30000 / clients;
  for (int c = 0; c < clients; ++c) sim.StartClient(c, CommandLoop(sim.env(c), rounds));
  if (const Status run = sim.Run(); !run.ok()) {
    *error = run.message();
    return 0;
  }
  return sim.commands_total();
}

}  // namespace locklab::sim::bench
