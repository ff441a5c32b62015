// History files (jepsen_history.h): a run's history written and read back is the same history with
// the same verdicts; hand-written histories with known answers; malformed lines name their line.
#include "harness/run/jepsen_history.h"

#include <gtest/gtest.h>

#include <ostream>

#include "algorithms/lock.h"
#include "harness/run/config.h"
#include "harness/run/run_spec.h"
#include "harness/testing/test_specs.h"

namespace locklab {
namespace {

// ---------------------------------------------------------------------------------------------
// Round trip: runs -> file -> the same events and verdicts

void ExpectSameLatency(const LatencySummary& a, const LatencySummary& b, const char* what) {
  EXPECT_EQ(a.count, b.count) << what;
  EXPECT_EQ(a.p50, b.p50) << what;
  EXPECT_EQ(a.p99, b.p99) << what;
  EXPECT_EQ(a.max, b.max) << what;
  EXPECT_DOUBLE_EQ(a.mean, b.mean) << what;
}

void ExpectSameEvents(const std::vector<Event>& a, const std::vector<Event>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE("event " + std::to_string(i) + " " + EvName(a[i].type));
    EXPECT_EQ(a[i].t_us, b[i].t_us);
    EXPECT_EQ(a[i].client, b[i].client);
    EXPECT_EQ(a[i].type, b[i].type);
    EXPECT_EQ(a[i].value, b[i].value);
    EXPECT_EQ(a[i].detail, b[i].detail);
  }
}

void ExpectSameVerdicts(const CheckResult& run, const CheckResult& file) {
  EXPECT_EQ(run.safety.violations, file.safety.violations);
  EXPECT_EQ(run.safety.overlap_ms_total, file.safety.overlap_ms_total);
  EXPECT_EQ(run.safety.max_concurrent_holders, file.safety.max_concurrent_holders);
  EXPECT_EQ(run.safety.overlapping_pairs, file.safety.overlapping_pairs);
  ASSERT_EQ(run.safety.examples.size(), file.safety.examples.size());
  for (size_t i = 0; i < run.safety.examples.size(); ++i) {
    EXPECT_EQ(run.safety.examples[i].start_us, file.safety.examples[i].start_us);
    EXPECT_EQ(run.safety.examples[i].end_us, file.safety.examples[i].end_us);
    EXPECT_EQ(run.safety.examples[i].clients, file.safety.examples[i].clients);
    ExpectSameEvents(run.safety.examples[i].timeline, file.safety.examples[i].timeline);
  }
  const ResourceResult &a = run.resource, &b = file.resource;
  EXPECT_EQ(a.writes_accepted, b.writes_accepted);
  EXPECT_EQ(a.lost_updates, b.lost_updates);
  EXPECT_EQ(a.orders, b.orders);
  EXPECT_EQ(a.oversold, b.oversold);
  EXPECT_EQ(a.stale_writes_accepted, b.stale_writes_accepted);
  EXPECT_EQ(a.stale_writes_rejected, b.stale_writes_rejected);
  EXPECT_EQ(a.stale_reads_rejected, b.stale_reads_rejected);
  EXPECT_EQ(run.liveness.acquired, file.liveness.acquired);
  EXPECT_EQ(run.liveness.failed, file.liveness.failed);
  EXPECT_EQ(run.liveness.unknown, file.liveness.unknown);
  EXPECT_EQ(run.liveness.releases_failed, file.liveness.releases_failed);
  EXPECT_EQ(run.liveness.releases_unknown, file.liveness.releases_unknown);
  EXPECT_EQ(run.liveness.stuck_ms_max, file.liveness.stuck_ms_max);
  ExpectSameLatency(run.latency.acquire, file.latency.acquire, "acquire");
  ExpectSameLatency(run.latency.hold, file.latency.hold, "hold");
  ExpectSameLatency(run.latency.release, file.latency.release, "release");
  ExpectSameLatency(run.latency.request, file.latency.request, "request");
  EXPECT_EQ(run.fairness.clients, file.fairness.clients);
  EXPECT_EQ(run.fairness.jain_index, file.fairness.jain_index);
  EXPECT_EQ(run.fairness.max_wait_ms, file.fairness.max_wait_ms);
}

struct RoundTrip {
  std::string name;
  std::string algorithm;
  std::vector<std::string> faults;  // --fault texts
  void (*tune)(RunSpec*) = nullptr;
  std::string backend = "sim";
};

// Test names and messages show the case's name, not its bytes.
void PrintTo(const RoundTrip& rt, std::ostream* os) { *os << rt.name; }

RunResult RunKept(const RoundTrip& rt) {
  RunSpec s;
  s.backend = rt.backend;
  Result<AlgorithmChoice> alg = ParseAlgorithmChoice(rt.algorithm);
  EXPECT_TRUE(alg.ok());
  s.algorithm = alg->name;
  s.algorithm_options = alg->options;
  s.clients = 5;
  s.requests = 60;
  s.hold_ms = 100;
  s.seed = 3;
  s.profile = SeedsChosenProfile();  // the cases must keep showing what they are named after
  for (const std::string& f : rt.faults) {
    Result<FaultAction> a = ParseFaultFlag(f);
    EXPECT_TRUE(a.ok()) << f;
    if (a.ok()) s.faults.plan.push_back(*a);
  }
  if (rt.tune != nullptr) rt.tune(&s);
  std::string err;
  EXPECT_TRUE(ResolveSpec(&s).ok(&err)) << err;
  RunResult r = RunOne(s, false, /*keep_events=*/true);
  EXPECT_TRUE(r.completed) << r.error;
  return r;
}

class HistoryRoundTrip : public ::testing::TestWithParam<RoundTrip> {};

TEST_P(HistoryRoundTrip, SameEventsAndVerdicts) {
  const RoundTrip& rt = GetParam();
  RunResult r = RunKept(rt);
  std::map<int, std::string> locks;
  if (r.spec.key_per_client)
    for (int c = 0; c < r.spec.clients; ++c) locks[c] = LockConfig().key + ":" + std::to_string(c);
  const std::string text = JepsenHistoryText(r.events, r.duration_us, locks);
  Result<RecordedHistory> parsed = ParseJepsenHistory(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  ExpectSameEvents(r.events, parsed->events);
  EXPECT_EQ(parsed->input.end_us, r.duration_us);
  EXPECT_EQ(parsed->counter_final, r.counter_final);
  EXPECT_EQ(parsed->stock_final, r.stock_final);
  History h;
  for (const Event& e : parsed->events) h.Add(e.t_us, e.client, e.type, e.value, e.detail);
  ExpectSameVerdicts(r.check, CheckAll(h, parsed->input));
}

void GcPauses(RunSpec* s) {
  s->faults.gc_pause_ms = 1500;
  s->faults.gc_pause_rate = 0.5;
}
void LossyNet(RunSpec* s) {
  s->faults.net_loss = 0.05;
  s->command_timeout_ms = 50;
  s->acquire_timeout_ms = 500;
}
void Seckill(RunSpec* s) {
  s->workload = "seckill";
  s->stock = 20;
  s->hold_ms = 5;
}
void KeyPerClient(RunSpec* s) {
  s->key_per_client = true;
  GcPauses(s);
}
void SmallReal(RunSpec* s) {
  s->clients = 3;
  s->requests = 12;
}

// Each case must show what it is there for; VerdictsAreNotAllZero checks that they do.
const RoundTrip kRoundTrips[] = {
    {"token_gc_pause_overlaps_lost_updates_stale_writes", "token", {}, GcPauses},
    {"fencing_gc_pause_stale_writes_rejected", "fencing", {}, GcPauses},
    {"redlock_fenced_node_crash", "redlock:fence=on", {"crash_node:at_ms=300,target=0"}, GcPauses},
    {"token_lossy_network_unknown_outcomes", "token", {}, LossyNet},
    {"token_client_crash_mid_hold", "token", {"crash_client:at_ms=150,target=0", "pause_client:at_ms=400,target=1,duration_ms=1500"}},
    {"none_seckill_oversold", "none", {}, Seckill},
    {"token_key_per_client", "token", {}, KeyPerClient},
    {"redis_token_pause_overlap", "token", {"pause_client:target=0,on_send=SET,occurrence=1,duration_ms=1500"},
     SmallReal, "redis"},
};

INSTANTIATE_TEST_SUITE_P(Runs, HistoryRoundTrip, ::testing::ValuesIn(kRoundTrips),
                         [](const auto& info) { return info.param.name; });

// The round trips above are worth something only if the runs found what they are named after.
TEST(HistoryRoundTripCases, VerdictsAreNotAllZero) {
  auto run_result = [](const char* name) {
    for (const RoundTrip& rt : kRoundTrips)
      if (rt.name == name) return RunKept(rt);
    ADD_FAILURE() << name;
    return RunResult{};
  };
  auto run = [&](const char* name) { return run_result(name).check; };
  const CheckResult token = run("token_gc_pause_overlaps_lost_updates_stale_writes");
  EXPECT_GT(token.safety.violations, 0);
  EXPECT_GT(token.resource.lost_updates, 0);
  EXPECT_GT(token.resource.stale_writes_accepted, 0);
  const CheckResult fencing = run("fencing_gc_pause_stale_writes_rejected");
  EXPECT_GT(fencing.resource.stale_writes_rejected + fencing.resource.stale_reads_rejected, 0);
  EXPECT_EQ(fencing.resource.stale_writes_accepted, 0);
  const CheckResult lossy = run("token_lossy_network_unknown_outcomes");
  EXPECT_GT(lossy.liveness.unknown + lossy.liveness.releases_unknown, 0);
  const CheckResult seckill = run("none_seckill_oversold");
  EXPECT_GT(seckill.resource.oversold, 0);
  EXPECT_GT(run("redis_token_pause_overlap").safety.violations, 0);
  // Client 0 crashes while it holds: an enter with no exit before its crash.
  const RunResult crash = run_result("token_client_crash_mid_hold");
  bool holding = false, crashed_holding = false;
  for (const Event& e : crash.events) {
    if (e.client != 0) continue;
    if (e.type == Ev::kEnter) holding = true;
    if (e.type == Ev::kExit) holding = false;
    if (e.type == Ev::kCrash) crashed_holding = holding;
  }
  EXPECT_TRUE(crashed_holding);
}

// ---------------------------------------------------------------------------------------------
// Hand-written histories with known answers

// One operation: time in ms (written as ns), process, type, f, and extra JSON members.
std::string L(double ms, int p, const char* type, const char* f, const std::string& extra = "") {
  return "{\"time\": " + std::to_string(static_cast<int64_t>(ms * 1e6)) + ", \"process\": " + std::to_string(p) +
         ", \"type\": \"" + type + "\", \"f\": \"" + f + "\"" + (extra.empty() ? "" : ", " + extra) + "}\n";
}

CheckResult Judge(const std::string& text) {
  Result<RecordedHistory> parsed = ParseJepsenHistory(text);
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
  if (!parsed.ok()) return {};
  History h;
  for (const Event& e : parsed->events) h.Add(e.t_us, e.client, e.type, e.value, e.detail);
  return CheckAll(h, parsed->input);
}

TEST(HandWrittenHistory, TwoHoldersOverlap) {
  const CheckResult c = Judge(L(0, 0, "invoke", "acquire") + L(1, 0, "ok", "acquire") + L(2, 1, "invoke", "acquire") +
                              L(3, 1, "ok", "acquire") + L(5, 0, "invoke", "release") + L(5.5, 0, "ok", "release") +
                              L(6, 1, "invoke", "release") + L(7, 1, "fail", "release"));
  EXPECT_EQ(c.safety.violations, 1);
  EXPECT_DOUBLE_EQ(c.safety.overlap_ms_total, 2.0);  // 3 ms to 5 ms
  EXPECT_EQ(c.safety.overlapping_pairs, (std::vector<std::pair<int, int>>{{0, 1}}));
  ASSERT_EQ(c.safety.examples.size(), 1u);
  EXPECT_EQ(c.safety.examples[0].start_us, 3000);
  EXPECT_EQ(c.safety.examples[0].end_us, 5000);
  EXPECT_EQ(c.liveness.acquired, 2);
  EXPECT_EQ(c.liveness.releases_failed, 1);
  EXPECT_DOUBLE_EQ(c.latency.hold.max, 4.0);
}

TEST(HandWrittenHistory, AHandoffAtOneInstantIsNoOverlap) {
  const CheckResult c = Judge(L(0, 0, "invoke", "acquire") + L(1, 0, "ok", "acquire") + L(2, 1, "invoke", "acquire") +
                              L(5, 0, "invoke", "release") + L(5, 1, "ok", "acquire") + L(5, 0, "ok", "release"));
  EXPECT_EQ(c.safety.violations, 0);
  EXPECT_EQ(c.safety.max_concurrent_holders, 1);
}

TEST(HandWrittenHistory, UnknownOutcomesAreCountedAndHoldNothing) {
  const CheckResult c = Judge(L(0, 0, "invoke", "acquire") + L(1, 0, "info", "acquire") + L(2, 1, "invoke", "acquire") +
                              L(3, 1, "ok", "acquire") + L(4, 1, "invoke", "release") + L(9, 1, "info", "release"));
  EXPECT_EQ(c.liveness.unknown, 1);
  EXPECT_EQ(c.liveness.acquired, 1);
  EXPECT_EQ(c.liveness.releases_unknown, 1);
  EXPECT_EQ(c.safety.violations, 0);
}

TEST(HandWrittenHistory, ACrashEndsTheHoldAndAnOpenHoldLastsToTheEnd) {
  const std::string before = L(0, 0, "invoke", "acquire") + L(1, 0, "ok", "acquire");
  const std::string after = L(3, 1, "invoke", "acquire") + L(4, 1, "ok", "acquire") + L(6, 1, "invoke", "release") +
                            L(7, 1, "ok", "release");
  const CheckResult crashed = Judge(before + L(2, 0, "info", "crash") + after);
  EXPECT_EQ(crashed.safety.violations, 0);
  const CheckResult alive = Judge(before + after);  // process 0 never releases: it holds to the end
  EXPECT_EQ(alive.safety.violations, 1);
  EXPECT_DOUBLE_EQ(alive.safety.overlap_ms_total, 2.0);  // 4 ms to 6 ms, when process 1 lets go
  // The end marker says when the history ended (open holds and waits end there).
  Result<RecordedHistory> ended = ParseJepsenHistory(
      before + after + "{\"time\": 20000000, \"process\": \"nemesis\", \"type\": \"info\", \"f\": \"end\"}\n");
  ASSERT_TRUE(ended.ok());
  EXPECT_EQ(ended->input.end_us, 20000);
  EXPECT_EQ(ParseJepsenHistory(before + after)->input.end_us, 7000);
  // A crash also ends the process's open operation: a new invoke after it is allowed.
  const CheckResult again = Judge(L(0, 0, "invoke", "acquire") + L(1, 0, "info", "crash") +
                                  L(2, 0, "invoke", "acquire") + L(3, 0, "ok", "acquire"));
  EXPECT_EQ(again.liveness.acquired, 1);
}

TEST(HandWrittenHistory, LostUpdate) {
  const std::string acquire_both = L(0, 0, "invoke", "acquire") + L(1, 0, "ok", "acquire") +
                                   L(1, 1, "invoke", "acquire") + L(2, 1, "ok", "acquire");
  const CheckResult c =
      Judge(acquire_both + L(3, 0, "invoke", "read") + L(3, 0, "ok", "read", "\"value\": 41") +
            L(4, 1, "invoke", "read") + L(4, 1, "ok", "read", "\"value\": 41") + L(5, 0, "invoke", "write", "\"value\": 42") +
            L(5, 0, "ok", "write", "\"value\": 42") + L(6, 1, "invoke", "write", "\"value\": 42") +
            L(6, 1, "ok", "write", "\"value\": {\"counter\": 42}"));
  EXPECT_EQ(c.resource.writes_accepted, 2);
  EXPECT_EQ(c.resource.lost_updates, 1);  // the counter moved from 41 to 42 for two increments
  EXPECT_EQ(c.resource.stale_writes_accepted, 1);  // 0 wrote after 1 entered
}

TEST(HandWrittenHistory, StaleFencedWrites) {
  // 0 holds with token 1 and stalls; the lock expires; 1 acquires with token 2 and writes; 0 wakes
  // and writes: a store that checks tokens rejects it (fail), one that does not accepts it (ok).
  const std::string h = L(0, 0, "invoke", "acquire") + L(1, 0, "ok", "acquire", "\"value\": 1") +
                        L(2, 0, "invoke", "read") + L(2, 0, "ok", "read", "\"value\": {\"counter\": 0, \"token\": 1}") +
                        L(10, 1, "invoke", "acquire") + L(11, 1, "ok", "acquire", "\"value\": {\"token\": 2}") +
                        L(12, 1, "invoke", "read") + L(12, 1, "ok", "read", "\"value\": 0") +
                        L(13, 1, "invoke", "write", "\"value\": 1") + L(13, 1, "ok", "write", "\"value\": 1");
  const CheckResult rejected =
      Judge(h + L(20, 0, "invoke", "write", "\"value\": {\"counter\": 1, \"token\": 1}") +
            L(20, 0, "fail", "write", "\"value\": {\"counter\": 1, \"token\": 1}"));
  EXPECT_EQ(rejected.resource.stale_writes_rejected, 1);
  EXPECT_EQ(rejected.resource.stale_writes_accepted, 0);
  EXPECT_EQ(rejected.resource.lost_updates, 0);
  const CheckResult accepted = Judge(h + L(20, 0, "invoke", "write", "\"value\": 1") + L(20, 0, "ok", "write", "\"value\": 1"));
  EXPECT_EQ(accepted.resource.stale_writes_accepted, 1);
  EXPECT_EQ(accepted.resource.lost_updates, 1);
  ASSERT_FALSE(accepted.safety.examples.empty());
  bool fence_seen = false;
  for (const Event& e : accepted.safety.examples[0].timeline) fence_seen = fence_seen || (e.type == Ev::kEnter && e.value == 2);
  EXPECT_TRUE(fence_seen);  // the token of an acquire's ok is the enter's fence
}

TEST(HandWrittenHistory, AStringLockTokenIsNoFence) {
  Result<RecordedHistory> r = ParseJepsenHistory(L(0, 0, "invoke", "acquire", "\"value\": \"3f2a\"") +
                                                 L(1, 0, "ok", "acquire", "\"value\": \"3f2a\""));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->events.size(), 3u);
  EXPECT_EQ(r->events[2].type, Ev::kEnter);
  EXPECT_EQ(r->events[2].value, -1);
  // A counter's value must be a number.
  EXPECT_FALSE(ParseJepsenHistory(L(0, 0, "invoke", "write", "\"value\": \"3f2a\"")).ok());
}

TEST(HandWrittenHistory, LocksAreJudgedApart) {
  const std::string two = L(0, 0, "invoke", "acquire", "\"lock\": \"a\"") + L(1, 0, "ok", "acquire") +
                          L(2, 1, "invoke", "acquire", "\"lock\": \"%\"") + L(3, 1, "ok", "acquire") +
                          L(5, 0, "invoke", "release") + L(6, 1, "invoke", "release");
  std::string same = two, apart = two;
  same.replace(same.find('%'), 1, "a");
  apart.replace(apart.find('%'), 1, "b");
  EXPECT_EQ(Judge(same).safety.violations, 1);
  EXPECT_EQ(Judge(apart).safety.violations, 0);
}

TEST(HandWrittenHistory, ANemesisOfAnotherToolIsAFaultInTheTimeline) {
  Result<RecordedHistory> r = ParseJepsenHistory(
      "{\"time\": 5, \"process\": \"nemesis\", \"type\": \"invoke\", \"f\": \"kill\", \"value\": [\"n1\"]}\n"
      "{\"time\": 9, \"process\": \"nemesis\", \"type\": \"info\", \"f\": \"kill\", \"value\": [\"n1\"]}\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->events.size(), 1u);
  EXPECT_EQ(r->events[0].type, Ev::kFault);
  EXPECT_EQ(r->events[0].client, -1);
  EXPECT_EQ(r->events[0].detail, "kill [\"n1\"]");
}

// ---------------------------------------------------------------------------------------------
// Malformed lines

struct Malformed {
  std::string text;
  std::string message;  // the whole Invalid message
};

TEST(MalformedHistory, NamesTheLineAndTheProblem) {
  const std::string ok2 = L(0, 0, "invoke", "acquire") + "\n" + L(1, 0, "ok", "acquire");  // a blank line counts
  const Malformed cases[] = {
      {ok2 + "{\"time\": 2,\n", "line 4: not JSON"},
      {ok2 + "[1, 2]\n", "line 4: not a JSON object"},
      {ok2 + "{\"process\": 0, \"type\": \"invoke\", \"f\": \"release\"}\n", "line 4: no integer time (ns)"},
      {ok2 + L(0.5, 0, "invoke", "release"), "line 4: time goes backwards (500000 < 1000000)"},
      {ok2 + L(2, 0, "done", "release"), "line 4: type 'done' is not invoke, ok, fail or info"},
      {ok2 + L(2, 0, "invoke", "cas"),
       "line 4: f 'cas' is not acquire, release, read, write (or crash, pause, resume, order, command, fault)"},
      {ok2 + L(2, 0, "ok", "release"), "line 4: process 0 completes a release it did not invoke"},
      {ok2 + L(2, 0, "invoke", "read") + L(3, 0, "invoke", "write", "\"value\": 1"),
       "line 5: process 0 invokes write while its read (line 4) is open"},
      {ok2 + L(2, 0, "invoke", "read") + L(3, 0, "ok", "read"), "line 5: an ok read needs the counter value"},
      {ok2 + L(2, -1, "invoke", "read"), "line 4: process must be an integer from 0 to 1000000 or \"nemesis\""},
      {ok2 + L(2, 0, "invoke", "write", "\"value\": {\"count\": 1}"), "line 4: value has an unknown key 'count'"},
      {ok2 + L(2, 0, "ok", "crash"), "line 4: a crash is an info line"},
      {L(0, 0, "invoke", "acquire", "\"lock\": \"a\"") + L(1, 0, "fail", "acquire") +
           L(2, 0, "invoke", "acquire", "\"lock\": \"b\""),
       "line 3: process 0 names lock 'b' but named 'a' on line 1 (one lock per process)"},
  };
  for (const Malformed& m : cases) {
    Result<RecordedHistory> r = ParseJepsenHistory(m.text);
    ASSERT_FALSE(r.ok()) << m.text;
    EXPECT_TRUE(r.status().invalid());
    EXPECT_EQ(r.status().message(), m.message);
  }
}

}  // namespace
}  // namespace locklab
