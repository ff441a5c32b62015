// Redlock's acquire latency on 5 real nodes next to the token lock's on 1 node: uncontended,
// 1 client, through RedisRuntime, the algorithms as registered (FindAlgorithm), ttl 10 s, each
// TryAcquire followed by its Release. Counters: mean (and median, p99) acquire latency in µs,
// timed around TryAcquire alone. The target is redlock <= 1.3 x token: the redlock row
// carries the ratio (vs_token) when the token row ran first, and it is printed. Both on bare
// loopback and with a LAN-like one-way delay (0.25 ms) held in the runtime.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/lock.h"
#include "harness/bench/bench_util.h"
#include "harness/real/redis_runtime.h"

namespace locklab {
namespace {

struct Latencies {
  std::vector<int64_t> acquire_us;
  int64_t failed = 0;  // attempts that did not acquire (none expected: nobody else holds it)
};

Task<void> AcquireReleaseLoop(Env& env, Lock& lock, int64_t until_ms, Latencies* out) {
  while (env.MonotonicMs() < until_ms) {
    const int64_t t0 = env.MonotonicUs();
    const Outcome o = co_await lock.TryAcquire();
    const int64_t t1 = env.MonotonicUs();
    if (o != Outcome::kOk) {
      ++out->failed;
      continue;
    }
    out->acquire_us.push_back(t1 - t0);
    co_await lock.Release();
  }
}

// The token row's mean per one-way network delay, for the redlock row's ratio.
std::map<int64_t, double> g_token_mean_us;

// net_us: one-way delay the runtime adds to every command and reply (0: bare loopback). On
// loopback the 5 servers and the client share 2 cores, so the "parallel" SETs are served one
// after another; with a LAN-like delay the round trip dominates, as with 5 separate machines.
void BM_AcquireLatency(benchmark::State& state, const char* algorithm, int nodes, int64_t net_us) {
  const AlgorithmInfo* alg = FindAlgorithm(algorithm);
  if (alg == nullptr) {
    state.SkipWithError("unknown algorithm");
    return;
  }
  LockConfig lc;
  lc.ttl_ms = 10000;
  if (Status st = lc.options.Resolve(algorithm, alg->options); !st.ok()) {
    state.SkipWithError(st.message().c_str());
    return;
  }
  Latencies lat;
  double seconds = 0;
  for (auto _ : state) {
    state.PauseTiming();
    BackendConfig cfg;
    cfg.clients = 1;
    cfg.nodes = nodes;
    cfg.command_timeout_us = 2'000'000;
    cfg.net.mean_us = net_us;
    std::unique_ptr<RedisRuntime> rt = bench::StartRedisRuntime(state, cfg);
    if (!rt) return;
    std::unique_ptr<Lock> lock = alg->make(rt->env(0), lc);
    rt->StartClient(0, AcquireReleaseLoop(rt->env(0), *lock, bench::kRunMs, &lat));
    state.ResumeTiming();
    if (!bench::RunToEnd(state, *rt, &seconds)) return;
    state.PauseTiming();
    rt.reset();  // stops the servers
    state.ResumeTiming();
  }
  if (lat.acquire_us.empty()) {
    state.SkipWithError("no acquisition succeeded");
    return;
  }
  std::sort(lat.acquire_us.begin(), lat.acquire_us.end());
  double sum = 0;
  for (int64_t us : lat.acquire_us) sum += static_cast<double>(us);
  const double mean = sum / static_cast<double>(lat.acquire_us.size());
  const auto at = [&](double q) { return lat.acquire_us[static_cast<size_t>(q * static_cast<double>(lat.acquire_us.size() - 1))]; };
  state.counters["nodes"] = nodes;
  state.counters["acquires"] = static_cast<double>(lat.acquire_us.size());
  state.counters["failed"] = static_cast<double>(lat.failed);
  state.counters["acquire_mean_us"] = mean;
  state.counters["acquire_p50_us"] = static_cast<double>(at(0.5));
  state.counters["acquire_p99_us"] = static_cast<double>(at(0.99));
  state.counters["net_one_way_us"] = static_cast<double>(net_us);
  if (std::string(algorithm) == "token") g_token_mean_us[net_us] = mean;
  if (std::string(algorithm) == "redlock" && g_token_mean_us.count(net_us) != 0) {
    const double ratio = mean / g_token_mean_us[net_us];
    state.counters["vs_token"] = ratio;
    std::printf("redlock (%d nodes) / token (1 node) mean acquire latency, %s: %.1f / %.1f us = %.2f (target <= 1.3)\n",
                nodes, net_us == 0 ? "bare loopback" : ("+" + std::to_string(net_us) + " us one way").c_str(), mean,
                g_token_mean_us[net_us], ratio);
  }
}

// Token first: the redlock row's ratio needs it.
BENCHMARK_CAPTURE(BM_AcquireLatency, token_1_node, "token", 1, 0)
    ->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_AcquireLatency, redlock_5_nodes, "redlock", 5, 0)
    ->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_AcquireLatency, token_1_node_lan_250us, "token", 1, 250)
    ->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_AcquireLatency, redlock_5_nodes_lan_250us, "redlock", 5, 250)
    ->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace locklab
