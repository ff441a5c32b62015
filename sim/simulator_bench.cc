// Simulator speed: simulated Redis commands per CPU-second (target: >= 2 million on one core).
#include <benchmark/benchmark.h>

#include <string>

#include "algorithms/env.h"
#include "sim/simulator.h"

namespace locklab::sim {
namespace {

// Each client does SET NX PX / GET / compare-and-delete on its own key, as lock code does.
Task<void> Loop(Env& env, int rounds) {
  const std::string key = "k" + std::to_string(env.client_id());
  for (int i = 0; i < rounds; ++i) {
    co_await env.Send(0, Command::Of("SET", key, "tok", "NX", "PX", "1000"));
    co_await env.Send(0, Command::Of("GET", key));
    co_await env.Send(0, Command::Run(Script::kCompareAndDelete, 1, key, "tok"));
  }
}

void BM_SimulatedCommands(benchmark::State& state) {
  const int clients = static_cast<int>(state.range(0));
  const int rounds = 30000 / clients;
  int64_t total = 0;
  for (auto _ : state) {
    SimConfig cfg;
    cfg.clients = clients;
    cfg.seed = 1;
    Simulator sim(cfg);
    for (int c = 0; c < clients; ++c) sim.StartClient(c, Loop(sim.env(c), rounds));
    if (const Status run = sim.Run(); !run.ok()) state.SkipWithError(run.message().c_str());
    total += sim.commands_total();
  }
  state.counters["commands_per_cpu_s"] = benchmark::Counter(static_cast<double>(total), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SimulatedCommands)->Arg(1)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace locklab::sim
