// The real runtime's instruments of its event loop: LOCKLAB_LOOP_LOG, RecordWakes and
// RecordPasses (harness/real/redis_runtime.h), against a redis-server of the tests' own.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/real/redis_runtime.h"
#include "harness/testing/redis_test_util.h"
#include "harness/testing/runtime_test_util.h"

namespace locklab {
namespace {

// One client, one node of the tests' redis-server.
std::unique_ptr<RedisRuntime> MakeOne() {
  BackendConfig cfg;
  cfg.clients = 1;
  cfg.nodes = 1;
  std::unique_ptr<Runtime> rt = MakeRedis(cfg, {});
  return std::unique_ptr<RedisRuntime>(static_cast<RedisRuntime*>(rt.release()));
}

TEST(RedisRuntime, LoopLogWritesEachStepWithItsPass) {
  const std::string path = ::testing::TempDir() + "locklab_loop_log_" + std::to_string(getpid()) + ".txt";
  setenv("LOCKLAB_LOOP_LOG", path.c_str(), 1);
  auto rt = MakeOne();
  ASSERT_TRUE(rt);
  auto sleep_then_get = [](Env& env) -> Task<void> {
    co_await env.SleepUs(1000);
    co_await env.Send(0, P("GET loop:k"));
  };
  rt->StartClient(0, sleep_then_get(rt->env(0)));
  MustRun(*rt);
  unsetenv("LOCKLAB_LOOP_LOG");
  std::ifstream in(path);
  std::string steps;  // the kinds of client 0's steps, in order
  int64_t pass = 0, last_pass = 0, ends = 0, last_cpu_us = 0, last_blocks = 0;
  std::string kind, what;
  int client = 0;
  int64_t t_us = 0;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream l(line);
    what.clear();
    ASSERT_TRUE(l >> pass >> kind >> client >> t_us) << line;
    std::getline(l >> std::ws, what);
    EXPECT_GE(pass, last_pass) << line;
    last_pass = pass;
    if (kind == "E") {  // the loop thread's CPU and blocks so far: both only grow
      ++ends;
      int64_t cpu_us = -1, blocks = -1;
      ASSERT_TRUE(std::istringstream(what) >> cpu_us >> blocks) << line;
      EXPECT_GE(cpu_us, last_cpu_us) << line;
      EXPECT_GE(blocks, last_blocks) << line;
      last_cpu_us = cpu_us;
      last_blocks = blocks;
    }
    if (client != 0) continue;
    steps += kind;
    if (kind == "T") EXPECT_LE(std::stoll(what), t_us);  // due before it fired
    if (kind == "W") EXPECT_EQ(what, "GET");
    if (kind == "R") EXPECT_EQ(what, "(nil)");
  }
  std::remove(path.c_str());
  EXPECT_EQ(steps, "TWR");
  EXPECT_GE(ends, 2);
  EXPECT_GT(last_cpu_us, 0);
  EXPECT_GE(last_blocks, 1);  // it slept through the 1 ms sleep at least once
}

// RecordWakes: a client that only sleeps 2 ms at a time wakes the idle loop for each sleep; each
// wake-up says how long the loop idled (about the sleep) and how late the timer ran.
TEST(RedisRuntime, RecordWakesSaysHowLongTheLoopIdledAndHowLateItWoke) {
  auto rt = MakeOne();
  ASSERT_TRUE(rt);
  std::vector<RedisRuntime::WakeSample> wakes;
  rt->RecordWakes(&wakes);
  auto sleeps = [](Env& env) -> Task<void> {
    for (int i = 0; i < 5; ++i) co_await env.SleepUs(2000);
  };
  rt->StartClient(0, sleeps(rt->env(0)));
  MustRun(*rt);
  // Up to five (a timer due before its loop's last pass ended, on a loaded machine, is no wake-up).
  ASSERT_GE(wakes.size(), 1u);
  EXPECT_LE(wakes.size(), 5u);
  for (const auto& w : wakes) {
    EXPECT_GT(w.idle_us, 0);
    EXPECT_LE(w.idle_us, 2000);  // the sleep began in the pass before
    EXPECT_GE(w.late_us, 0);
    EXPECT_LT(w.late_us, 1'000'000);
  }
}

// RecordPasses: three rounds of a 2 ms sleep and a GET make passes whose steps add up to three
// timers, three writes and three reads; the loop slept in some, and no pass has negative CPU.
TEST(RedisRuntime, RecordPassesCountsEachPassesStepsAndCpu) {
  auto rt = MakeOne();
  ASSERT_TRUE(rt);
  std::vector<RedisRuntime::PassSample> passes;
  rt->RecordPasses(&passes);
  auto loop = [](Env& env) -> Task<void> {
    for (int i = 0; i < 3; ++i) {
      co_await env.SleepUs(2000);
      co_await env.Send(0, P("GET pass:k"));
    }
  };
  rt->StartClient(0, loop(rt->env(0)));
  MustRun(*rt);
  int timers = 0, writes = 0, reads = 0, held = 0, slept = 0;
  for (const auto& p : passes) {
    timers += p.timers;
    writes += p.writes;
    reads += p.reads;
    held += p.held_replies;
    slept += p.slept ? 1 : 0;
    EXPECT_GT(p.timers + p.writes + p.reads + p.held_replies, 0);  // only passes with steps
    EXPECT_GE(p.cpu_us, 0);
  }
  EXPECT_EQ(timers, 3);
  EXPECT_EQ(writes, 3);
  EXPECT_EQ(reads, 3);
  EXPECT_EQ(held, 0);  // no injected delay: nothing held
  EXPECT_GE(slept, 1);
}

}  // namespace
}  // namespace locklab
