// The simulator's process, network and node semantics, one fault at a time.
#include "sim/simulator.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace locklab::sim {
namespace {

SimConfig Config(int clients = 1, int nodes = 1) {
  SimConfig c;
  c.clients = clients;
  c.nodes = nodes;
  c.seed = 3;
  c.net.mean_us = 100;
  c.service_us = 2;
  c.command_timeout_us = 50'000;
  return c;
}

struct Seen {
  std::vector<Reply> replies;
  std::vector<int64_t> at_us;  // true time each reply was seen
};

// Sends the commands one after the other and records what came back, and when.
Task<void> SendEach(Simulator& sim, Env& env, std::vector<Command> cmds, Seen& seen, int node = 0) {
  for (auto& c : cmds) {
    Reply r = co_await env.Send(node, std::move(c));
    seen.replies.push_back(std::move(r));
    seen.at_us.push_back(sim.now_us());
  }
}

bool RunOk(Simulator& sim) {
  std::string err;
  bool ok = sim.Run(&err);
  EXPECT_TRUE(ok) << err;
  return ok;
}

TEST(Simulator, CommandRoundTripTakesTwoDelaysAndService) {
  Simulator sim(Config());
  Seen seen;
  sim.StartClient(0, SendEach(sim, sim.env(0), {Command::Of("SET", "k", "v"), Command::Of("GET", "k")}, seen));
  ASSERT_TRUE(RunOk(sim));
  ASSERT_EQ(seen.replies.size(), 2u);
  EXPECT_TRUE(seen.replies[0].is_ok());
  EXPECT_EQ(seen.replies[1], Reply::Str("v"));
  EXPECT_EQ(seen.at_us[0], 202);  // 100 there, 2 service, 100 back
  EXPECT_EQ(seen.at_us[1], 404);
  EXPECT_EQ(sim.commands_total(), 2);
}

TEST(Simulator, PausedNodeMeansTimeoutButTheCommandStillLands) {
  Simulator sim(Config());
  sim.PlanFault(SimFault::kPauseNode, 0, 0, 0, 200'000, 0);
  Seen seen;
  sim.StartClient(0, SendEach(sim, sim.env(0), {Command::Of("SET", "k", "v")}, seen));
  ASSERT_TRUE(RunOk(sim));
  ASSERT_EQ(seen.replies.size(), 1u);
  EXPECT_TRUE(seen.replies[0].is_timeout());
  EXPECT_EQ(seen.at_us[0], 50'000);  // exactly the command timeout
  // Run() ends when the client is done; the SET has not run yet. Keep the node busy later.
  Seen later;
  Simulator sim2(Config());
  sim2.PlanFault(SimFault::kPauseNode, 0, 0, 0, 60'000, 0);
  auto two = [](Simulator& s, Env& env, Seen& out) -> Task<void> {
    Reply r1 = co_await env.Send(0, Command::Of("SET", "k", "v"));
    co_await env.SleepMs(100);
    Reply r2 = co_await env.Send(0, Command::Of("GET", "k"));
    out.replies.push_back(r1);
    out.replies.push_back(r2);
  };
  sim2.StartClient(0, two(sim2, sim2.env(0), later));
  ASSERT_TRUE(RunOk(sim2));
  EXPECT_TRUE(later.replies[0].is_timeout());
  EXPECT_EQ(later.replies[1], Reply::Str("v"));  // the "unknown" SET did happen
}

TEST(Simulator, PausedClientGetsItsReplyAfterThePause) {
  Simulator sim(Config());
  sim.PlanFault(SimFault::kPauseClient, 50, 0, 0, 10'000, 0);
  Seen seen;
  sim.StartClient(0, SendEach(sim, sim.env(0), {Command::Of("PING")}, seen));
  ASSERT_TRUE(RunOk(sim));
  EXPECT_EQ(seen.replies[0], Reply::Status("PONG"));
  EXPECT_EQ(seen.at_us[0], 10'050);
}

TEST(Simulator, PauseFreezesBackgroundTasksToo) {
  Simulator sim(Config());
  sim.PlanFault(SimFault::kPauseClient, 1'500, 0, 0, 10'000, 0);
  std::vector<int64_t> ticks;
  auto ticker = [](Simulator& s, Env& env, std::vector<int64_t>& out) -> Task<void> {
    for (int i = 0; i < 5; ++i) {
      co_await env.SleepMs(1);
      out.push_back(s.now_us());
    }
  };
  auto main = [&](Env& env) -> Task<void> {
    env.Spawn(ticker(sim, env, ticks));
    co_await env.SleepMs(20);
  };
  sim.StartClient(0, main(sim.env(0)));
  ASSERT_TRUE(RunOk(sim));
  ASSERT_EQ(ticks.size(), 5u);
  EXPECT_EQ(ticks[0], 1'000);
  EXPECT_EQ(ticks[1], 11'500);  // due at 2000, delivered when the pause ends
  EXPECT_EQ(ticks[2], 12'500);
}

TEST(Simulator, CrashedClientNeverResumes) {
  Simulator sim(Config(2));
  sim.PlanFault(SimFault::kCrashClient, 150, 0, 0, 0, 0);
  Seen a, b;
  sim.StartClient(0, SendEach(sim, sim.env(0), {Command::Of("SET", "a", "1"), Command::Of("SET", "a", "2")}, a));
  sim.StartClient(1, SendEach(sim, sim.env(1), {Command::Of("PING"), Command::Of("PING")}, b));
  ASSERT_TRUE(RunOk(sim));
  EXPECT_TRUE(a.replies.empty());  // its first reply would come at 202, after the crash
  EXPECT_EQ(b.replies.size(), 2u);
  EXPECT_TRUE(sim.client_crashed(0));
  EXPECT_EQ(*&sim.store(0).Find("a", sim::kSimEpochUs / 1000)->value, "1");  // the SET landed
}

TEST(Simulator, CrashedNodeRefusesAndRestartsEmpty) {
  Simulator sim(Config());
  sim.PlanFault(SimFault::kCrashNode, 300, 0, 0, 0, 0);
  sim.PlanFault(SimFault::kRestartNode, 700, 0, 0, 0, 0);
  auto steps = [](Simulator& s, Env& env, Seen& out) -> Task<void> {
    out.replies.push_back(co_await env.Send(0, Command::Of("SET", "k", "v")));
    out.replies.push_back(co_await env.Send(0, Command::Of("GET", "k")));  // arrives at 302: down
    co_await env.SleepMs(1);
    out.replies.push_back(co_await env.Send(0, Command::Of("GET", "k")));
  };
  Seen seen;
  sim.StartClient(0, steps(sim, sim.env(0), seen));
  ASSERT_TRUE(RunOk(sim));
  EXPECT_TRUE(seen.replies[0].is_ok());
  EXPECT_TRUE(seen.replies[1].is_error());
  EXPECT_TRUE(seen.replies[2].is_nil());  // no persistence
}

TEST(Simulator, NodeClockJumpExpiresKeys) {
  Simulator sim(Config());
  sim.PlanFault(SimFault::kNodeClockJump, 1'000, 0, 0, 0, 120'000'000);
  auto steps = [](Env& env, Seen& out) -> Task<void> {
    out.replies.push_back(co_await env.Send(0, Command::Of("SET", "k", "v", "PX", "60000")));
    co_await env.SleepMs(2);
    out.replies.push_back(co_await env.Send(0, Command::Of("GET", "k")));
  };
  Seen seen;
  sim.StartClient(0, steps(sim.env(0), seen));
  ASSERT_TRUE(RunOk(sim));
  EXPECT_TRUE(seen.replies[0].is_ok());
  EXPECT_TRUE(seen.replies[1].is_nil());
}

TEST(Simulator, PartitionTimesOutOnlyThatPair) {
  Simulator sim(Config(1, 2));
  sim.PlanFault(SimFault::kPartition, 0, 0, 1, 1'000'000, 0);
  Seen n0, n1;
  auto both = [&](Env& env) -> Task<void> {
    n0.replies.push_back(co_await env.Send(0, Command::Of("PING")));
    n1.replies.push_back(co_await env.Send(1, Command::Of("PING")));
  };
  sim.StartClient(0, both(sim.env(0)));
  ASSERT_TRUE(RunOk(sim));
  EXPECT_EQ(n0.replies[0], Reply::Status("PONG"));
  EXPECT_TRUE(n1.replies[0].is_timeout());
}

TEST(Simulator, FailoverLosesUnreplicatedWrites) {
  SimConfig cfg = Config();
  cfg.with_replica = true;
  cfg.repl_delay_us = 5'000;
  Simulator sim(cfg);
  // "old" reaches the replica (written at ~100 µs, replicated by ~5.1 ms); "new" is written at
  // ~10.3 ms and the master dies at 11 ms, before its replication.
  sim.PlanFault(SimFault::kFailover, 11'000, 0, 0, 0, 0);
  auto steps = [](Env& env, Seen& out) -> Task<void> {
    co_await env.Send(0, Command::Of("SET", "old", "1"));
    co_await env.SleepMs(10);
    co_await env.Send(0, Command::Of("SET", "new", "1"));
    co_await env.SleepMs(5);
    out.replies.push_back(co_await env.Send(0, Command::Of("GET", "old")));
    out.replies.push_back(co_await env.Send(0, Command::Of("GET", "new")));
  };
  Seen seen;
  sim.StartClient(0, steps(sim.env(0), seen));
  ASSERT_TRUE(RunOk(sim));
  EXPECT_EQ(seen.replies[0], Reply::Str("1"));
  EXPECT_TRUE(seen.replies[1].is_nil());
}

TEST(Simulator, TargetedDelayHitsOnlyTheNamedOccurrence) {
  Simulator sim(Config());
  sim.DelayMessage(0, "get", 2, 7'000);
  Seen seen;
  sim.StartClient(0, SendEach(sim, sim.env(0), {Command::Of("GET", "a"), Command::Of("GET", "a"), Command::Of("GET", "a")}, seen));
  ASSERT_TRUE(RunOk(sim));
  EXPECT_EQ(seen.at_us[0], 202);
  EXPECT_EQ(seen.at_us[1], 202 + 202 + 7'000);
  EXPECT_EQ(seen.at_us[2], 202 + 202 + 7'000 + 202);
}

TEST(Simulator, ClockDriftAndOffsetShapeWhatTheClientReads) {
  Simulator sim(Config());
  sim.SetClientClock(0, 5'000'000, 100'000);  // +5 s, runs 10% fast
  int64_t mono_before = 0, mono_after = 0, wall = 0, true_after = 0;
  auto steps = [&](Env& env) -> Task<void> {
    mono_before = env.MonotonicUs();
    wall = env.WallUs();
    co_await env.SleepMs(1100);  // 1100 ms of its own clock = 1000 ms of true time
    mono_after = env.MonotonicUs();
    true_after = sim.now_us();
  };
  sim.StartClient(0, steps(sim.env(0)));
  ASSERT_TRUE(RunOk(sim));
  EXPECT_EQ(mono_before, 0);
  EXPECT_EQ(wall, kSimEpochUs + 5'000'000);
  EXPECT_GE(mono_after, 1'100'000);
  EXPECT_NEAR(static_cast<double>(true_after), 1'000'000, 2);
}

TEST(Simulator, LostMessagesBecomeTimeouts) {
  SimConfig cfg = Config();
  cfg.net.loss = 0.5;
  Simulator sim(cfg);
  std::vector<Command> cmds;
  for (int i = 0; i < 200; ++i) cmds.push_back(Command::Of("PING"));
  Seen seen;
  sim.StartClient(0, SendEach(sim, sim.env(0), std::move(cmds), seen));
  ASSERT_TRUE(RunOk(sim));
  int timeouts = 0;
  for (auto& r : seen.replies) timeouts += r.is_timeout();
  // Each round trip survives with probability 0.25.
  EXPECT_GT(timeouts, 120);
  EXPECT_LT(timeouts, 180);
}

TEST(Simulator, SameSeedSameSchedule) {
  auto run = [](uint64_t seed) {
    SimConfig cfg = Config(4);
    cfg.seed = seed;
    cfg.net.dist = NetModel::Dist::kLongTail;
    Simulator sim(cfg);
    std::vector<Seen> seen(4);
    for (int c = 0; c < 4; ++c)
      sim.StartClient(c, SendEach(sim, sim.env(c), {Command::Of("INCR", "n"), Command::Of("INCR", "n")}, seen[c]));
    std::string err;
    sim.Run(&err);
    std::vector<int64_t> out;
    for (auto& s : seen)
      for (size_t i = 0; i < s.replies.size(); ++i) {
        out.push_back(s.replies[i].integer);
        out.push_back(s.at_us[i]);
      }
    return out;
  };
  EXPECT_EQ(run(11), run(11));
  EXPECT_NE(run(11), run(12));
}

TEST(Simulator, StallIsAnErrorNotAHang) {
  SimConfig cfg = Config();
  cfg.max_time_us = 10'000;
  Simulator sim(cfg);
  auto forever = [](Env& env) -> Task<void> {
    for (;;) co_await env.SleepMs(1);
  };
  sim.StartClient(0, forever(sim.env(0)));
  std::string err;
  EXPECT_FALSE(sim.Run(&err));
  EXPECT_NE(err.find("time limit"), std::string::npos);
}

}  // namespace
}  // namespace locklab::sim
