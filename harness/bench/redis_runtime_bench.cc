// Real-Redis runtime speed: uncontended `token` acquire + release (SET NX PX, then the
// compare_and_delete script) through RedisRuntime, each client on its own key, reported as
// acquisitions per second. Next to it, when redis-benchmark is installed, the rate
// redis-benchmark gets for the same two commands on the same server with the same number of
// connections, as a pair rate 1 / (1/r_set + 1/r_evalsha): the target is >= 0.9 x that.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "harness/bench/bench_util.h"
#include "harness/bench/redis_benchmark.h"
#include "harness/real/redis_runtime.h"
#include "sim/scripts.h"

namespace locklab {
namespace {

Task<void> AcquireReleaseLoop(Env& env, int64_t until_ms, int64_t* acquired) {
  const std::string key = "bench:" + std::to_string(env.client_id());
  while (env.MonotonicMs() < until_ms) {
    const std::string tok = env.RandomToken(8);
    Reply set = co_await env.Send(0, Command::Of("SET", key, tok, "NX", "PX", "10000"));
    Reply del = co_await env.Send(0, Command::Run(Script::kCompareAndDelete, 1, key, tok));
    if (set.is_ok() && del.is_int(1)) ++*acquired;
  }
}

void BM_RedisTokenAcquireRelease(benchmark::State& state) {
  const int clients = static_cast<int>(state.range(0));
  int64_t acquired = 0;
  double seconds = 0;
  for (auto _ : state) {
    state.PauseTiming();
    BackendConfig cfg;
    cfg.clients = clients;
    cfg.nodes = 1;
    cfg.command_timeout_us = 2'000'000;
    std::unique_ptr<RedisRuntime> rt = bench::StartRedisRuntime(state, cfg);
    if (!rt) return;
    for (int c = 0; c < clients; ++c) rt->StartClient(c, AcquireReleaseLoop(rt->env(c), bench::kRunMs, &acquired));
    state.ResumeTiming();
    if (!bench::RunToEnd(state, *rt, &seconds)) return;
    state.PauseTiming();
    // The same two commands from redis-benchmark, on the same server, same connections.
    const PairLimit limit = MeasurePairLimit(*rt->servers(), 0, clients);
    if (limit.pair_rps > 0) state.counters["redis_benchmark_pairs_per_s"] = limit.pair_rps;
    rt.reset();  // stops the server
    state.ResumeTiming();
  }
  state.counters["acquisitions_per_s"] = seconds > 0 ? static_cast<double>(acquired) / seconds : 0;
  state.counters["clients"] = clients;
}

BENCHMARK(BM_RedisTokenAcquireRelease)->Arg(1)->Arg(50)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace locklab
