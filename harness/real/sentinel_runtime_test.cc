// The real runtime's Sentinel mode (--failover-by sentinel): Sentinel promotes the replica for
// real, the clients follow +switch-master and keep working, and the unreplicated lock is lost.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/cli/failover_compare.h"
#include "harness/real/redis_runtime.h"
#include "harness/run/run_spec.h"
#include "harness/testing/redis_test_util.h"
#include "harness/testing/runtime_test_util.h"
#include "harness/testing/sentinel_test_util.h"
#include "sim/history.h"

namespace locklab {
namespace {


struct Shared {
  bool b_in = false;     // B holds the lock
  bool a_out = false;    // A left its critical section (it never releases: its key is 30 s long)
  int64_t b_in_ms = -1;
  int later_ok = 0;      // B's acquisitions after the promotion
};

// A: a key that replicates, then the lock after the replica is cut off (100 ms) and before the
// master dies (200 ms); holds until B got in (10 s at most): could B get in while A holds?
Task<void> HolderA(Env& env, Seen* seen, Shared* sh) {
  seen->Add(env, co_await env.Send(0, P("SET before 1")));
  co_await env.SleepMs(130 - env.MonotonicMs());
  seen->Add(env, co_await env.Send(0, P("SET lock A NX PX 30000")));
  for (int i = 0; i < 1000 && !sh->b_in; ++i) co_await env.SleepMs(10);
  sh->a_out = true;
}

// B: tries the lock every 20 ms (errors while there is no master), then keeps acquiring and
// releasing a lock of its own on the new master.
Task<void> ContenderB(Env& env, Seen* seen, Shared* sh) {
  co_await env.SleepMs(220 - env.MonotonicMs());
  for (int i = 0; i < 500 && !sh->b_in; ++i) {
    Reply r = co_await env.Send(0, P("SET lock B NX PX 30000"));
    if (r.is_ok() && !sh->a_out) {
      sh->b_in = true;
      sh->b_in_ms = env.MonotonicMs();
      seen->Add(env, co_await env.Send(0, P("GET before")));
      break;
    }
    co_await env.SleepMs(20);
  }
  for (int i = 0; i < 5; ++i) {
    Reply set = co_await env.Send(0, P("SET other B NX PX 1000"));
    Reply del = co_await env.Send(0, P("DEL other"));
    if (set.is_ok() && del == Reply::Int(1)) ++sh->later_ok;
  }
}

TEST(SentinelRuntime, SentinelPromotesClientsFollowAndTheUnreplicatedLockIsLost) {
  BackendConfig cfg;
  cfg.clients = 2;
  cfg.with_replica = true;
  cfg.failover_by_sentinel = true;
  std::unique_ptr<Runtime> made = MakeRedis(cfg);
  ASSERT_TRUE(made);
  auto* rt = static_cast<RedisRuntime*>(made.get());
  const std::string master = rt->endpoint_address(0);
  RedisServers* servers = rt->servers();
  ASSERT_NE(servers, nullptr);
  const int r = servers->replica_index();
  EXPECT_EQ(master, servers->address(0));  // as Sentinel named it
  FaultAction f;
  f.kind = FaultAction::Kind::kFailover;
  f.at_us = 100'000;
  f.duration_us = 100'000;  // master killed at 200 ms, after A's SET
  ASSERT_TRUE(IsOk(rt->PlanFault(f)));
  History h;
  rt->set_history(&h);
  Seen a, b;
  Shared sh;
  rt->StartClient(0, HolderA(rt->env(0), &a, &sh));
  rt->StartClient(1, ContenderB(rt->env(1), &b, &sh));
  MustRun(*rt);

  // Sentinel, not locklab, promoted the replica: it is a master now, and endpoint 0 moved to it.
  EXPECT_EQ(MustQuery(*servers, r, {"ROLE"}).substr(0, 6), "master");
  EXPECT_EQ(rt->endpoint_address(0), servers->address(r));
  EXPECT_FALSE(servers->running(0));
  // A's lock was acknowledged and lost: B got in while A held (A's key had 30 s to live).
  ASSERT_EQ(a.replies.size(), 2u);
  EXPECT_TRUE(a.replies[1].is_ok()) << ToString(a.replies[1]);
  EXPECT_TRUE(sh.b_in);
  ASSERT_EQ(b.replies.size(), 1u);
  EXPECT_EQ(b.replies[0], Reply::Str("1"));  // what had replicated before the cut is there
  EXPECT_EQ(sh.later_ok, 5);                 // the clients keep working on the new master
  bool noted = false;
  for (const auto& n : rt->Notes()) noted = noted || n.find("+switch-master after") != std::string::npos;
  EXPECT_TRUE(noted);
  int64_t promoted_after_us = -1;
  for (const Event& e : h.events())
    if (e.type == Ev::kFault && e.detail.rfind("Redis Sentinel promoted", 0) == 0) promoted_after_us = e.value;
  EXPECT_GT(promoted_after_us, 0);
  EXPECT_GT(sh.b_in_ms, 200 + promoted_after_us / 1000 - 1);  // not before Sentinel announced it

  const std::string dir = servers->dir();
  EXPECT_TRUE(AnyRedisProcessIn(dir));  // the check sees the replica and the sentinels...
  made.reset();
  EXPECT_FALSE(AnyRedisProcessIn(dir));  // ...and nothing once the runtime is gone
}

// The same race through the token lock and the checkers (the comparison's spec, shortened).
TEST(SentinelRuntime, TokenLockTwoHoldersMeasuredByTheCheckers) {
  RunSpec spec = FailoverRaceSpec("sentinel", /*hold_ms=*/5000, /*seed=*/1);
  std::string err;
  ASSERT_TRUE(ResolveSpec(&spec).ok(&err)) << err;
  RunResult res = RunOne(spec, false, /*keep_events=*/true);
  ASSERT_TRUE(res.completed) << res.error;
  const FailoverOutcome o = OutcomeOf(res);
  ASSERT_GT(o.promoted_after_ms, 0) << "no promotion recorded";
  EXPECT_GT(o.replicaof_after_ms, 0);  // Sentinel's REPLICAOF NO ONE, before it tells the clients
  EXPECT_LE(o.replicaof_after_ms, o.promoted_after_ms);
  EXPECT_EQ(res.check.safety.max_concurrent_holders, 2);
  EXPECT_GT(res.check.safety.overlap_ms_total, 0);
  EXPECT_TRUE(o.two_holders);
  EXPECT_EQ(res.check.liveness.acquired, 2);  // A, then B on the promoted replica
}

TEST(SentinelRuntime, TheSimulatorAndUnknownModesAreRefused) {
  RunSpec s;
  s.failover_by = "sentinel";
  Status st = ResolveSpec(&s);
  EXPECT_TRUE(st.invalid());
  EXPECT_NE(st.message().find("--backend redis"), std::string::npos) << st.message();
  s = RunSpec();
  s.failover_by = "raft";
  EXPECT_TRUE(ResolveSpec(&s).invalid());
  s = RunSpec();
  s.backend = "redis";
  s.failover_by = "sentinel";
  ASSERT_TRUE(IsOk(ResolveSpec(&s)));
  EXPECT_TRUE(s.replica);  // implied
}

}  // namespace
}  // namespace locklab
