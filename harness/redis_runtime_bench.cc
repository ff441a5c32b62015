// Real-Redis runtime speed: uncontended `token` acquire + release (SET NX PX, then the
// compare_and_delete script) through RedisRuntime, each client on its own key, reported as
// acquisitions per second. Next to it, when redis-benchmark is installed, the rate
// redis-benchmark gets for the same two commands on the same server with the same number of
// connections, as a pair rate 1 / (1/r_set + 1/r_evalsha): the target is >= 0.9 x that.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "harness/bench_util.h"
#include "harness/redis_runtime.h"
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

// Requests per second redis-benchmark reports for `command` (-1 when it cannot be run).
double RedisBenchmarkRps(int port, int clients, const std::string& command) {
  const std::string cmd = "redis-benchmark -h 127.0.0.1 -p " + std::to_string(port) + " -c " +
                          std::to_string(clients) + " -n " + std::to_string(clients == 1 ? 20000 : 100000) +
                          " -r 100000 -q " + command + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return -1;
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, p) != nullptr) out += buf;
  pclose(p);
  // "...: 23456.78 requests per second, p50=..." (after \r-separated progress lines)
  const size_t at = out.rfind(" requests per second");
  if (at == std::string::npos) return -1;
  size_t start = out.rfind(' ', at - 1);
  start = start == std::string::npos ? 0 : start + 1;
  return std::atof(out.substr(start, at - start).c_str());
}

void BM_RedisTokenAcquireRelease(benchmark::State& state) {
  const int clients = static_cast<int>(state.range(0));
  int64_t acquired = 0;
  double seconds = 0;
  int port = 0;
  for (auto _ : state) {
    state.PauseTiming();
    BackendConfig cfg;
    cfg.clients = clients;
    cfg.nodes = 1;
    cfg.command_timeout_us = 2'000'000;
    std::unique_ptr<RedisRuntime> rt = bench::StartRedisRuntime(state, cfg);
    if (!rt) return;
    port = rt->servers()->port(0);
    for (int c = 0; c < clients; ++c) rt->StartClient(c, AcquireReleaseLoop(rt->env(c), bench::kRunMs, &acquired));
    state.ResumeTiming();
    if (!bench::RunToEnd(state, *rt, &seconds)) return;
    state.PauseTiming();
    // The same two commands from redis-benchmark, on the same server, same connections.
    const double set = RedisBenchmarkRps(port, clients, "SET bench:__rand_int__ tok NX PX 10000");
    const double eval = RedisBenchmarkRps(
        port, clients, "EVALSHA " + sim::ScriptSha1(Script::kCompareAndDelete) + " 1 bench:__rand_int__ tok");
    if (set > 0 && eval > 0) state.counters["redis_benchmark_pairs_per_s"] = 1.0 / (1.0 / set + 1.0 / eval);
    rt.reset();  // stops the server
    state.ResumeTiming();
  }
  state.counters["acquisitions_per_s"] = seconds > 0 ? static_cast<double>(acquired) / seconds : 0;
  state.counters["clients"] = clients;
}

BENCHMARK(BM_RedisTokenAcquireRelease)->Arg(1)->Arg(50)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace locklab
