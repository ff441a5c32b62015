// Helpers shared by the real-Redis benchmarks (harness/bench/*_bench.cc): start a RedisRuntime with
// its own servers, run its clients to the end, and time it, reporting failures to the
// benchmark (SkipWithError) instead of aborting. Callers pause the benchmark's timing around
// what they do not want measured (server start-up, teardown).
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>

#include "harness/real/redis_runtime.h"

namespace locklab::bench {

// How long each run drives its clients (true time), in ms.
inline constexpr int64_t kRunMs = 2000;

// A RedisRuntime for cfg on servers it starts itself; nullptr after state.SkipWithError.
inline std::unique_ptr<RedisRuntime> StartRedisRuntime(benchmark::State& state, const BackendConfig& cfg) {
  Result<std::unique_ptr<Runtime>> rt = MakeRedisRuntime(cfg, {});
  if (!rt.ok()) {
    state.SkipWithError(rt.status().message().c_str());
    return nullptr;
  }
  return std::unique_ptr<RedisRuntime>(static_cast<RedisRuntime*>(rt->release()));
}

// Runs rt until its clients finish and adds the run's true time to *seconds; false after
// state.SkipWithError.
inline bool RunToEnd(benchmark::State& state, Runtime& rt, double* seconds) {
  if (const Status run = rt.Run(RuntimeLimits{}); !run.ok()) {
    state.SkipWithError(run.message().c_str());
    return false;
  }
  *seconds += static_cast<double>(rt.TrueNowUs()) / 1e6;
  return true;
}

}  // namespace locklab::bench
