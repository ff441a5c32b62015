// bench-peers' pause test: see pause_trial.h.
#include "harness/bench/pause_trial.h"

#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "harness/bench/peer_driver.h"
#include "harness/real/child_process.h"
#include "harness/real/real_clock.h"

namespace locklab::bench_peers {
namespace {

std::string Ms(double ms) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f ms", ms);
  return buf;
}

// What happened to A (client 0) and B (client 1), from the judged history.
std::string Observe(const std::vector<Event>& ev, const RowCheck& c) {
  int64_t a_enter = -1, b_enter = -1, b_exit = -1, a_exit = -1, crash = -1;
  std::string a_release = "none", b_acquire = "none", crash_detail;
  for (const Event& e : ev) {
    if (e.client == 0 && e.type == Ev::kEnter && a_enter < 0) a_enter = e.t_us;
    if (e.client == 0 && e.type == Ev::kExit) a_exit = e.t_us;
    if (e.client == 1 && e.type == Ev::kEnter && b_enter < 0) b_enter = e.t_us;
    if (e.client == 1 && e.type == Ev::kExit) b_exit = e.t_us;
    if (e.client == 1 && e.type == Ev::kAcquireOk) b_acquire = "ok";
    if (e.client == 1 && e.type == Ev::kAcquireFail) b_acquire = "failed";
    if (e.client == 0 && e.type == Ev::kReleaseOk) a_release = "ok";
    if (e.client == 0 && e.type == Ev::kReleaseFail) a_release = "failed (lock no longer A's)";
    if (e.client == 0 && e.type == Ev::kCrash && crash < 0) {
      crash = e.t_us;
      crash_detail = e.detail;
    }
  }
  std::vector<std::string> parts;
  if (c.check.safety.violations > 0)
    parts.push_back("OVERLAP: A and B held at once for " + Ms(c.check.safety.overlap_ms_total));
  else
    parts.push_back("no overlap");
  if (b_enter >= 0 && a_enter >= 0)
    parts.push_back("B entered " + Ms(static_cast<double>(b_enter - a_enter) / 1000.0) + " after A");
  else
    parts.push_back("B's acquisition: " + b_acquire);
  if (crash >= 0)
    parts.push_back("A's process died at " + Ms(static_cast<double>(crash - std::max<int64_t>(a_enter, 0)) / 1000.0) +
                    " (" + crash_detail + ")");
  if (a_exit >= 0 && b_exit >= 0 && a_exit > b_exit)
    parts.push_back("A left its critical section " + Ms(static_cast<double>(a_exit - b_exit) / 1000.0) +
                    " after B had");
  parts.push_back("A's release: " + a_release);
  if (c.counter_judged) parts.push_back("lost updates: " + std::to_string(c.lost_updates));
  return Join(parts, "; ");
}

// Judges A's and B's history (any order, raw times) with the counter's final value.
void JudgePause(std::vector<Event> events, int64_t counter_final, PauseRow* row) {
  ShiftToEarliest(&events);
  JudgeInput in;
  in.counter_known = true;
  in.counter_final = counter_final;
  row->counter_final = counter_final;
  row->check = JudgeEvents(events, in);
  row->observed = Observe(events, row->check);
  row->events = std::move(events);
  row->ran = true;
}

void RunLocklabPause(BenchEnv& env, const Impl& impl, int nodes, PauseRow* row) {
  const BenchPeersOptions& o = env.o;
  RunSpec s = LocklabSpec(env, impl.algorithm, nodes, 2);
  s.ttl_ms = o.pause_ttl_ms;
  s.retry = "fixed";
  s.retry_options.Set("sleep-ms", "50");
  s.client_plans = {ClientPlan{0, 1, row->hold_ms, -1}, ClientPlan{200, 1, o.pause_hold_ms, 10'000}};
  FaultAction a;
  a.kind = FaultAction::Kind::kPauseClient;
  a.target = 0;
  a.at_us = o.pause_at_ms * 1000;
  a.duration_us = o.pause_ms * 1000;
  s.faults.plan.push_back(a);
  if (Status st = ResolveSpec(&s); !st.ok()) {
    row->error = st.message();
    return;
  }
  RunResult res = RunOne(s, false, true);
  if (!res.completed) {
    row->error = "run did not complete: " + res.error;
    return;
  }
  std::vector<Event> events;
  for (const Event& e : res.events)
    if (e.type != Ev::kCommand) events.push_back(e);
  JudgePause(std::move(events), res.counter_final, row);
}

// A peer's pause test: the two driver processes and the counter file they share.
struct PeerPause {
  DriverCall call_a, call_b;
  std::string err_a, err_b;  // their stderr files
  std::string counter;       // the counter file
};

PeerPause PreparePeerPause(const BenchEnv& env, const Impl& impl, int nodes, int64_t hold_ms) {
  const BenchPeersOptions& o = env.o;
  PeerPause p;
  const std::string tag = impl.id + "-" + std::to_string(nodes) + "-" + std::to_string(hold_ms);
  p.counter = env.tmp + "/pause-counter-" + tag;
  {
    std::ofstream f(p.counter);
    f << "0";
  }
  auto call_for = [&](int client, bool announce, int64_t client_hold_ms) {
    DriverCall c;
    c.argv = DriverArgv(env, impl);
    c.extra_env = DriverEnv(env);
    c.events_path = env.tmp + "/pause-" + tag + "-" + std::to_string(client) + ".jsonl";
    std::vector<std::string> args = {"--ports", Ports(*env.servers, nodes), "--events", c.events_path, "--clients", "1",
                                     "--count", "1", "--key", "locklab:pause:" + tag, "--ttl-ms",
                                     std::to_string(o.pause_ttl_ms), "--acquire-timeout-ms", "10000", "--hold-ms",
                                     std::to_string(client_hold_ms), "--counter-file", p.counter, "--client-base",
                                     std::to_string(client), "--deadline-ms", "30000"};
    if (announce) args.push_back("--announce");
    c.argv.insert(c.argv.end(), args.begin(), args.end());
    c.timeout_ms = 35'000;
    return c;
  };
  p.call_a = call_for(0, true, hold_ms);
  p.call_b = call_for(1, false, o.pause_hold_ms);
  p.err_a = p.call_a.events_path + ".stderr";
  p.err_b = p.call_b.events_path + ".stderr";
  return p;
}

// Waits (at most 20 s, 1000 lines) for A's {"holding": ...} line: when it was read, or Failed with
// A's own verdict after waiting for its end.
Result<int64_t> AwaitHolding(const PeerPause& p, ChildProcess& a) {
  std::string line;
  const int64_t wait_until_us = MonotonicNowUs() + 20'000'000;
  for (int i = 0; i < 1000 && a.ReadLine(&line, wait_until_us); ++i) {
    json j = json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("holding")) return MonotonicNowUs();
  }
  std::string out;
  int status = -1;
  a.Finish(MonotonicNowUs() + 5'000'000, &out, &status);
  const DriverResult ra = CompleteDriver(p.call_a, true, status, out, p.err_a);
  return Status::Failed("A never announced that it holds the lock: " + ra.error);
}

// A holds, is stopped pause_at_ms in and continued pause_ms later; B starts while A is stopped.
// The pause's start and end (monotonic µs), or Failed.
Result<std::pair<int64_t, int64_t>> StopAWhileBAcquires(const BenchPeersOptions& o, const PeerPause& p, ChildProcess& a,
                                                        ChildProcess& b) {
  if (Status st = a.Start(p.call_a.argv, p.call_a.extra_env, p.err_a); !st.ok()) return st.Prefixed("cannot start A");
  Result<int64_t> holding_at_us = AwaitHolding(p, a);
  if (!holding_at_us.ok()) return holding_at_us.status();
  SleepUntilUs(*holding_at_us + o.pause_at_ms * 1000);
  a.Signal(SIGSTOP);
  const int64_t stop_us = MonotonicNowUs();
  if (Status st = b.Start(p.call_b.argv, p.call_b.extra_env, p.err_b); !st.ok()) {
    a.Signal(SIGCONT);
    return st.Prefixed("cannot start B");
  }
  SleepUntilUs(stop_us + o.pause_ms * 1000);
  a.Signal(SIGCONT);
  return std::make_pair(stop_us, MonotonicNowUs());
}

void RunPeerPause(BenchEnv& env, const Impl& impl, int nodes, PauseRow* row) {
  if (Status s = FlushAll(*env.servers); !s.ok()) {
    row->error = s.message();
    return;
  }
  const PeerPause p = PreparePeerPause(env, impl, nodes, row->hold_ms);
  ChildProcess a, b;
  Result<std::pair<int64_t, int64_t>> pause = StopAWhileBAcquires(env.o, p, a, b);
  if (!pause.ok()) {
    row->error = pause.status().message();
    return;
  }
  const auto [stop_us, cont_us] = *pause;
  std::string out_a, out_b;
  int st_a = -1, st_b = -1;
  const bool a_in_time = a.Finish(MonotonicNowUs() + 30'000'000, &out_a, &st_a);
  const bool b_in_time = b.Finish(MonotonicNowUs() + 30'000'000, &out_b, &st_b);
  const DriverResult ra = CompleteDriver(p.call_a, a_in_time, st_a, out_a, p.err_a);
  const DriverResult rb = CompleteDriver(p.call_b, b_in_time, st_b, out_b, p.err_b);
  row->version = PeerVersion(env, impl, !rb.summary.is_null() ? rb.summary : ra.summary);
  // A crashing is a finding (redis-semaphore's onLockLost throws), not a failure of the test.
  const bool a_crashed = st_a == 70 && !ra.log.events.empty();
  if ((!ra.ok && !a_crashed) || !rb.ok) {
    row->error = !rb.ok ? "B: " + rb.error : "A: " + ra.error;
    return;
  }
  std::vector<Event> events = ra.log.events;
  events.insert(events.end(), rb.log.events.begin(), rb.log.events.end());
  events.push_back(Event{stop_us, 0, Ev::kPauseStart, cont_us - stop_us, "SIGSTOP"});
  events.push_back(Event{cont_us, 0, Ev::kPauseEnd, 0, "SIGCONT"});
  JudgePause(std::move(events), std::atoll(ReadWholeFile(p.counter).c_str()), row);
}

}  // namespace

std::vector<PauseRow> RunPauseTests(BenchEnv& env) {
  const BenchPeersOptions& o = env.o;
  std::vector<PauseRow> pauses;
  for (const Impl& impl : Impls()) {
    if (!Selected(o, impl.id)) continue;
    const int nodes = impl.nodes.back();  // Redlock implementations on 5 nodes
    // A watchdog refreshes at 0.8 x TTL: a hold that lasts past the pause lets it wake up.
    std::vector<int64_t> holds = {o.pause_hold_ms};
    if (impl.watchdog) holds.push_back(o.pause_at_ms + o.pause_ms + 1000);
    for (int64_t hold : holds) {
      PauseRow p;
      p.impl = impl.id;
      p.name = impl.name;
      p.nodes = nodes;
      p.hold_ms = hold;
      if (impl.kind == Kind::kLocklab) {
        p.version = LocklabVersion();
        RunLocklabPause(env, impl, nodes, &p);
      } else if (std::string u = Unavailable(env, impl); !u.empty()) {
        p.error = u;
      } else {
        RunPeerPause(env, impl, nodes, &p);
      }
      if (o.progress)
        std::fprintf(stderr, "bench-peers: %s\n",
                     ("pause test, " + impl.name + ", hold " + std::to_string(hold) + " ms: " +
                      (p.ran ? p.observed : "not run: " + p.error))
                         .c_str());
      pauses.push_back(std::move(p));
    }
  }
  return pauses;
}

}  // namespace locklab::bench_peers
