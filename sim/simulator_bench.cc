// Simulator speed: simulated Redis commands per CPU-second (target: >= 2 million on one core).
// The end-to-end figure (`locklab run` on the retry study, seeds per second) is
// harness/bench/end_to_end_bench.cc.
#include <benchmark/benchmark.h>

#include <string>

#include "sim/bench_workload.h"

namespace locklab::sim {
namespace {

// state.range(1): 0 the legacy model (SimConfig's default), 1 bench::DrawnCosts.
void BM_SimulatedCommands(benchmark::State& state) {
  const int clients = static_cast<int>(state.range(0));
  int64_t total = 0;
  for (auto _ : state) {
    std::string error;
    const int64_t n = bench::SimulateCommands(clients, state.range(1) == 1, &error);
    if (n == 0) state.SkipWithError(error.c_str());
    total += n;
  }
  state.counters["commands_per_cpu_s"] = benchmark::Counter(static_cast<double>(total), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SimulatedCommands)
    ->ArgsProduct({{1, 100, 1000}, {0, 1}})
    ->ArgNames({"clients", "drawn_costs"})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace locklab::sim
