// One scorecard trial of a locklab lock: the timeline as a RunSpec (client plans and planned
// faults) on real Redis, judged through the history format like the peers (scorecard_trial.h).
#include <fstream>
#include <vector>

#include "harness/bench/scorecard_trial.h"
#include "harness/real/redis_server.h"
#include "harness/run/jepsen_history.h"
#include "harness/run/run_spec.h"

namespace locklab::scorecard {
namespace {

constexpr int64_t kAStartMs = 20;  // A's first request, into the run (a fault at 0 comes first)

FaultAction Planned(FaultAction::Kind kind, int target, int64_t at_us, int64_t duration_us) {
  FaultAction a;
  a.kind = kind;
  a.target = target;
  a.at_us = at_us;
  a.duration_us = duration_us;
  return a;
}

// The fault plan of the timeline; at_us counts from the run's start.
std::vector<FaultAction> Plan(const ScImpl& impl, Fault fault, const Timeline& t) {
  using K = FaultAction::Kind;
  const int64_t at = (kAStartMs + t.fault_at_ms) * 1000, dur = t.fault_ms * 1000;
  std::vector<FaultAction> plan;
  if (t.stale_minority)  // A asks while cut off from nodes 3 and 4: it wins 0-2 only
    for (int node : {3, 4}) {
      plan.push_back(Planned(K::kPartition, 0, 0, (kAStartMs + 100) * 1000));
      plan.back().node = node;
    }
  switch (fault) {
    case Fault::kPause: plan.push_back(Planned(K::kPauseClient, 0, at, dur)); break;
    case Fault::kReleaseDelay:
      for (int k = 1; k <= impl.nodes; ++k) {  // the release's compare-and-delete on every node
        plan.push_back(Planned(K::kDelayMessage, 0, 0, dur));
        plan.back().command = "compare_and_delete";
        plan.back().occurrence = k;
      }
      break;
    case Fault::kClockJump:
      plan.push_back(Planned(K::kNodeClockJump, t.target_node, at, 0));
      plan.back().delta_us = dur;
      break;
    case Fault::kRestart: plan.push_back(Planned(K::kRestartNode, t.target_node, at, 0)); break;
    case Fault::kPartition:
      for (int node = 0; node < impl.nodes; ++node) {
        plan.push_back(Planned(K::kPartition, 0, at, dur));
        plan.back().node = node;
      }
      break;
    case Fault::kExtendRace: break;  // the release is timed to the renewal's tick
    case Fault::kSentinel:  // replica cut off at 0 (before A asks at 20 ms), master killed at at_us
      plan.push_back(Planned(K::kFailover, 0, 0, at));
      break;
  }
  return plan;
}

std::string Notes(const RunResult& r) {
  std::string s;
  for (size_t i = 0; i < r.notes.size() && i < 3; ++i) s += (s.empty() ? "" : " | ") + r.notes[i];
  return s;
}

}  // namespace

TrialOutcome RunLocklabTrial(const TrialEnv& env, const ScImpl& impl, Fault fault, const Timeline& t, int trial) {
  TrialOutcome failed;
  RunSpec s;
  s.backend = "redis";
  s.algorithm = impl.lib;
  s.nodes = impl.nodes;
  s.clients = 2;
  s.ttl_ms = t.ttl_ms;
  s.acquire_timeout_ms = t.b_timeout_ms;
  if (t.stale_minority) s.command_timeout_ms = 50;
  if (fault == Fault::kSentinel) {
    s.replica = true;
    s.failover_by = "sentinel";
  }
  s.retry = "fixed";
  s.retry_options.Set("sleep-ms", "10");
  s.client_plans = {ClientPlan{kAStartMs, 1, t.a_hold_ms, 2000},
                    ClientPlan{kAStartMs + t.b_go_ms, 1, t.b_hold_ms, t.b_timeout_ms}};
  s.seed = env.seed + static_cast<uint64_t>(trial);
  s.max_duration_ms = 60'000;
  s.trace = "locks";
  s.faults.plan = Plan(impl, fault, t);
  // Faults the runtime applies itself run on the shared servers (no start-up per trial); a clock
  // jump or a restart needs servers of the run's own.
  if (OwnProcessesOnly(fault) && env.servers != nullptr) {
    for (int i = 0; i < impl.nodes; ++i) {
      s.redis.push_back(env.servers->address(i));
      (void)env.servers->Query(i, {"FLUSHALL"});
    }
  }
  if (Status st = ResolveSpec(&s); !st.ok()) {
    failed.error = st.message();
    return failed;
  }
  RunResult res = RunOne(s, false, true);
  if (!res.completed) {
    failed.error = "run did not complete: " + res.error;
    return failed;
  }
  const bool at_release = fault == Fault::kReleaseDelay || fault == Fault::kExtendRace;
  const int64_t fault_start_us = (kAStartMs + (at_release ? t.a_hold_ms : t.fault_at_ms)) * 1000;
  const std::string text = JepsenHistoryText(res.events, res.duration_us);
  Result<TrialOutcome> o = JudgeTrial(text, fault_start_us, {});
  if (!o.ok()) {
    failed.error = o.status().message();
    return failed;
  }
  o->fault_note = Notes(res);
  if (env.keep_histories && !env.tmp.empty())
    std::ofstream(env.tmp + "/" + impl.id + "-" + FaultId(fault) + "-" + std::to_string(trial) + ".jsonl") << text;
  return *o;
}

}  // namespace locklab::scorecard
