// ResolveSpec: fills in a RunSpec's defaults and checks every field before anything runs.
#include <arpa/inet.h>
#include <netdb.h>

#include <cmath>
#include <string>
#include <vector>

#include "algorithms/lock.h"
#include "algorithms/retry.h"
#include "harness/run/profile.h"
#include "harness/run/run_spec.h"
#include "harness/run/workload.h"

namespace locklab {
namespace {

constexpr int kMaxClients = 100'000;
constexpr int kMaxAppServers = 1000;
constexpr int64_t kMaxRequests = 100'000'000;
constexpr int kMaxNodes = 15;
constexpr size_t kMaxRedisServers = 64;
// The longest time any ms field may ask for (about 31 years): its µs, and sums of a few of them,
// stay far inside int64.
constexpr int64_t kMaxMs = 1'000'000'000'000;

// lo <= v <= hi, false for NaN (every comparison with NaN is false).
bool InRange(double v, double lo, double hi) { return v >= lo && v <= hi; }

// backend, algorithm and retry policy by name; their options against their specs.
Status ResolveNames(RunSpec* s) {
  if (s->backend != "sim" && s->backend != "redis")
    return Status::Invalid("unknown backend '" + s->backend + "' (sim or redis)");
  const AlgorithmInfo* alg = FindAlgorithm(s->algorithm);
  if (alg == nullptr) {
    std::string names;
    for (const auto& a : Algorithms()) names += (names.empty() ? "" : ", ") + a.name;
    return Status::Invalid("unknown algorithm '" + s->algorithm + "' (" + names + ")");
  }
  if (Status st = s->algorithm_options.Resolve(s->algorithm, alg->options); !st.ok()) return st;
  const RetryInfo* retry = FindRetryPolicy(s->retry);
  if (retry == nullptr) {
    std::string names;
    for (const auto& r : RetryPolicies()) names += (names.empty() ? "" : ", ") + r.name;
    return Status::Invalid("unknown retry policy '" + s->retry + "' (" + names + ")");
  }
  if (Status st = s->retry_options.Resolve("retry " + s->retry, retry->options); !st.ok()) return st;
  WorkloadKind wk;
  if (!ParseWorkload(s->workload, &wk))
    return Status::Invalid("unknown workload '" + s->workload + "' (counter, seckill)");
  if (alg->lock_free && wk != WorkloadKind::kSeckill)
    return Status::Invalid(s->algorithm + " sells stock kept in Redis: it runs only with --workload seckill");
  if (s->nodes == 0) s->nodes = alg->nodes;
  TraceMode tm;
  if (!ParseTraceMode(s->trace, &tm))
    return Status::Invalid("unknown trace '" + s->trace + "' (commands, locks, none)");
  if (alg->needs_replica) s->replica = true;
  if (s->failover_by != "script" && s->failover_by != "sentinel")
    return Status::Invalid("unknown failover_by '" + s->failover_by + "' (script, sentinel)");
  if (s->failover_by == "sentinel") {
    if (s->backend != "redis")
      return Status::Invalid("--failover-by sentinel needs --backend redis (the simulator promotes the replica itself: "
                             "--failover-by script)");
    if (!s->redis.empty())
      return Status::Invalid("--failover-by sentinel needs locklab's own servers and sentinels: drop --redis");
    s->replica = true;
  }
  return Status::Ok();
}

Status CheckSizes(const RunSpec* s) {
  if (s->clients < 1 || s->clients > kMaxClients)
    return Status::Invalid("clients must be in [1, " + std::to_string(kMaxClients) + "]");
  if (s->app_servers < 1 || s->app_servers > kMaxAppServers)
    return Status::Invalid("app_servers must be in [1, " + std::to_string(kMaxAppServers) + "]");
  if (s->requests < 0 || s->requests > kMaxRequests)
    return Status::Invalid("requests must be in [0, " + std::to_string(kMaxRequests) + "]");
  if (s->ttl_ms < 1) return Status::Invalid("ttl_ms must be >= 1");
  if (s->hold_ms < 0) return Status::Invalid("hold_ms must be >= 0");
  if (s->hold_spread_ms < 0 || s->hold_spread_ms > s->hold_ms)
    return Status::Invalid("hold_spread_ms must be in [0, hold_ms]");
  if (s->node_min_down_ms < 0 || s->node_min_down_ms > kMaxOptionMs)
    return Status::Invalid("node_min_down_ms must be in [0, " + std::to_string(kMaxOptionMs) + "]");
  if (s->acquire_timeout_ms < 0) return Status::Invalid("acquire_timeout_ms must be >= 0");
  if (s->command_timeout_ms < 1) return Status::Invalid("command_timeout_ms must be >= 1");
  if (s->max_duration_ms < 1) return Status::Invalid("max_duration_ms must be >= 1");
  if (s->stock < 0) return Status::Invalid("stock must be >= 0");
  if (!(s->read_ratio >= 0 && s->read_ratio <= 1)) return Status::Invalid("read_ratio must be in [0, 1]");
  if (s->nodes < 1 || s->nodes > kMaxNodes)
    return Status::Invalid("nodes must be in [1, " + std::to_string(kMaxNodes) + "]");
  const std::pair<const char*, int64_t> times[] = {
      {"ttl_ms", s->ttl_ms},
      {"hold_ms", s->hold_ms},
      {"acquire_timeout_ms", s->acquire_timeout_ms},
      {"command_timeout_ms", s->command_timeout_ms},
      {"max_duration_ms", s->max_duration_ms},
      {"gc_pause_ms", s->faults.gc_pause_ms},
      {"clock_skew_ms", s->faults.clock_skew_ms}};
  for (const auto& [name, ms] : times)
    if (ms > kMaxMs) return Status::Invalid(std::string(name) + " must be at most " + std::to_string(kMaxMs));
  return Status::Ok();
}

// The seeded fault rates. NaN and infinities fail every range (InRange).
Status CheckFaultRates(const FaultSpec& f) {
  if (f.gc_pause_ms < 0) return Status::Invalid("gc_pause_ms must be >= 0");
  if (!InRange(f.gc_pause_rate, 0, 1000)) return Status::Invalid("gc_pause_rate must be in [0, 1000] per second");
  if (!InRange(f.net_delay_ms, 0, 60'000)) return Status::Invalid("net_delay_ms must be in [0, 60000]");
  NetSetting::Dist d;
  if (!ParseNetDist(f.net_dist, &d)) return Status::Invalid("net_dist must be constant, uniform or long-tail");
  if (!(f.net_loss >= 0 && f.net_loss < 1)) return Status::Invalid("net_loss must be in [0, 1)");
  if (f.clock_skew_ms < 0) return Status::Invalid("clock_skew_ms must be >= 0");
  if (!InRange(f.clock_drift_ppm, 0, 100'000)) return Status::Invalid("clock_drift_ppm must be in [0, 100000]");
  return Status::Ok();
}

Status CheckClientPlans(RunSpec* s) {
  if (s->client_plans.empty()) return Status::Ok();
  if (static_cast<int>(s->client_plans.size()) != s->clients)
    return Status::Invalid("client_plans has " + std::to_string(s->client_plans.size()) + " entries for " +
                           std::to_string(s->clients) + " clients (give one per client)");
  int64_t total = 0;
  for (size_t i = 0; i < s->client_plans.size(); ++i) {
    const ClientPlan& p = s->client_plans[i];
    const std::string where = "client_plans[" + std::to_string(i) + "]";
    if (p.start_ms < 0 || p.hold_ms < 0) return Status::Invalid(where + ": start_ms and hold_ms must be >= 0");
    if (p.start_ms > kMaxMs || p.hold_ms > kMaxMs || p.acquire_timeout_ms > kMaxMs)
      return Status::Invalid(where + ": times must be at most " + std::to_string(kMaxMs) + " ms");
    if (p.requests < 0 || p.requests > kMaxRequests)
      return Status::Invalid(where + ": requests must be in [0, " + std::to_string(kMaxRequests) + "]");
    if (p.acquire_timeout_ms < -1)
      return Status::Invalid(where + ": acquire_timeout_ms must be >= 0 (or -1: the run's)");
    total += p.requests;
  }
  s->requests = total;  // what the report shows; the plans decide who makes them
  return Status::Ok();
}

}  // namespace

Status CheckRedisAddress(const std::string& address) {
  const std::string where = "--redis " + (address.empty() ? std::string("''") : address);
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size())
    return Status::Invalid(where + ": expected HOST:PORT, e.g. 127.0.0.1:6379");
  const std::string host = address.substr(0, colon);
  if (host.front() == '[')
    return Status::Invalid(where + ": write an IPv6 address without brackets, e.g. ::1:6379");
  const std::string port = address.substr(colon + 1);
  int p = 0;
  for (size_t i = 0; i < port.size() && p <= 65535; ++i) {
    if (port[i] < '0' || port[i] > '9') return Status::Invalid(where + ": port '" + port + "' is not a number");
    p = p * 10 + (port[i] - '0');
  }
  if (p < 1 || p > 65535) return Status::Invalid(where + ": port " + port + " is not in [1, 65535]");
  unsigned char buf[sizeof(in6_addr)];
  if (host == "localhost" || inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1)
    return Status::Ok();
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (found != nullptr) freeaddrinfo(found);
  if (rc != 0) return Status::Invalid(where + ": cannot resolve host '" + host + "' (" + gai_strerror(rc) + ")");
  return Status::Ok();
}

bool ParseTraceMode(const std::string& name, TraceMode* out) {
  if (name == "commands") *out = TraceMode::kCommands;
  else if (name == "locks") *out = TraceMode::kLocks;
  else if (name == "none") *out = TraceMode::kNone;
  else return false;
  return true;
}

Status ResolveSpec(RunSpec* s) {
  if (Status st = ResolveNames(s); !st.ok()) return st;
  if (Status st = CheckSizes(s); !st.ok()) return st;
  if (Status st = CheckFaultRates(s->faults); !st.ok()) return st;
  const FaultSpec& f = s->faults;
  for (const FaultAction& a : f.plan) {
    if (Status st = ValidateFault(a, FaultWorld{s->clients, s->nodes, s->replica}); !st.ok()) return st;
  }
  if (s->backend == "sim" && !s->redis.empty()) return Status::Invalid("--redis only applies to --backend redis");
  if (s->redis.size() > kMaxRedisServers)
    return Status::Invalid("--redis: more than " + std::to_string(kMaxRedisServers) + " servers");
  if (!s->redis.empty() && static_cast<int>(s->redis.size()) != s->nodes)
    return Status::Invalid("--redis: " + std::to_string(s->redis.size()) + " server(s) given for " +
                           std::to_string(s->nodes) + " nodes (give one HOST:PORT per node, or set --nodes)");
  if (!s->redis.empty() && s->replica)
    return Status::Invalid("--redis: a replica (--replica, failover) needs locklab's own servers: drop --redis");
  for (const std::string& address : s->redis)
    if (Status st = CheckRedisAddress(address); !st.ok()) return st;
  if (s->profile.empty()) return Status::Invalid("profile must not be empty (default, legacy or a FILE)");
  s->profile_name.clear();
  if (s->backend == "sim") {  // the real backend has no use for it
    Result<std::string> name = ChosenProfileName(s->profile, s->clients);
    if (!name.ok()) return name.status();
    s->profile_name = std::move(name).value();
  }
  return CheckClientPlans(s);
}

}  // namespace locklab
