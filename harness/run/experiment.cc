// ResolveSpec and RunOne: from a RunSpec to a checked RunResult, on either backend.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/lock.h"
#include "algorithms/retry.h"
#include "harness/run/backends.h"
#include "harness/run/run_spec.h"
#include "harness/run/workload.h"
#include "sim/rng.h"

namespace locklab {
namespace {

// Limits on what one run may ask for (every loop and queue has a limit).
constexpr int kMaxClients = 100'000;
constexpr int kMaxAppServers = 1000;
constexpr int64_t kMaxRequests = 100'000'000;
constexpr int kMaxNodes = 15;
constexpr int kMaxPausesPerClient = 100'000;

bool Fail(std::string* error, std::string msg) {
  *error = std::move(msg);
  return false;
}

// Stop-the-world pauses drawn from the seed: a Poisson process per client.
void PlanGcPauses(const RunSpec& spec, sim::Rng& rng, std::vector<FaultAction>* out) {
  const FaultSpec& f = spec.faults;
  if (f.gc_pause_ms <= 0 || f.gc_pause_rate <= 0) return;
  const double mean_gap_us = 1e6 / f.gc_pause_rate;
  const int64_t horizon_us = spec.max_duration_ms * 1000;
  for (int c = 0; c < spec.clients; ++c) {
    int64_t t = 0;
    for (int i = 0; i < kMaxPausesPerClient; ++i) {
      t += static_cast<int64_t>(rng.Exponential(mean_gap_us));
      if (t >= horizon_us) break;
      FaultAction a;
      a.kind = FaultAction::Kind::kPauseClient;
      a.at_us = t;
      a.target = c;
      a.duration_us = f.gc_pause_ms * 1000;
      out->push_back(a);
      t += a.duration_us;  // the next pause starts after this one ends
    }
  }
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
    using K = FaultAction::Kind;
    const bool on_client = a.kind == K::kPauseClient || a.kind == K::kCrashClient || a.kind == K::kClientClockJump ||
                           a.kind == K::kPartition || a.kind == K::kDelayMessage;
    const int limit = on_client ? s->clients : s->nodes;
    if (a.target < 0 || a.target >= limit)
      return Fail(error, std::string("fault ") + FaultKindName(a.kind) + ": target " + std::to_string(a.target) +
                             " out of range (" + std::to_string(limit) + (on_client ? " clients)" : " nodes)"));
    if (a.at_us < 0 || a.duration_us < 0) return Fail(error, std::string("fault ") + FaultKindName(a.kind) + ": negative time");
    if (a.kind == K::kFailover && !s->replica) return Fail(error, "fault failover needs replica=true (--replica)");
    if (a.kind == K::kDelayMessage && (a.command.empty() || a.occurrence < 1))
      return Fail(error, "fault delay_message needs command=NAME and occurrence >= 1");
    if (!a.on_send.empty() && a.kind != K::kPauseClient && a.kind != K::kCrashClient)
      return Fail(error, std::string("fault ") + FaultKindName(a.kind) +
                             ": on_send applies only to pause_client and crash_client");
    if (!a.on_send.empty() && a.occurrence < 1)
      return Fail(error, std::string("fault ") + FaultKindName(a.kind) + ": on_send needs occurrence >= 1");
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

RunResult RunOne(const RunSpec& spec, bool progress, bool keep_events) {
  RunResult res;
  res.spec = spec;
  BackendConfig bc;
  bc.clients = spec.clients;
  bc.nodes = spec.nodes;
  bc.with_replica = spec.replica;
  bc.seed = spec.seed;
  bc.command_timeout_us = spec.command_timeout_ms * 1000;
  bc.trace_commands = spec.trace_commands;
  bc.net.mean_us = static_cast<int64_t>(spec.faults.net_delay_ms * 1000);
  bc.net.loss = spec.faults.net_loss;
  ParseNetDist(spec.faults.net_dist, &bc.net.dist);

  RuntimeMaker make = FindBackend(spec.backend);
  if (make == nullptr) {
    res.error = "backend '" + spec.backend + "' is not available in this program";
    return res;
  }
  std::unique_ptr<Runtime> rt = make(bc, spec.redis, &res.error);
  if (!rt) return res;
  History history;
  rt->set_history(&history);

  // Clocks and pauses come from their own stream of the seed, so that adding a fault type does
  // not shift the draws of the network.
  sim::Rng fault_rng(spec.seed ^ 0xfa017fa017ULL);
  for (int c = 0; c < spec.clients; ++c) {
    ClockSetting cs;
    const int64_t skew_us = spec.faults.clock_skew_ms * 1000;
    if (skew_us > 0) cs.offset_us = fault_rng.Uniform(-skew_us, skew_us);
    if (spec.faults.clock_drift_ppm > 0)
      cs.drift_ppm = (fault_rng.Unit() * 2 - 1) * spec.faults.clock_drift_ppm;
    if (cs.offset_us != 0 || cs.drift_ppm != 0) rt->SetClientClock(c, cs);
  }
  std::vector<FaultAction> plan = spec.faults.plan;
  PlanGcPauses(spec, fault_rng, &plan);
  for (const FaultAction& a : plan) {
    if (!rt->PlanFault(a, &res.error)) return res;
  }

  const AlgorithmInfo* alg = FindAlgorithm(spec.algorithm);
  const RetryInfo* retry = FindRetryPolicy(spec.retry);
  WorkloadState state;
  ParseWorkload(spec.workload, &state.kind);
  state.requests_left = spec.requests;
  state.hold_ms = spec.hold_ms;
  state.acquire_timeout_ms = spec.acquire_timeout_ms;
  state.resource.value = state.kind == WorkloadKind::kSeckill ? spec.stock : 0;
  state.history = &history;
  state.runtime = rt.get();

  std::vector<std::unique_ptr<Lock>> locks;
  std::vector<std::unique_ptr<RetryPolicy>> policies;
  LockConfig lc;
  lc.ttl_ms = spec.ttl_ms;
  lc.options = spec.algorithm_options;
  // `local`: one in-process mutex per application server, shared by the run's clients.
  const int app_servers = std::max(1, spec.app_servers);
  lc.local_mutexes = std::make_shared<LocalMutexes>();
  lc.local_mutexes->holder.assign(static_cast<size_t>(app_servers), -1);
  const std::string shared_key = lc.key;
  for (int c = 0; c < spec.clients; ++c) {
    lc.key = spec.key_per_client ? shared_key + ":" + std::to_string(c) : shared_key;
    lc.app_server = c % app_servers;
    locks.push_back(alg->make(rt->env(c), lc));
    policies.push_back(retry->make(spec.retry_options, lc.key));
    const ClientPlan* plan = spec.client_plans.empty() ? nullptr : &spec.client_plans[static_cast<size_t>(c)];
    rt->StartClient(c, ClientLoop(rt->env(c), *locks.back(), *policies.back(), state, plan));
  }

  RuntimeLimits limits;
  limits.max_duration_us = spec.max_duration_ms * 1000;
  std::string run_error;
  res.completed = rt->Run(limits, &run_error);
  if (!res.completed) res.error = run_error;
  res.duration_us = rt->TrueNowUs();
  res.commands = rt->Commands();
  res.notes = rt->Notes();
  res.history_events = static_cast<int64_t>(history.events().size());
  res.commands_dropped = history.commands_dropped();
  if (res.commands_dropped > 0)
    res.notes.push_back("history kept the first " + std::to_string(res.history_events) + " events; " +
                        std::to_string(res.commands_dropped) + " command events were not recorded");

  CheckInput in;
  in.end_us = res.duration_us;
  in.counter_initial = 0;
  in.counter_final = state.kind == WorkloadKind::kCounter ? state.resource.value : 0;
  in.stock_initial = state.kind == WorkloadKind::kSeckill ? spec.stock : 0;
  res.counter_final = in.counter_final;
  res.stock_final = state.kind == WorkloadKind::kSeckill ? state.resource.value : 0;
  res.check = CheckAll(history, in);
  // The runtime's frames refer to the locks, policies and state: it goes first.
  rt.reset();
  if (keep_events) res.events = history.TakeEvents();  // nothing writes to it any more
  if (progress) std::fprintf(stderr, "  %s on %s: %lld events\n", spec.algorithm.c_str(), spec.backend.c_str(),
                             static_cast<long long>(res.history_events));
  return res;
}

}  // namespace locklab
