// Active expiry: the store's cycle (sim/expire_cycle.h) on a fixed clock, and the simulator's
// running of it (sim/simulator.h, "Active expiry").
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "harness/testing/sim_test_util.h"
#include "sim/simulator.h"
#include "sim/store.h"

namespace locklab::sim {
namespace {

constexpr int64_t kT0 = 1'000'000;  // ms on the node's wall clock

std::string Key(int i) {
  std::string k = "k";
  return k += std::to_string(i);
}

// n keys with PX ttl_ms set at kT0.
void SetKeys(Store& s, int first, int n, int64_t ttl_ms) {
  for (int i = first; i < first + n; ++i)
    ASSERT_TRUE(s.Call({"SET", Key(i), "v", "PX", std::to_string(ttl_ms)}, kT0).is_ok());
}

TEST(ExpireCycle, UntouchedExpiredKeyIsGoneAfterOneCycle) {
  Store s;
  SetKeys(s, 0, 3, 100);
  ASSERT_TRUE(s.Call({"SET", "plain", "v"}, kT0).is_ok());
  std::vector<std::string> deleted;
  ExpireCycleResult r = s.ActiveExpireCycle(kT0 + 100, &deleted);  // at the deadline: still live
  EXPECT_EQ(r.expired, 0);
  EXPECT_EQ(r.sampled, 3);
  EXPECT_EQ(s.size(), 4u);
  r = s.ActiveExpireCycle(kT0 + 101, &deleted);
  EXPECT_EQ(r.expired, 3);
  EXPECT_EQ(s.size(), 1u);  // deleted, not just hidden: only "plain" is left
  EXPECT_EQ(deleted.size(), 3u);
  // Gone for good: the clock stepping back does not bring them back (lazy expiry alone would).
  EXPECT_TRUE(s.Call({"GET", Key(0)}, kT0).is_nil());
  EXPECT_EQ(s.Call({"EXISTS", Key(1), Key(2)}, kT0), Reply::Int(0));
}

TEST(ExpireCycle, OnlyKeysWithATtlAreSampledAndLiveOnesStay) {
  Store s;
  SetKeys(s, 0, 5, 100);
  SetKeys(s, 5, 5, 10'000);
  ASSERT_TRUE(s.Call({"SET", Key(0), "again"}, kT0).is_ok());  // no TTL any more
  ASSERT_EQ(s.Call({"DEL", Key(1)}, kT0), Reply::Int(1));
  const ExpireCycleResult r = s.ActiveExpireCycle(kT0 + 200, nullptr);
  // k2..k9: the index entries of k0 and k1 are dropped, not counted. 3 of 8 expired (> 10%):
  // a second loop looks at the 5 left.
  EXPECT_EQ(r.loops, 2);
  EXPECT_EQ(r.sampled, 8 + 5);
  EXPECT_EQ(r.expired, 3);
  EXPECT_EQ(s.Call({"GET", Key(0)}, kT0 + 200), Reply::Str("again"));
  EXPECT_EQ(s.size(), 6u);  // k0, k5..k9
}

// 40 keys with a TTL, 20 per loop. With 2 of each loop's 20 expired (10%), the cycle stops
// after one loop; with 3 (15% > 10%) it loops again, and again while loops keep finding more.
TEST(ExpireCycle, RepeatsWhileMoreThanTenPercentExpired) {
  for (const int expired_keys : {2, 40}) {
    Store s;
    SetKeys(s, 0, expired_keys, 100);
    SetKeys(s, expired_keys, 40 - expired_keys, 10'000);
    const ExpireCycleResult r = s.ActiveExpireCycle(kT0 + 200, nullptr);
    if (expired_keys == 2) {
      // Whatever the order, one loop of 20 finds at most 2 expired: 10% is acceptable.
      EXPECT_EQ(r.loops, 1) << expired_keys;
      EXPECT_EQ(r.sampled, 20);
    } else {
      EXPECT_EQ(r.loops, 3);  // 20 + 20 expired, then a loop that finds none
      EXPECT_EQ(r.expired, 40);
      EXPECT_EQ(s.size(), 0u);
    }
  }
  // The boundary exactly: 5 keys, all sampled in one loop; 1 expired is 20% > 10%: again.
  Store s;
  SetKeys(s, 0, 1, 100);
  SetKeys(s, 1, 4, 10'000);
  const ExpireCycleResult r = s.ActiveExpireCycle(kT0 + 200, nullptr);
  EXPECT_EQ(r.loops, 2);
  EXPECT_EQ(r.sampled, 5 + 4);
  EXPECT_EQ(r.expired, 1);
}

TEST(ExpireCycle, BudgetEndsTheCycleAndTheNextCarriesOn) {
  Store s;
  SetKeys(s, 0, 1000, 100);
  ExpireCycleLimits limits;
  limits.budget_us = 100;    // 100 keys at 1 µs each
  limits.key_cost_ns = 1'000;
  ExpireCycleResult r = s.ActiveExpireCycle(kT0 + 200, nullptr, limits);
  EXPECT_TRUE(r.budget_hit);
  EXPECT_EQ(r.loops, 16);  // checked every 16 loops: 320 keys > 100 µs
  EXPECT_EQ(r.expired, 320);
  EXPECT_EQ(s.size(), 680u);
  // The default budget: 25 ms at the assumed 1 µs a key, checked every 16 loops of 20.
  Store big;
  SetKeys(big, 0, 30'000, 100);
  r = big.ActiveExpireCycle(kT0 + 200, nullptr);
  EXPECT_TRUE(r.budget_hit);
  EXPECT_EQ(r.loops, 1264);  // the first multiple of 16 past 25'000 / 20 = 1250 loops
  EXPECT_EQ(big.size(), 30'000u - 1264u * 20u);
  r = big.ActiveExpireCycle(kT0 + 300, nullptr);  // the next cycle finishes the job
  EXPECT_FALSE(r.budget_hit);
  EXPECT_EQ(big.size(), 0u);
}

// The cursor carries on across loops and cycles: with 100 live keys, five cycles of one loop
// each look at every key once.
TEST(ExpireCycle, CursorWalksEveryKeyOnce) {
  Store s;
  SetKeys(s, 0, 100, 10'000);
  for (int cycle = 0; cycle < 5; ++cycle) {
    const ExpireCycleResult r = s.ActiveExpireCycle(kT0 + 1, nullptr);
    EXPECT_EQ(r.sampled, 20);
  }
  // Expire them all now; a cycle with keys every loop expired runs until none is left.
  const ExpireCycleResult r = s.ActiveExpireCycle(kT0 + 20'000, nullptr);
  EXPECT_EQ(r.expired, 100);
  EXPECT_EQ(r.loops, 6);
}

// Which keys a budget-limited cycle deletes depends on the hash seed, and only on it.
TEST(ExpireCycle, OrderFollowsTheHashSeed) {
  auto run = [](uint64_t seed) {
    Store s;
    s.SetExpireHashSeed(seed);
    SetKeys(s, 0, 1000, 100);
    ExpireCycleLimits limits;
    limits.budget_us = 1;
    std::vector<std::string> deleted;
    s.ActiveExpireCycle(kT0 + 200, &deleted, limits);
    return deleted;
  };
  EXPECT_EQ(run(7), run(7));
  EXPECT_NE(run(7), run(8));
  EXPECT_EQ(run(7).size(), 16u * 20u);
}

// --- In the simulator ---

Task<void> SetSleepGet(Env& env, std::vector<Reply>& out, int64_t ttl_ms, int64_t sleep_ms) {
  out.push_back(co_await env.Send(0, Command::Of("SET", "lock", "a", "PX", std::to_string(ttl_ms))));
  co_await env.SleepMs(sleep_ms);
  out.push_back(co_await env.Send(0, Command::Of("GET", "lock")));
}

// A key that expired untouched, then the node's clock steps back 10 s: with active expiry
// the key is gone (as on real Redis), with lazy expiry only it comes back.
TEST(SimulatorExpire, DeletedKeyStaysGoneWhenTheClockStepsBack) {
  for (const bool active : {true, false}) {
    SimConfig cfg = Config();
    cfg.active_expire = active;
    Simulator sim(cfg);
    Plan(sim, Fault(FaultAction::Kind::kNodeClockJump, 400'000, 0, 0, 0, -10'000'000));
    std::vector<Reply> seen;
    sim.StartClient(0, SetSleepGet(sim.env(0), seen, 100, 500));
    ASSERT_TRUE(RunOk(sim));
    ASSERT_EQ(seen.size(), 2u);
    if (active) {
      EXPECT_TRUE(seen[1].is_nil());
    } else {
      EXPECT_EQ(seen[1], Reply::Str("a"));
    }
  }
}

// A paused node runs no cycle: the key comes back after the clock steps back during the pause,
// unless the cycle ran before the pause.
TEST(SimulatorExpire, PausedNodeRunsNoCycle) {
  SimConfig cfg = Config();
  cfg.command_timeout_us = 2'000'000;
  Simulator sim(cfg);
  // The key expires at ~100 ms; the node is stopped from 50 ms to 1 s; at 900 ms its clock
  // steps back 10 s; the GET at ~1 s (held until the resume) finds the key live again.
  Plan(sim, Fault(FaultAction::Kind::kPauseNode, 50'000, 0, 0, 950'000, 0));
  Plan(sim, Fault(FaultAction::Kind::kNodeClockJump, 900'000, 0, 0, 0, -10'000'000));
  std::vector<Reply> seen;
  sim.StartClient(0, SetSleepGet(sim.env(0), seen, 100, 500));
  ASSERT_TRUE(RunOk(sim));
  EXPECT_EQ(seen[1], Reply::Str("a"));
}

// The master's cycle deletes the key and sends the replica a DEL: after failover the promoted
// replica's clock steps back, and the key is still gone (lazy expiry only: it is back).
TEST(SimulatorExpire, ReplicaSeesTheCyclesDeletion) {
  for (const bool active : {true, false}) {
    SimConfig cfg = Config();
    cfg.with_replica = true;
    cfg.active_expire = active;
    Simulator sim(cfg);
    Plan(sim, Fault(FaultAction::Kind::kFailover, 300'000, 0, 0, 10'000, 0));
    Plan(sim, Fault(FaultAction::Kind::kNodeClockJump, 320'000, 0, 0, 0, -10'000'000));  // the new master
    std::vector<Reply> seen;
    sim.StartClient(0, SetSleepGet(sim.env(0), seen, 100, 400));
    ASSERT_TRUE(RunOk(sim));
    if (active) {
      EXPECT_TRUE(seen[1].is_nil());
    } else {
      EXPECT_EQ(seen[1], Reply::Str("a"));
    }
  }
}

// Which keys the cycles deleted before the clock steps back depends on the cycle's phase, drawn
// from the seed: the same seed gives the same keys, other seeds other ones.
TEST(SimulatorExpire, SameSeedSameResult) {
  auto run = [](uint64_t seed) {
    SimConfig cfg = Config();
    cfg.seed = seed;
    Simulator sim(cfg);
    Plan(sim, Fault(FaultAction::Kind::kNodeClockJump, 170'000, 0, 0, 0, -10'000'000));
    std::vector<Reply> out;
    auto steps = [](Env& env, std::vector<Reply>& o) -> Task<void> {
      for (int i = 0; i < 30; ++i)
        co_await env.Send(0, Command::Of("SET", Key(i), "v", "PX", std::to_string(20 + 5 * i)));
      co_await env.SleepMs(170);
      for (int i = 0; i < 30; ++i) o.push_back(co_await env.Send(0, Command::Of("EXISTS", Key(i))));
    };
    sim.StartClient(0, steps(sim.env(0), out));
    EXPECT_TRUE(RunOk(sim));
    return out;
  };
  EXPECT_EQ(run(11), run(11));
  std::vector<std::vector<Reply>> distinct;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    auto r = run(seed);
    if (std::find(distinct.begin(), distinct.end(), r) == distinct.end()) distinct.push_back(r);
  }
  EXPECT_GE(distinct.size(), 3u);
}

}  // namespace
}  // namespace locklab::sim
