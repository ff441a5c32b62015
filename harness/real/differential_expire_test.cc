// Differential test of active expiry: keys that expire while nobody touches them, then the
// node's wall clock steps back. Real Redis 7 has deleted them in its expire cycle (every
// 100 ms), so they stay gone; the simulated node must say the same (sim/expire_cycle.h). Lazy
// expiry alone would bring them back: the clock now puts them before their deadline.
//
// The same steps on both sides: a simulated node inside a Simulator (one client, its commands
// in order, a node_clock_jump fault between the wait and the reads), and a real redis-server
// (the commands through hiredis, the clock moved by the clock shim, RedisServers::JumpClock,
// as the real runtime applies node_clock_jump). The waits are long (TTLs of 100-200 ms, then
// 800 ms: several cycles), so timing cannot decide a reply; the replies must be identical.
#include <hiredis/hiredis.h>
#include <time.h>

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "algorithms/command.h"
#include "algorithms/reply.h"
#include "harness/real/hiredis_reply.h"
#include "harness/real/redis_server.h"
#include "harness/testing/redis_test_util.h"
#include "harness/testing/sim_test_util.h"
#include "sim/simulator.h"

namespace locklab {
namespace {

constexpr int64_t kWaitMs = 800;                 // past every TTL below plus several cycles
constexpr int64_t kClockStepUs = -30'000'000;    // then the node's clock steps back 30 s

// Before the wait: the lock and keys that will expire untouched, one that will not, one
// without a TTL.
std::vector<Command> Before() {
  return {Command::Of("SET", "lock", "owner-a", "NX", "PX", "150"), Command::Of("SET", "k1", "v", "PX", "100"),
          Command::Of("SET", "k2", "v", "PX", "200"), Command::Of("SET", "keep", "v", "PX", "600000"),
          Command::Of("SET", "plain", "v")};
}
// After the wait and the clock step: the reads, and another client's attempt at the lock.
std::vector<Command> After() {
  return {Command::Of("GET", "lock"),  Command::Of("GET", "k1"),    Command::Of("EXISTS", "k1", "k2"),
          Command::Of("PTTL", "k2"),   Command::Of("GET", "keep"),  Command::Of("GET", "plain"),
          Command::Of("SET", "lock", "owner-b", "NX", "PX", "1000"), Command::Of("GET", "lock")};
}

Task<void> SimSteps(Env& env, std::vector<Reply>& out) {
  for (Command& c : Before()) out.push_back(co_await env.Send(0, std::move(c)));
  co_await env.SleepMs(kWaitMs);
  for (Command& c : After()) out.push_back(co_await env.Send(0, std::move(c)));
}

// The sim's replies; the clock steps back halfway through the wait (nothing runs around it).
std::vector<Reply> RunSim(bool active_expire) {
  sim::SimConfig cfg = sim::Config();
  cfg.active_expire = active_expire;
  sim::Simulator s(cfg);
  sim::Plan(s, sim::Fault(FaultAction::Kind::kNodeClockJump, (kWaitMs - 100) * 1000, 0, 0, 0, kClockStepUs));
  std::vector<Reply> out;
  s.StartClient(0, SimSteps(s.env(0), out));
  EXPECT_TRUE(sim::RunOk(s));
  return out;
}

struct RedisFree {
  void operator()(redisContext* c) const { redisFree(c); }
};

Reply RedisRun(redisContext* c, const Command& cmd) {
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  for (const auto& w : cmd.argv) {
    ptrs.push_back(w.data());
    lens.push_back(w.size());
  }
  auto* r = static_cast<redisReply*>(redisCommandArgv(c, static_cast<int>(ptrs.size()), ptrs.data(), lens.data()));
  if (r == nullptr) return Reply::Error(std::string("hiredis: ") + c->errstr);
  Reply out = FromHiredis(r);
  freeReplyObject(r);
  return out;
}

void SleepMs(int64_t ms) {
  timespec ts{static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1'000'000};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

TEST(DifferentialExpire, UntouchedExpiredKeysStayGoneWhenTheClockStepsBack) {
  std::unique_ptr<RedisServers> servers = StartServers(RedisServerOptions{});
  ASSERT_TRUE(servers);
  ASSERT_TRUE(servers->clock_shim_loaded()) << "liblocklab_clockshim.so not found: build target locklab_clockshim";
  timeval tv{2, 0};
  std::unique_ptr<redisContext, RedisFree> c(redisConnectWithTimeout("127.0.0.1", servers->port(0), tv));
  ASSERT_TRUE(c && c->err == 0) << (c ? c->errstr : "redisConnect failed");

  std::vector<Reply> real;
  for (const Command& cmd : Before()) real.push_back(RedisRun(c.get(), cmd));
  SleepMs(kWaitMs - 100);
  ASSERT_TRUE(servers->JumpClock(0, kClockStepUs).ok());
  SleepMs(100);
  for (const Command& cmd : After()) real.push_back(RedisRun(c.get(), cmd));

  const std::vector<Reply> sim = RunSim(true);
  ASSERT_EQ(sim.size(), real.size());
  std::vector<Command> all = Before();
  for (Command& cmd : After()) all.push_back(std::move(cmd));
  for (size_t i = 0; i < sim.size(); ++i)
    EXPECT_EQ(ToString(sim[i]), ToString(real[i])) << "step " << i << ": " << all[i].Name();
  // What the test is about, spelled out: the lock and k1/k2 are gone, "keep" and "plain" are
  // not, and owner-b gets the lock.
  const size_t n = Before().size();
  EXPECT_TRUE(real[n].is_nil());
  EXPECT_EQ(real[n + 2], Reply::Int(0));
  EXPECT_EQ(real[n + 3], Reply::Int(-2));
  EXPECT_EQ(real[n + 4], Reply::Str("v"));
  EXPECT_EQ(real[n + 7], Reply::Str("owner-b"));
  // And the difference is active expiry's: with lazy expiry only, the keys come back.
  const std::vector<Reply> lazy = RunSim(false);
  EXPECT_EQ(lazy[n], Reply::Str("owner-a"));
  EXPECT_TRUE(lazy[n + 6].is_nil());  // owner-b is refused
}

}  // namespace
}  // namespace locklab
