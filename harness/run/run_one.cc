// RunOne: from a resolved RunSpec to a checked RunResult, on the backend it names.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/lock.h"
#include "algorithms/retry.h"
#include "harness/run/backends.h"
#include "harness/run/delayed_restart.h"
#include "harness/run/profile.h"
#include "harness/run/run_spec.h"
#include "harness/run/workload.h"
#include "sim/rng.h"

namespace locklab {
namespace {

constexpr size_t kMaxPausesPerClient = 100'000;

// Stop-the-world pauses drawn from the seed: a Poisson process per client up to the run's time
// limit, planned on `rt` client by client; each is drawn when the run reaches it (a run that ends
// early never draws the rest; sim/pause_draws.h).
Status PlanGcPauses(const RunSpec& spec, sim::Rng& rng, Runtime& rt) {
  const FaultSpec& f = spec.faults;
  if (f.gc_pause_ms <= 0 || f.gc_pause_rate <= 0) return Status::Ok();
  const double mean_gap_us = 1e6 / f.gc_pause_rate;
  const int64_t horizon_us = spec.max_duration_ms * 1000;
  FaultAction a;
  a.kind = FaultAction::Kind::kPauseClient;
  a.duration_us = f.gc_pause_ms * 1000;
  for (int c = 0; c < spec.clients; ++c) {
    a.target = c;
    // From t = 0: t += an exponential gap; a pause at t until t + duration; up to the horizon.
    sim::PauseDraws draws = sim::DrawPauses(&rng, mean_gap_us, a.duration_us, horizon_us, kMaxPausesPerClient);
    if (Status s = rt.PlanPauses(a, std::move(draws)); !s.ok()) return s;
  }
  return Status::Ok();
}

// `cost`: the simulator's costs (ChooseProfile, checked by RunOne); unused for a real backend.
BackendConfig MakeBackendConfig(const RunSpec& spec, sim::CostModel cost) {
  BackendConfig bc;
  bc.clients = spec.clients;
  bc.nodes = spec.nodes;
  bc.with_replica = spec.replica;
  bc.failover_by_sentinel = spec.failover_by == "sentinel";
  bc.seed = spec.seed;
  bc.command_timeout_us = spec.command_timeout_ms * 1000;
  bc.trace_commands = spec.trace == kDefaultTrace;
  if (spec.backend == "sim") bc.cost = std::move(cost);
  bc.net.mean_us = static_cast<int64_t>(spec.faults.net_delay_ms * 1000);
  bc.net.loss = spec.faults.net_loss;
  ParseNetDist(spec.faults.net_dist, &bc.net.dist);
  return bc;
}

// Client clocks and the fault plan (explicit, then the drawn pauses). Clocks and pauses come
// from their own stream of the seed, so that adding a fault type does not shift the draws of
// the network; the times of planned faults with a window (jitter_us) from another.
Status PlanWorld(const RunSpec& spec, Runtime& rt) {
  sim::Rng fault_rng(spec.seed ^ 0xfa017fa017ULL);
  sim::Rng window_rng(spec.seed ^ 0x3a1d0e3a1d0eULL);
  for (int c = 0; c < spec.clients; ++c) {
    ClockSetting cs;
    const int64_t skew_us = spec.faults.clock_skew_ms * 1000;
    if (skew_us > 0) cs.offset_us = fault_rng.Uniform(-skew_us, skew_us);
    if (spec.faults.clock_drift_ppm > 0)
      cs.drift_ppm = (fault_rng.Unit() * 2 - 1) * spec.faults.clock_drift_ppm;
    if (cs.offset_us != 0 || cs.drift_ppm != 0) rt.SetClientClock(c, cs);
  }
  // Faults with the same window (at_us, jitter_us) move together: one draw per window.
  std::map<std::pair<int64_t, int64_t>, int64_t> window_offset_us;
  std::vector<FaultAction> plan;
  for (FaultAction a : spec.faults.plan) {
    if (a.jitter_us > 0) {
      auto [it, fresh] = window_offset_us.try_emplace({a.at_us, a.jitter_us}, 0);
      if (fresh) it->second = window_rng.Uniform(0, a.jitter_us);
      a.at_us += it->second;
    }
    plan.push_back(a);
  }
  if (spec.node_min_down_ms > 0) plan = DelayRestarts(plan, spec.node_min_down_ms * 1000);
  for (const FaultAction& a : plan)
    if (Status s = rt.PlanFault(a); !s.ok()) return s;
  return PlanGcPauses(spec, fault_rng, rt);
}

// What the clients' frames refer to: it must outlive the runtime's run.
struct ClientSet {
  WorkloadState state;
  std::vector<std::unique_ptr<Lock>> locks;
  std::vector<std::unique_ptr<RetryPolicy>> policies;
};

void StartClients(const RunSpec& spec, Runtime& rt, History& history, ClientSet& set) {
  const AlgorithmInfo* alg = FindAlgorithm(spec.algorithm);
  const RetryInfo* retry = FindRetryPolicy(spec.retry);
  WorkloadState& state = set.state;
  ParseWorkload(spec.workload, &state.kind);
  state.requests_left = spec.requests;
  state.hold_ms = spec.hold_ms;
  state.hold_spread_ms = spec.hold_spread_ms;
  state.acquire_timeout_ms = spec.acquire_timeout_ms;
  state.resource.value = state.kind == WorkloadKind::kSeckill ? spec.stock : 0;
  state.lock_free = alg->lock_free;
  state.read_ratio = spec.read_ratio;
  state.history = &history;
  state.runtime = &rt;
  LockConfig lc;
  lc.ttl_ms = spec.ttl_ms;
  lc.options = spec.algorithm_options;
  lc.stock = spec.stock;
  // `local`: one in-process mutex per application server, shared by the run's clients.
  const int app_servers = std::max(1, spec.app_servers);
  lc.local_mutexes = std::make_shared<LocalMutexes>();
  lc.local_mutexes->holder.assign(static_cast<size_t>(app_servers), -1);
  const std::string shared_key = lc.key;
  for (int c = 0; c < spec.clients; ++c) {
    lc.key = spec.key_per_client ? shared_key + ":" + std::to_string(c) : shared_key;
    lc.app_server = c % app_servers;
    set.locks.push_back(alg->make(rt.env(c), lc));
    set.policies.push_back(retry->make(spec.retry_options, lc.key));
    const ClientPlan* plan = spec.client_plans.empty() ? nullptr : &spec.client_plans[static_cast<size_t>(c)];
    rt.StartClient(c, ClientLoop(rt.env(c), *set.locks.back(), *set.policies.back(), state, plan));
  }
}

}  // namespace

int HoldersAllowed(const RunSpec& spec) {
  const AlgorithmInfo* alg = FindAlgorithm(spec.algorithm);
  if (alg == nullptr || alg->holders_option.empty()) return 1;
  return static_cast<int>(spec.algorithm_options.GetInt(alg->holders_option));
}

namespace {

// One run of `spec` with its history in `trace` mode, keeping at most `commands_kept` commands
// (History::set_commands_kept_at_most; SIZE_MAX: all); *all_kept: none was only counted.
RunResult RunOnce(const RunSpec& spec, TraceMode trace, bool keep_events, size_t commands_kept, bool* all_kept) {
  RunResult res;
  res.spec = spec;
  RuntimeMaker make = FindBackend(spec.backend);
  if (make == nullptr) {
    res.error = "backend '" + spec.backend + "' is not available in this program";
    return res;
  }
  sim::CostModel cost;
  if (spec.backend == "sim") {
    Result<sim::CostModel> chosen = ChooseProfile(spec.profile, spec.clients);
    if (!chosen.ok()) {
      res.error = chosen.status().message();
      return res;
    }
    cost = std::move(chosen).value();
  }
  Result<std::unique_ptr<Runtime>> made = make(MakeBackendConfig(spec, std::move(cost)), spec.redis);
  if (!made.ok()) {
    res.error = made.status().message();
    return res;
  }
  std::unique_ptr<Runtime> rt = std::move(made).value();
  History history;
  if (trace == TraceMode::kNone) history.set_dropped(~EventsCheckersRead());
  history.set_commands_kept_at_most(commands_kept);
  rt->set_history(&history);
  if (Status s = PlanWorld(spec, *rt); !s.ok()) {
    res.error = s.message();
    return res;
  }
  ClientSet set;
  StartClients(spec, *rt, history, set);

  RuntimeLimits limits;
  limits.max_duration_us = spec.max_duration_ms * 1000;
  const Status run = rt->Run(limits);
  res.completed = run.ok();
  if (!res.completed) res.error = run.message();
  res.duration_us = rt->TrueNowUs();
  res.client_cpu_us = rt->ClientCpuUs();
  res.commands = rt->Commands();
  res.notes = rt->Notes();
  for (const std::string& u : rt->UnfiredFaults()) {
    ++res.faults_unfired;
    res.notes.push_back("planned fault did not happen: " + u);
  }
  res.history_events = static_cast<int64_t>(history.size());
  res.commands_dropped = history.commands_dropped();
  if (res.commands_dropped > 0)
    res.notes.push_back("history kept the first " + std::to_string(res.history_events) + " events; " +
                        std::to_string(res.commands_dropped) + " command events were not recorded");

  const WorkloadState& state = set.state;
  CheckInput in;
  in.end_us = res.duration_us;
  in.counter_initial = 0;
  in.counter_final = state.kind == WorkloadKind::kCounter ? state.resource.value : 0;
  in.stock_initial = state.kind == WorkloadKind::kSeckill ? spec.stock : 0;
  in.holders_allowed = HoldersAllowed(spec);
  if (spec.key_per_client)  // each client on its lock: judged per lock
    for (int c = 0; c < spec.clients; ++c) in.lock_of_client[c] = LockConfig().key + ":" + std::to_string(c);
  res.counter_final = in.counter_final;
  res.stock_final = state.kind == WorkloadKind::kSeckill ? state.resource.value : 0;
  res.check = CheckAll(history, in);
  *all_kept = history.commands_counted() == 0;
  // The runtime's frames refer to the locks, policies and state: it goes first.
  rt.reset();
  if (keep_events) res.events = history.TakeEvents();  // nothing writes to it any more
  return res;
}

}  // namespace

// A simulator run with command tracing keeps the text of its first `first_run_commands` commands
// and only counts the rest: their text is read only by the timelines of overlap examples, which
// most runs do not have, and a long run's texts cost more than running it again. A run that has
// an example and counted commands runs again in full: the same seed and build give the same run,
// so the result is what one traced run gives, byte for byte (TraceMode: the figures do not
// depend on the trace).
RunResult RunOne(const RunSpec& spec, bool progress, bool keep_events, size_t first_run_commands) {
  TraceMode trace = TraceMode::kCommands;
  ParseTraceMode(spec.trace, &trace);  // ResolveSpec checked it
  const bool limit_first = spec.backend == "sim" && trace == TraceMode::kCommands && !keep_events;
  bool all_kept = true;
  RunResult res = RunOnce(spec, trace, keep_events, limit_first ? first_run_commands : SIZE_MAX, &all_kept);
  if (!all_kept && !res.check.safety.examples.empty()) res = RunOnce(spec, trace, keep_events, SIZE_MAX, &all_kept);
  if (progress) std::fprintf(stderr, "  %s on %s: %lld events\n", spec.algorithm.c_str(), spec.backend.c_str(),
                             static_cast<long long>(res.history_events));
  return res;
}

}  // namespace locklab
