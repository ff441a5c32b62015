// Redlock's fence option on the simulator: the INCR on node 0 after the quorum.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "algorithms/lock.h"
#include "harness/run/run_spec.h"
#include "harness/run/sim_runtime.h"
#include "harness/testing/runtime_test_util.h"

namespace locklab {
namespace {

struct Acquired {
  int64_t t_us;
  int client;
  int64_t fence;
};

std::unique_ptr<Lock> MakeRedlock(Env& env, const std::string& fence) {
  const AlgorithmInfo* alg = FindAlgorithm("redlock");
  LockConfig lc;
  lc.ttl_ms = 1000;
  lc.options.Set("fence", fence);
  std::string err;
  EXPECT_TRUE(lc.options.Resolve("redlock", alg->options).ok(&err)) << err;
  return alg->make(env, lc);
}

// Acquires (retrying after the lock's hint) and releases `rounds` times, noting each fence.
Task<void> AcquireLoop(Env& env, Runtime& rt, Lock& lock, int rounds, std::vector<Acquired>* out) {
  for (int i = 0; i < rounds;) {
    if (co_await lock.TryAcquire() != Outcome::kOk) {
      co_await env.SleepMs(lock.retry_hint_ms());
      continue;
    }
    out->push_back({rt.TrueNowUs(), env.client_id(), lock.fence()});
    co_await env.SleepMs(5);
    co_await lock.Release();
    ++i;
  }
}

BackendConfig FiveNodes(int clients) {
  BackendConfig bc;
  bc.clients = clients;
  bc.nodes = 5;
  bc.seed = 11;
  return bc;
}

TEST(RedlockFence, TwoClientsGetStrictlyIncreasingFences) {
  std::unique_ptr<Runtime> rt = MakeSimRuntime(FiveNodes(2));
  History h;
  rt->set_history(&h);
  std::vector<std::unique_ptr<Lock>> locks;
  std::vector<Acquired> got;
  for (int c = 0; c < 2; ++c) {
    locks.push_back(MakeRedlock(rt->env(c), "on"));
    rt->StartClient(c, AcquireLoop(rt->env(c), *rt, *locks.back(), 10, &got));
  }
  std::string err;
  ASSERT_TRUE(IsOk(rt->Run(RuntimeLimits{})));
  ASSERT_EQ(got.size(), 20u);
  bool both = false;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_GE(got[i].fence, 1);
    if (i > 0) {
      EXPECT_GE(got[i].t_us, got[i - 1].t_us);
      EXPECT_GT(got[i].fence, got[i - 1].fence) << "acquisition " << i;
      both = both || got[i].client != got[i - 1].client;
    }
  }
  EXPECT_TRUE(both);  // the two clients took turns at least once
  rt.reset();
}

TEST(RedlockFence, OffMeansNoFence) {
  std::unique_ptr<Runtime> rt = MakeSimRuntime(FiveNodes(1));
  History h;
  rt->set_history(&h);
  std::unique_ptr<Lock> lock = MakeRedlock(rt->env(0), "off");
  std::vector<Acquired> got;
  rt->StartClient(0, AcquireLoop(rt->env(0), *rt, *lock, 2, &got));
  std::string err;
  ASSERT_TRUE(IsOk(rt->Run(RuntimeLimits{})));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].fence, -1);
  EXPECT_EQ(got[1].fence, -1);
  rt.reset();
}

// Node 0 is down: the quorum (4 of 5) is reached, the INCR is not answered, and the
// acquisition fails and is undone, so a lock without fences gets the key at once after it.
Task<void> FencedThenPlain(Env& env, Lock& fenced, Lock& plain, std::vector<Outcome>* out) {
  out->push_back(co_await fenced.TryAcquire());
  out->push_back(co_await plain.TryAcquire());
  co_await plain.Release();
}

TEST(RedlockFence, NoAnswerFromNodeZeroFailsAndUndoesTheAcquisition) {
  std::unique_ptr<Runtime> rt = MakeSimRuntime(FiveNodes(1));
  History h;
  rt->set_history(&h);
  FaultAction crash;
  crash.kind = FaultAction::Kind::kCrashNode;
  crash.at_us = 0;
  crash.target = 0;
  std::string err;
  ASSERT_TRUE(IsOk(rt->PlanFault(crash)));
  std::unique_ptr<Lock> fenced = MakeRedlock(rt->env(0), "on");
  std::unique_ptr<Lock> plain = MakeRedlock(rt->env(0), "off");
  std::vector<Outcome> got;
  rt->StartClient(0, FencedThenPlain(rt->env(0), *fenced, *plain, &got));
  ASSERT_TRUE(IsOk(rt->Run(RuntimeLimits{})));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], Outcome::kFail);
  EXPECT_EQ(got[1], Outcome::kOk);
  rt.reset();
}

// End to end: holders paused past their TTL overlap, and the resource refuses every stale write.
TEST(RedlockFence, ResourceRejectsStaleWritesUnderLongPauses) {
  RunSpec s;
  s.algorithm = "redlock";
  s.algorithm_options.Set("fence", "on");
  s.clients = 8;
  s.requests = 120;
  s.hold_ms = 100;
  s.seed = 7;
  s.faults.gc_pause_ms = 1500;
  s.faults.gc_pause_rate = 0.5;
  std::string err;
  ASSERT_TRUE(ResolveSpec(&s).ok(&err)) << err;
  RunResult r = RunOne(s, false);
  ASSERT_TRUE(r.completed) << r.error;
  EXPECT_GT(r.check.safety.violations, 0);
  EXPECT_EQ(r.check.resource.stale_writes_accepted, 0);
  EXPECT_GT(r.check.resource.stale_writes_rejected + r.check.resource.stale_reads_rejected, 0);
  EXPECT_EQ(r.check.resource.lost_updates, 0);
}

}  // namespace
}  // namespace locklab
