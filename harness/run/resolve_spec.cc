// ResolveSpec: fills in a RunSpec's defaults and checks every field before anything runs.
#include <string>
#include <vector>

#include "algorithms/lock.h"
#include "algorithms/retry.h"
#include "harness/run/run_spec.h"
#include "harness/run/workload.h"

namespace locklab {
namespace {

constexpr int kMaxClients = 100'000;
constexpr int kMaxAppServers = 1000;
constexpr int64_t kMaxRequests = 100'000'000;
constexpr int kMaxNodes = 15;

bool Fail(std::string* error, std::string msg) {
  *error = std::move(msg);
  return false;
}


}  // namespace

bool ResolveSpec(RunSpec* s, std::string* error) {
  if (s->backend != "sim" && s->backend != "redis")
    return Fail(error, "unknown backend '" + s->backend + "' (sim or redis)");
  const AlgorithmInfo* alg = FindAlgorithm(s->algorithm);
  if (alg == nullptr) {
    std::string names;
    for (const auto& a : Algorithms()) names += (names.empty() ? "" : ", ") + a.name;
    return Fail(error, "unknown algorithm '" + s->algorithm + "' (" + names + ")");
  }
  if (!s->algorithm_options.Resolve(s->algorithm, alg->options, error)) return false;
  const RetryInfo* retry = FindRetryPolicy(s->retry);
  if (retry == nullptr) {
    std::string names;
    for (const auto& r : RetryPolicies()) names += (names.empty() ? "" : ", ") + r.name;
    return Fail(error, "unknown retry policy '" + s->retry + "' (" + names + ")");
  }
  if (!s->retry_options.Resolve("retry " + s->retry, retry->options, error)) return false;
  for (const auto& spec : retry->options) {
    int64_t v = 0;
    if (spec.choices.empty() && !s->retry_options.GetInt(spec.name, &v, error)) return false;
    if (spec.choices.empty() && v < 0) return Fail(error, "retry option " + spec.name + " must be >= 0");
  }
  for (const auto& spec : alg->options) {
    int64_t v = 0;
    if (spec.choices.empty() && !s->algorithm_options.GetInt(spec.name, &v, error)) return false;
  }
  WorkloadKind wk;
  if (!ParseWorkload(s->workload, &wk)) return Fail(error, "unknown workload '" + s->workload + "' (counter, seckill)");
  if (s->clients < 1 || s->clients > kMaxClients)
    return Fail(error, "clients must be in [1, " + std::to_string(kMaxClients) + "]");
  if (s->app_servers < 1 || s->app_servers > kMaxAppServers)
    return Fail(error, "app_servers must be in [1, " + std::to_string(kMaxAppServers) + "]");
  if (s->requests < 0 || s->requests > kMaxRequests)
    return Fail(error, "requests must be in [0, " + std::to_string(kMaxRequests) + "]");
  if (s->ttl_ms < 1) return Fail(error, "ttl_ms must be >= 1");
  if (s->hold_ms < 0) return Fail(error, "hold_ms must be >= 0");
  if (s->acquire_timeout_ms < 0) return Fail(error, "acquire_timeout_ms must be >= 0");
  if (s->command_timeout_ms < 1) return Fail(error, "command_timeout_ms must be >= 1");
  if (s->max_duration_ms < 1) return Fail(error, "max_duration_ms must be >= 1");
  if (s->stock < 0) return Fail(error, "stock must be >= 0");
  if (s->nodes == 0) s->nodes = alg->nodes;
  if (s->nodes < 1 || s->nodes > kMaxNodes) return Fail(error, "nodes must be in [1, " + std::to_string(kMaxNodes) + "]");
  const FaultSpec& f = s->faults;
  if (f.gc_pause_ms < 0) return Fail(error, "gc_pause_ms must be >= 0");
  if (f.gc_pause_rate < 0 || f.gc_pause_rate > 1000) return Fail(error, "gc_pause_rate must be in [0, 1000] per second");
  if (f.net_delay_ms < 0 || f.net_delay_ms > 60'000) return Fail(error, "net_delay_ms must be in [0, 60000]");
  NetSetting::Dist d;
  if (!ParseNetDist(f.net_dist, &d)) return Fail(error, "net_dist must be constant, uniform or long-tail");
  if (f.net_loss < 0 || f.net_loss >= 1) return Fail(error, "net_loss must be in [0, 1)");
  if (f.clock_skew_ms < 0) return Fail(error, "clock_skew_ms must be >= 0");
  if (f.clock_drift_ppm < 0 || f.clock_drift_ppm > 100'000) return Fail(error, "clock_drift_ppm must be in [0, 100000]");
  for (const FaultAction& a : f.plan) {
    if (Status st = ValidateFault(a, FaultWorld{s->clients, s->nodes, s->replica}); !st.ok())
      return Fail(error, st.message());
  }
  if (s->backend == "sim" && !s->redis.empty()) return Fail(error, "--redis only applies to --backend redis");
  if (!s->client_plans.empty()) {
    if (static_cast<int>(s->client_plans.size()) != s->clients)
      return Fail(error, "client_plans has " + std::to_string(s->client_plans.size()) + " entries for " +
                             std::to_string(s->clients) + " clients (give one per client)");
    int64_t total = 0;
    for (size_t i = 0; i < s->client_plans.size(); ++i) {
      const ClientPlan& p = s->client_plans[i];
      const std::string where = "client_plans[" + std::to_string(i) + "]";
      if (p.start_ms < 0 || p.hold_ms < 0) return Fail(error, where + ": start_ms and hold_ms must be >= 0");
      if (p.requests < 0 || p.requests > kMaxRequests)
        return Fail(error, where + ": requests must be in [0, " + std::to_string(kMaxRequests) + "]");
      if (p.acquire_timeout_ms < -1) return Fail(error, where + ": acquire_timeout_ms must be >= 0 (or -1: the run's)");
      total += p.requests;
    }
    s->requests = total;  // what the report shows; the plans decide who makes them
  }
  return true;
}

}  // namespace locklab
