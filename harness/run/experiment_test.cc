// End-to-end runs on the simulator: every lock algorithm fault-free, the baselines (none, local)
// doing the damage they are there to show, and each fault type doing what it should to the
// algorithms it should break.
#include <gtest/gtest.h>

#include "algorithms/lock.h"
#include "harness/run/run_spec.h"
#include "harness/testing/test_specs.h"

namespace locklab {
namespace {

class FaultFree : public ::testing::TestWithParam<std::string> {};

TEST_P(FaultFree, NoViolationAndEveryRequestAcquired) {
  RunResult r = RunResolved(SmallSpec(GetParam()));
  EXPECT_EQ(r.check.safety.violations, 0);
  EXPECT_EQ(r.check.safety.max_concurrent_holders, 1);
  EXPECT_EQ(r.check.liveness.acquired, 120);
  EXPECT_EQ(r.check.liveness.failed + r.check.liveness.unknown, 0);
  EXPECT_EQ(r.check.resource.lost_updates, 0);
  EXPECT_EQ(r.counter_final, 120);
  EXPECT_GT(r.commands.total, 120);
}

// The baselines (is_lock = false) promise no mutual exclusion; they have tests of their own.
std::vector<std::string> AllLockNames() {
  std::vector<std::string> v;
  for (const auto& a : Algorithms())
    if (a.is_lock) v.push_back(a.name);
  return v;
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, FaultFree, ::testing::ValuesIn(AllLockNames()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n) if (c == '-') c = '_';
                           return n;
                         });

TEST(Baselines, NoLockOversellsTheStock) {
  RunSpec s = SmallSpec("none");
  s.workload = "seckill";
  s.stock = 50;
  RunResult r = RunResolved(s);
  EXPECT_GT(r.check.safety.violations, 0);
  EXPECT_EQ(r.check.safety.max_concurrent_holders, 8);  // every client at once
  EXPECT_GT(r.check.resource.oversold, 0);
  EXPECT_EQ(r.check.liveness.acquired, 120);
  EXPECT_EQ(r.commands.total, 0);
}

TEST(Baselines, LocalMutexOnOneAppServerIsALock) {
  RunSpec s = SmallSpec("local");
  s.workload = "seckill";
  s.stock = 50;
  RunResult r = RunResolved(s);
  EXPECT_EQ(r.check.safety.violations, 0);
  EXPECT_EQ(r.check.safety.max_concurrent_holders, 1);
  EXPECT_EQ(r.check.liveness.acquired, 120);
  EXPECT_EQ(r.check.resource.orders, 50);
  EXPECT_EQ(r.check.resource.oversold, 0);
  EXPECT_EQ(r.commands.total, 0);
}

TEST(Baselines, LocalMutexesExcludeOnlyClientsOfTheSameServer) {
  RunSpec s = SmallSpec("local");
  s.app_servers = 3;
  s.workload = "seckill";
  s.stock = 50;
  RunResult r = RunResolved(s);
  EXPECT_GT(r.check.safety.violations, 0);
  EXPECT_LE(r.check.safety.max_concurrent_holders, 3);  // one per server at most
  EXPECT_GT(r.check.resource.oversold, 0);
  ASSERT_FALSE(r.check.safety.overlapping_pairs.empty());
  for (const auto& [a, b] : r.check.safety.overlapping_pairs)
    EXPECT_NE(a % 3, b % 3) << a << " and " << b << " share a server";
  EXPECT_EQ(r.check.liveness.acquired, 120);
}

RunSpec WithLongPauses(const std::string& algorithm) {
  RunSpec s = SmallSpec(algorithm);
  s.faults.gc_pause_ms = 1500;  // longer than the TTL
  s.faults.gc_pause_rate = 0.5;
  s.hold_ms = 100;
  return s;
}

TEST(Faults, TokenBreaksUnderPausesLongerThanTheTtl) {
  RunResult r = RunResolved(WithLongPauses("token"));
  EXPECT_GT(r.check.safety.violations, 0);
  EXPECT_GE(r.check.safety.max_concurrent_holders, 2);
  EXPECT_FALSE(r.check.safety.examples.empty());
}

TEST(Faults, FencingRejectsEveryStaleWriteUnderTheSamePauses) {
  RunResult r = RunResolved(WithLongPauses("fencing"));
  EXPECT_EQ(r.check.resource.stale_writes_accepted, 0);
  EXPECT_GT(r.check.resource.stale_writes_rejected, 0);
  // Holders still overlap: fencing protects the resource, not the lock.
  EXPECT_GT(r.check.safety.violations, 0);
}

TEST(Faults, TimestampBreaksWithClientSkewBeyondTheTtl) {
  RunSpec s = SmallSpec("timestamp");
  s.faults.clock_skew_ms = 3000;
  s.hold_ms = 100;
  RunResult r = RunResolved(s);
  EXPECT_GT(r.check.safety.violations, 0);
}

TEST(Faults, TokenIsUnaffectedByClientSkew) {
  RunSpec s = SmallSpec("token");
  s.faults.clock_skew_ms = 3000;
  s.hold_ms = 100;
  EXPECT_EQ(RunResolved(s).check.safety.violations, 0);
}

TEST(Faults, NetworkDelayRaisesAcquireLatency) {
  RunSpec fast = SmallSpec("token");
  RunSpec slow = SmallSpec("token");
  slow.faults.net_delay_ms = 5;
  EXPECT_GT(RunResolved(slow).check.latency.acquire.mean, RunResolved(fast).check.latency.acquire.mean + 5);
}

TEST(Faults, NaiveStuckForeverAfterHolderCrash) {
  RunSpec s = SmallSpec("naive");
  s.acquire_timeout_ms = 2000;
  FaultAction crash;
  crash.kind = FaultAction::Kind::kCrashClient;
  crash.at_us = 5'000;  // client 0 is inside its first critical section
  crash.target = 0;
  s.faults.plan.push_back(crash);
  RunResult r = RunResolved(s);
  EXPECT_GE(r.check.liveness.stuck_ms_max, 2000);
  EXPECT_GT(r.check.liveness.failed, 0);
}

TEST(Determinism, SameSeedSameFigures) {
  RunResult a = RunResolved(WithLongPauses("token"));
  RunResult b = RunResolved(WithLongPauses("token"));
  EXPECT_EQ(a.history_events, b.history_events);
  EXPECT_EQ(a.commands.total, b.commands.total);
  EXPECT_EQ(a.duration_us, b.duration_us);
  EXPECT_EQ(a.check.safety.overlap_ms_total, b.check.safety.overlap_ms_total);
}

TEST(Determinism, DifferentSeedDifferentRun) {
  RunSpec s1 = WithLongPauses("token");
  RunSpec s2 = s1;
  s2.seed = 8;
  EXPECT_NE(RunResolved(s1).duration_us, RunResolved(s2).duration_us);
}

TEST(Resolve, RejectsUnknownAlgorithmAndOption) {
  std::string err;
  RunSpec s = SmallSpec("tokn");
  EXPECT_FALSE(ResolveSpec(&s).ok(&err));
  EXPECT_NE(err.find("unknown algorithm 'tokn'"), std::string::npos);
  s = SmallSpec("token");
  s.algorithm_options.Set("relase", "del");
  EXPECT_FALSE(ResolveSpec(&s).ok(&err));
  EXPECT_NE(err.find("relase"), std::string::npos);
  s = SmallSpec("redlock");
  EXPECT_TRUE(ResolveSpec(&s).ok(&err));
  EXPECT_EQ(s.nodes, 5);
}

TEST(Resolve, AppServersInOneToAThousand) {
  std::string err;
  RunSpec s = SmallSpec("local");
  s.app_servers = 0;
  EXPECT_FALSE(ResolveSpec(&s).ok(&err));
  EXPECT_EQ(err, "app_servers must be in [1, 1000]");
  s.app_servers = 1001;
  EXPECT_FALSE(ResolveSpec(&s).ok(&err));
  s.app_servers = 1000;  // more servers than clients is allowed: some stay idle
  EXPECT_TRUE(ResolveSpec(&s).ok(&err)) << err;
}

}  // namespace
}  // namespace locklab
