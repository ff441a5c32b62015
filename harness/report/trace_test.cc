// --trace commands|locks|none: the checkers' figures do not depend on it (only the history's size
// and the timelines do), the report says which mode ran when it is not the default, and a
// report assembled from per-run texts (big sweeps) has the bytes of the one built whole.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/report/report.h"
#include "harness/run/config.h"
#include "harness/run/run_spec.h"

namespace locklab {
namespace {

using nlohmann::json;

RunSpec Resolved(RunSpec s) {
  std::string error;
  EXPECT_TRUE(ResolveSpec(&s).ok(&error)) << error;
  return s;
}

// Runs that exercise every checker: overlaps under pauses, Redlock with delays and drift,
// fencing (stale writes rejected), pub/sub waiters, a seckill without a lock, a crashed client.
std::vector<RunSpec> Specs() {
  std::vector<RunSpec> out;
  RunSpec s;
  s.algorithm = "token";
  s.faults.gc_pause_ms = 1500;
  s.faults.gc_pause_rate = 0.5;
  s.hold_ms = 100;
  out.push_back(s);
  s = RunSpec();
  s.algorithm = "redlock";
  s.clients = 3;
  s.requests = 20;
  s.ttl_ms = 200;
  s.faults.gc_pause_ms = 300;
  s.faults.gc_pause_rate = 1;
  s.faults.net_delay_ms = 2;
  s.faults.net_dist = "long-tail";
  s.faults.clock_drift_ppm = 200;
  out.push_back(s);
  s = RunSpec();
  s.algorithm = "fencing";
  s.faults.gc_pause_ms = 1500;
  s.faults.gc_pause_rate = 0.5;
  s.hold_ms = 100;
  out.push_back(s);
  s = RunSpec();
  s.retry = "pubsub";
  s.clients = 20;
  s.requests = 300;
  s.faults.gc_pause_ms = 200;
  s.faults.gc_pause_rate = 0.3;
  out.push_back(s);
  s = RunSpec();
  s.algorithm = "none";
  s.workload = "seckill";
  s.stock = 50;
  out.push_back(s);
  s = RunSpec();
  FaultAction crash;
  crash.kind = FaultAction::Kind::kCrashClient;
  crash.at_us = 30'000;
  crash.target = 2;
  s.faults.plan.push_back(crash);
  out.push_back(s);
  return out;
}

// A run's report element without what the trace mode may change: its config and replay (they
// name the mode), the history's size and the examples' timelines.
json Figures(const RunResult& r) {
  json j = RunJson(r);
  j.erase("config");
  j.erase("replay");
  j.erase("history");
  for (json& ex : j["safety"]["examples"]) {
    ex.erase("timeline");
    ex.erase("replay");
  }
  return j;
}

bool Has(const std::vector<Event>& events, Ev type) {
  for (const Event& e : events)
    if (e.type == type) return true;
  return false;
}

TEST(Trace, EveryModeGivesTheSameFigures) {
  for (const RunSpec& base : Specs()) {
    RunSpec spec = base;
    const RunResult commands = RunOne(Resolved(spec), false, /*keep_events=*/true);
    spec.trace = "locks";
    const RunResult locks = RunOne(Resolved(spec), false, true);
    spec.trace = "none";
    const RunResult none = RunOne(Resolved(spec), false, true);
    const std::string what = ReplayCommand(commands.spec);
    ASSERT_TRUE(commands.completed) << what << ": " << commands.error;
    EXPECT_EQ(Figures(locks).dump(), Figures(commands).dump()) << what;
    EXPECT_EQ(Figures(none).dump(), Figures(commands).dump()) << what;
    EXPECT_FALSE(Has(locks.events, Ev::kCommand)) << what;
    if (commands.commands.total > 0) {  // the `none` algorithm sends none
      EXPECT_TRUE(Has(commands.events, Ev::kCommand)) << what;
      EXPECT_LT(locks.history_events, commands.history_events) << what;
    }
    EXPECT_LE(none.history_events, locks.history_events) << what;
    for (const Event& e : none.events)
      EXPECT_NE(EventsCheckersRead() & History::EvBit(e.type), 0u) << what << ": " << EvName(e.type);
  }
}

TEST(Trace, TimelinesShowCommandsOnlyWhenTraced) {
  RunSpec spec = Specs()[0];  // pauses longer than the TTL: overlaps with timelines
  const RunResult commands = RunOne(Resolved(spec), false);
  spec.trace = "locks";
  const RunResult locks = RunOne(Resolved(spec), false);
  ASSERT_FALSE(commands.check.safety.examples.empty());
  ASSERT_FALSE(locks.check.safety.examples.empty());
  EXPECT_TRUE(Has(commands.check.safety.examples[0].timeline, Ev::kCommand));
  EXPECT_FALSE(Has(locks.check.safety.examples[0].timeline, Ev::kCommand));
  EXPECT_TRUE(Has(locks.check.safety.examples[0].timeline, Ev::kEnter));
}

// A traced simulator run first counts its commands instead of keeping them and runs again in
// full only when it has an overlap to show (RunOne): its report is the one a run that kept every
// command from the start gives (keep_events always keeps them), with and without overlaps.
// Whatever the first run keeps of its commands (none, a few, or all of a short run's), the result
// is what a full run gives; a run with an example whose commands were not all kept runs again.
TEST(Trace, CountingCommandsFirstGivesTheReportOfAFullRun) {
  int with_examples = 0, without = 0;
  for (const RunSpec& base : Specs()) {
    const RunSpec spec = Resolved(base);
    const RunResult full = RunOne(spec, false, /*keep_events=*/true);
    for (size_t first_run_commands : {size_t{0}, size_t{5}, kFirstRunCommands}) {
      const RunResult first = RunOne(spec, false, false, first_run_commands);
      EXPECT_EQ(RunJson(first).dump(), RunJson(full).dump()) << ReplayCommand(spec) << " " << first_run_commands;
    }
    (full.check.safety.examples.empty() ? without : with_examples) += 1;
    EXPECT_LT(full.history_events, static_cast<int64_t>(kFirstRunCommands));  // kept whole by the default
  }
  EXPECT_GT(with_examples, 0);
  EXPECT_GT(without, 0);
}

// Counted commands fill the history's cap as kept ones do: the same size and the same drops.
TEST(Trace, CountedCommandsCountTowardsTheCap) {
  History kept(5), counted(5);
  counted.set_commands_kept_at_most(0);
  for (History* h : {&kept, &counted}) {
    for (int i = 0; i < 8; ++i) {
      h->Add(i, 0, Ev::kAcquireStart);
      h->AddCommand(i, 0, 0, [](std::string* out) { *out += "SET k v NX"; });
    }
  }
  EXPECT_EQ(counted.size(), kept.size());
  EXPECT_EQ(counted.commands_dropped(), kept.commands_dropped());
  EXPECT_GT(kept.commands_dropped(), 0);
  EXPECT_EQ(counted.recorded().size(), 8u);  // the lock events only
  EXPECT_GT(counted.commands_counted(), 0);
  EXPECT_EQ(kept.commands_counted(), 0);
}

// Past set_commands_kept_at_most's limit commands are counted: the first ones keep their text.
TEST(Trace, CommandsPastTheLimitAreCountedNotKept) {
  History h;
  h.set_commands_kept_at_most(3);
  for (int i = 0; i < 8; ++i) h.AddCommand(i, 0, 0, [i](std::string* out) { *out += "GET k" + std::to_string(i); });
  EXPECT_EQ(h.size(), 8u);
  EXPECT_EQ(h.commands_counted(), 5);
  ASSERT_EQ(h.recorded().size(), 3u);
  EXPECT_EQ(h.Detailed(h.recorded()[2]).detail, "GET k2");
}

TEST(Trace, ReportsNameTheModeOnlyWhenItIsNotTheDefault) {
  RunSpec s = Resolved(RunSpec());
  EXPECT_FALSE(ToJson(s).contains("trace"));
  EXPECT_EQ(ReplayCommand(s).find("--trace"), std::string::npos);
  s.trace = "none";
  s = Resolved(s);
  EXPECT_EQ(ToJson(s)["trace"], "none");
  EXPECT_NE(ReplayCommand(s).find("--trace none"), std::string::npos) << ReplayCommand(s);
  RunSpec back;
  std::string error;
  ASSERT_TRUE(FromJson(ToJson(s), &back).ok(&error)) << error;
  EXPECT_EQ(back.trace, "none");
}

TEST(Trace, AnUnknownModeIsRefused) {
  RunSpec s;
  s.trace = "all";
  const Status st = ResolveSpec(&s);
  EXPECT_TRUE(st.invalid());
  EXPECT_EQ(st.message(), "unknown trace 'all' (commands, locks, none)");
}

TEST(ReportParts, AssembledReportHasTheBytesOfTheWholeOne) {
  std::vector<RunResult> runs;
  for (const RunSpec& s : Specs()) runs.push_back(RunOne(Resolved(s), false));
  for (size_t n : {size_t{0}, size_t{1}, runs.size()}) {
    const std::vector<RunResult> some(runs.begin(), runs.begin() + static_cast<long>(n));
    json whole = BuildReport(some, MakeReportContext(some));
    json head = BuildReportHead(some, MakeReportContext(some));
    // What a sharded sweep adds after building it.
    whole["shard"] = head["shard"] = {{"index", 1}, {"count", 2}, {"runs", 7}, {"sweep", "0123456789abcdef"}};
    std::vector<std::string> texts;
    for (const RunResult& r : some) texts.push_back(RunText(r));
    EXPECT_EQ(ReportTextWithRuns(head, texts), ReportText(whole)) << n << " runs";
  }
}

}  // namespace
}  // namespace locklab
