// End-to-end runs on real redis-server processes that the runtime starts and stops itself:
// the same algorithms, the same checkers, real faults.
#include <gtest/gtest.h>

#include "algorithms/lock.h"
#include "harness/run/run_spec.h"
#include "harness/testing/test_specs.h"

namespace locklab {
namespace {

RunSpec RealSpec(const std::string& algorithm) { return ShortHoldSpec("redis", algorithm, 4, 40, 5, 60'000); }


class RealFaultFree : public ::testing::TestWithParam<std::string> {};

TEST_P(RealFaultFree, NoViolationAndEveryRequestAcquired) {
  RunResult r = RunResolved(RealSpec(GetParam()));
  EXPECT_EQ(r.check.safety.violations, 0);
  EXPECT_EQ(r.check.liveness.acquired, 40);
  EXPECT_EQ(r.check.resource.lost_updates, 0);
  EXPECT_EQ(r.counter_final, 40);
  EXPECT_EQ(r.spec.nodes, FindAlgorithm(GetParam())->nodes);
}

// Lock algorithms only: the baselines (none, local) promise no mutual exclusion.
std::vector<std::string> Names() {
  std::vector<std::string> v;
  for (const auto& a : Algorithms())
    if (a.is_lock) v.push_back(a.name);
  return v;
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, RealFaultFree, ::testing::ValuesIn(Names()), [](const auto& info) {
  std::string n = info.param;
  for (char& c : n)
    if (c == '-') c = '_';
  return n;
});

// All clients live in one process on the real runtime too, so the in-process mutex is shared.
TEST(RealBaselines, LocalMutexOnOneAppServerIsALockAndNoLockIsNot) {
  RunResult local = RunResolved(RealSpec("local"));
  EXPECT_EQ(local.check.safety.violations, 0);
  EXPECT_EQ(local.counter_final, 40);
  RunResult none = RunResolved(RealSpec("none"));
  EXPECT_GT(none.check.safety.violations, 0);
  EXPECT_EQ(none.check.liveness.acquired, 40);
}

// The lock-free baselines sell exactly the stock on real Redis too: the Lua script, and WATCH /
// MULTI / EXEC on each client's one connection (some EXECs abort and are retried).
TEST(RealBaselines, LockfreeSellersSellExactlyTheStock) {
  for (const char* name : {"lockfree-lua", "lockfree-watch"}) {
    RunSpec s = RealSpec(name);
    s.workload = "seckill";
    s.stock = 25;
    RunResult r = RunResolved(s);
    EXPECT_EQ(r.check.resource.orders, 25) << name;
    EXPECT_EQ(r.check.resource.oversold, 0) << name;
    EXPECT_EQ(r.stock_final, 0) << name;
    EXPECT_EQ(r.check.liveness.acquired, 40) << name;
  }
}

TEST(RealBaselines, SemaphoreAdmitsUpToItsPermits) {
  RunSpec s = RealSpec("semaphore");
  s.algorithm_options.Set("permits", "2");
  s.hold_ms = 20;
  RunResult r = RunResolved(s);
  EXPECT_EQ(r.check.safety.violations, 0);
  EXPECT_EQ(r.check.safety.max_concurrent_holders, 2);
  EXPECT_EQ(r.check.liveness.acquired, 40);
}

TEST(RealBaselines, RwLockReadersShareAndNothingReadIsStale) {
  RunSpec s = RealSpec("rwlock");
  s.read_ratio = 0.6;
  s.hold_ms = 10;
  RunResult r = RunResolved(s);
  EXPECT_EQ(r.check.safety.violations, 0);
  EXPECT_EQ(r.check.resource.stale_reads, 0);
  EXPECT_GT(r.check.resource.read_holds, 0);
  EXPECT_EQ(r.check.liveness.acquired, 40);
  EXPECT_EQ(r.counter_final, r.check.resource.writes_accepted);
}

TEST(RealFaults, TokenHolderPausedPastItsTtlOverlapsItsSuccessor) {
  RunSpec s = RealSpec("token");
  s.clients = 2;
  s.requests = 4;
  s.ttl_ms = 300;
  s.hold_ms = 50;
  FaultAction pause;
  pause.kind = FaultAction::Kind::kPauseClient;
  pause.at_us = 20'000;  // client 0 is inside its first critical section (it started first)
  pause.target = 0;
  pause.duration_us = 800'000;
  s.faults.plan.push_back(pause);
  RunResult r = RunResolved(s);
  EXPECT_GT(r.check.safety.violations, 0);
  EXPECT_EQ(r.check.safety.max_concurrent_holders, 2);
}

}  // namespace
}  // namespace locklab
