// The semaphore, the reentrant lock and the lock-free seckill baselines on the simulator:
// what each must do fault-free, and the failure each broken variant is there to show.
// (Their plain fault-free runs with default options are in experiment_test.cc's FaultFree.)
#include <gtest/gtest.h>

#include "algorithms/lock.h"
#include "harness/run/run_spec.h"
#include "harness/testing/test_specs.h"

namespace locklab {
namespace {

RunSpec Seckill(const std::string& algorithm) {
  RunSpec s = SmallSpec(algorithm);
  s.workload = "seckill";
  s.stock = 50;
  return s;
}

TEST(Semaphore, ThreePermitsAdmitThreeAndNeverFour) {
  RunSpec s = SmallSpec("semaphore");
  s.algorithm_options.Set("permits", "3");
  RunResult r = RunResolved(s);
  EXPECT_EQ(r.check.safety.violations, 0);
  EXPECT_EQ(r.check.safety.max_concurrent_holders, 3);  // 8 clients keep every permit busy
  EXPECT_EQ(r.check.liveness.acquired, 120);
  EXPECT_GT(r.commands.by_name["semaphore_acquire"], 0);
  EXPECT_EQ(r.commands.by_name["ZREM"], 120);
}

TEST(Semaphore, HoldersPausedPastTheTtlAreDroppedAndOneTooManyGetsIn) {
  RunSpec s = SmallSpec("semaphore");
  s.algorithm_options.Set("permits", "2");
  s.faults.gc_pause_ms = 1500;
  s.faults.gc_pause_rate = 0.5;
  s.hold_ms = 100;
  RunResult r = RunResolved(s);
  EXPECT_GT(r.check.safety.violations, 0);
  EXPECT_GT(r.check.safety.max_concurrent_holders, 2);
  EXPECT_FALSE(r.check.safety.overlapping_pairs.empty());
}

TEST(Reentrant, NestedReleaseByCountKeepsTheLock) {
  RunSpec s = SmallSpec("reentrant");
  s.algorithm_options.Set("depth", "3");
  RunResult r = RunResolved(s);
  EXPECT_EQ(r.check.safety.violations, 0);
  EXPECT_EQ(r.check.liveness.acquired, 120);
  EXPECT_EQ(r.check.liveness.releases_failed, 0);
  EXPECT_EQ(r.counter_final, 120);
  // Per request: the outer acquire and release, 3 nested acquires and 3 nested releases.
  EXPECT_EQ(r.commands.by_name["reentrant_release"], 120 * 4);
}

TEST(Reentrant, ANestedReleaseThatDeletesTheLockLetsAnotherClientIn) {
  RunSpec s = SmallSpec("reentrant");
  s.algorithm_options.Set("release", "del");
  RunResult r = RunResolved(s);
  EXPECT_GT(r.check.safety.violations, 0);
  EXPECT_GT(r.check.resource.lost_updates, 0);
  EXPECT_GT(r.check.liveness.releases_failed, 0);  // the outer release finds the lock gone
}

TEST(RwLock, ReadersShareWritersExcludeAndNothingReadIsStale) {
  RunSpec s = SmallSpec("rwlock");
  s.read_ratio = 0.7;
  RunResult r = RunResolved(s);
  EXPECT_EQ(r.check.safety.violations, 0);
  EXPECT_GT(r.check.safety.max_concurrent_holders, 1);  // readers together
  EXPECT_EQ(r.check.liveness.acquired, 120);
  EXPECT_GT(r.check.resource.read_holds, 50);
  EXPECT_EQ(r.check.resource.stale_reads, 0);
  EXPECT_EQ(r.check.resource.lost_updates, 0);
  EXPECT_EQ(r.counter_final, r.check.resource.writes_accepted);  // every writer's increment landed
  EXPECT_GT(r.commands.by_name["rw_read_acquire"], 0);
  EXPECT_GT(r.commands.by_name["rw_write_acquire"], 0);
}

TEST(RwLock, ReadersPausedPastTheTtlReadWhatAWriterChanges) {
  RunSpec s = SmallSpec("rwlock");
  s.read_ratio = 0.7;
  s.faults.gc_pause_ms = 1500;
  s.faults.gc_pause_rate = 0.5;
  s.hold_ms = 100;
  RunResult r = RunResolved(s);
  EXPECT_GT(r.check.safety.violations, 0);
  EXPECT_GT(r.check.resource.stale_reads, 0);
}

TEST(RwLock, ReadRatioOutsideZeroToOneIsRefused) {
  RunSpec s = SmallSpec("rwlock");
  s.read_ratio = 1.5;
  std::string err;
  EXPECT_FALSE(ResolveSpec(&s).ok(&err));
  EXPECT_EQ(err, "read_ratio must be in [0, 1]");
}

TEST(Lockfree, LuaScriptSellsExactlyTheStock) {
  RunResult r = RunResolved(Seckill("lockfree-lua"));
  EXPECT_EQ(r.check.resource.orders, 50);
  EXPECT_EQ(r.check.resource.oversold, 0);
  EXPECT_EQ(r.stock_final, 0);
  EXPECT_EQ(r.check.liveness.acquired, 120);  // every request served: 50 sales, 70 found none
  EXPECT_EQ(r.check.safety.violations, 0);
  EXPECT_EQ(r.commands.by_name["stock_decrement"], 120);
  EXPECT_EQ(r.commands.by_name["SET"], 8);  // each client creates the stock once (SET NX)
}

TEST(Lockfree, WatchMultiExecSellsExactlyTheStockWithRetries) {
  RunResult r = RunResolved(Seckill("lockfree-watch"));
  EXPECT_EQ(r.check.resource.orders, 50);
  EXPECT_EQ(r.check.resource.oversold, 0);
  EXPECT_EQ(r.stock_final, 0);
  EXPECT_EQ(r.check.liveness.acquired, 120);
  // 8 buyers on one key: some EXECs abort (nil) and are tried again.
  EXPECT_GT(r.commands.by_name["EXEC"], 50);
  EXPECT_EQ(r.commands.by_name["EXEC"], r.commands.by_name["MULTI"]);
}

TEST(Lockfree, CheckThenActWithoutWatchOversells) {
  RunSpec s = Seckill("lockfree-watch");
  s.algorithm_options.Set("watch", "false");
  RunResult r = RunResolved(s);
  EXPECT_GT(r.check.resource.oversold, 0);
  EXPECT_LT(r.stock_final, 0);
}

TEST(Lockfree, RunsOnlyWithTheSeckillWorkload) {
  RunSpec s = SmallSpec("lockfree-lua");
  std::string err;
  EXPECT_FALSE(ResolveSpec(&s).ok(&err));
  EXPECT_EQ(err, "lockfree-lua sells stock kept in Redis: it runs only with --workload seckill");
}

}  // namespace
}  // namespace locklab
