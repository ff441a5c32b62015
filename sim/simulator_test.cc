// The simulator's process, network and node semantics, one fault at a time.
#include "sim/simulator.h"
#include "harness/testing/sim_test_util.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

namespace locklab::sim {
namespace {

// Sends the commands one after the other and records what came back, and when.
Task<void> SendEach(Simulator& sim, Env& env, std::vector<Command> cmds, Seen& seen, int node = 0) {
  for (auto& c : cmds) {
    seen.Add(sim, co_await env.Send(node, std::move(c)));
  }
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

// Commands are counted by name in upper case (however a client spells them) and scripts by
// their own names, each name once, sorted.
TEST(Simulator, CommandsAreCountedByNameWhateverTheirCase) {
  Simulator sim(Config());
  Seen seen;
  sim.StartClient(0, SendEach(sim, sim.env(0),
                              {Command::Of("set", "k", "v"), Command::Of("GET", "k"), Command::Of("SET", "k", "w"),
                               Command::Run(Script::kCompareAndDelete, 1, "k", "w"), Command::Of("Set", "k", "x")},
                              seen));
  ASSERT_TRUE(RunOk(sim));
  EXPECT_EQ(sim.commands_by_name(),
            (std::vector<std::pair<std::string, int64_t>>{{"GET", 1}, {"SET", 3}, {"compare_and_delete", 1}}));
  EXPECT_EQ(sim.commands_total(), 5);
}

TEST(Simulator, PausedNodeMeansTimeoutButTheCommandStillLands) {
  Simulator sim(Config());
  Plan(sim, Fault(FaultAction::Kind::kPauseNode, 0, 0, 0, 200'000, 0));
  Seen seen;
  sim.StartClient(0, SendEach(sim, sim.env(0), {Command::Of("SET", "k", "v")}, seen));
  ASSERT_TRUE(RunOk(sim));
  ASSERT_EQ(seen.replies.size(), 1u);
  EXPECT_TRUE(seen.replies[0].is_timeout());
  EXPECT_EQ(seen.at_us[0], 50'000);  // exactly the command timeout
  // Run() ends when the client is done; the SET has not run yet. Keep the node busy later.
  Seen later;
  Simulator sim2(Config());
  Plan(sim2, Fault(FaultAction::Kind::kPauseNode, 0, 0, 0, 60'000, 0));
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
  Plan(sim, Fault(FaultAction::Kind::kPauseClient, 50, 0, 0, 10'000, 0));
  Seen seen;
  sim.StartClient(0, SendEach(sim, sim.env(0), {Command::Of("PING")}, seen));
  ASSERT_TRUE(RunOk(sim));
  EXPECT_EQ(seen.replies[0], Reply::Status("PONG"));
  EXPECT_EQ(seen.at_us[0], 10'050);
}

// Each client's pauses planned in a batch (PlanPauses, one stream per client) and a fault planned
// on its own come in time order across all of them, every pause of a stream, including those
// that share a time with another client's.
TEST(Simulator, PlannedPausesOfSeveralClientsComeInTimeOrder) {
  Simulator sim(Config(2));
  const FaultAction pause = Fault(FaultAction::Kind::kPauseClient, 0, 0, 0, 1'000, 0);
  FaultAction other = pause;
  other.target = 1;
  ASSERT_TRUE(sim.PlanPauses(pause, {2'000, 10'000, 30'000}).ok());
  ASSERT_TRUE(sim.PlanPauses(other, {5'000, 10'000, 20'000, 40'000}).ok());
  Plan(sim, Fault(FaultAction::Kind::kClientClockJump, 15'000, 0, 0, 0, 0));
  std::vector<std::tuple<int64_t, int, Ev>> seen;
  sim.set_fault_observer([&](int64_t t, const FaultRecord& r) {
    if (r.type != Ev::kPauseEnd) seen.emplace_back(t, r.client, r.type);
  });
  auto idle = [](Env& env) -> Task<void> { co_await env.SleepMs(50); };
  sim.StartClient(0, idle(sim.env(0)));
  sim.StartClient(1, idle(sim.env(1)));
  ASSERT_TRUE(RunOk(sim));
  const std::vector<std::tuple<int64_t, int, Ev>> want = {
      {2'000, 0, Ev::kPauseStart},  {5'000, 1, Ev::kPauseStart},  {10'000, 0, Ev::kPauseStart},
      {10'000, 1, Ev::kPauseStart}, {15'000, 0, Ev::kFault},       {20'000, 1, Ev::kPauseStart},
      {30'000, 0, Ev::kPauseStart}, {40'000, 1, Ev::kPauseStart}};
  EXPECT_EQ(seen, want);
}

// Pauses drawn one at a time (PauseDraws) give the events the same pauses planned as a list do,
// with a fault planned on its own between them.
TEST(Simulator, PausesDrawnOneAtATimeComeAsTheirList) {
  auto run = [](bool drawn) {
    Simulator sim(Config(2));
    Rng rng(5);
    for (int c = 0; c < 2; ++c) {
      FaultAction pause = Fault(FaultAction::Kind::kPauseClient, 0, c, 0, 3'000, 0);
      const Status s = drawn ? sim.PlanPauses(pause, DrawPauses(&rng, 20'000, 3'000, 1'000'000, 100))
                             : sim.PlanPauses(pause, PauseTimes(&rng, 20'000, 3'000, 1'000'000, 100));
      EXPECT_TRUE(s.ok());
    }
    Plan(sim, Fault(FaultAction::Kind::kClientClockJump, 60'000, 0, 0, 0, 0));
    std::vector<std::tuple<int64_t, int, Ev>> seen;
    sim.set_fault_observer([&](int64_t t, const FaultRecord& r) { seen.emplace_back(t, r.client, r.type); });
    auto idle = [](Env& env) -> Task<void> { co_await env.SleepMs(200); };
    sim.StartClient(0, idle(sim.env(0)));
    sim.StartClient(1, idle(sim.env(1)));
    EXPECT_TRUE(RunOk(sim));
    return seen;
  };
  const auto listed = run(false);
  EXPECT_GT(listed.size(), 10u);
  EXPECT_EQ(run(true), listed);
}

TEST(Simulator, PauseFreezesBackgroundTasksToo) {
  Simulator sim(Config());
  Plan(sim, Fault(FaultAction::Kind::kPauseClient, 1'500, 0, 0, 10'000, 0));
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
  Plan(sim, Fault(FaultAction::Kind::kCrashClient, 150, 0, 0, 0, 0));
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
  Plan(sim, Fault(FaultAction::Kind::kCrashNode, 300, 0, 0, 0, 0));
  Plan(sim, Fault(FaultAction::Kind::kRestartNode, 700, 0, 0, 0, 0));
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
  Plan(sim, Fault(FaultAction::Kind::kNodeClockJump, 1'000, 0, 0, 0, 120'000'000));
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
  Plan(sim, Fault(FaultAction::Kind::kPartition, 0, 0, 1, 1'000'000, 0));
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
  Plan(sim, Fault(FaultAction::Kind::kFailover, 11'000, 0, 0, 0, 0));
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
  Plan(sim, Delay(0, "get", 2, 7'000));
  Seen seen;
  sim.StartClient(0, SendEach(sim, sim.env(0), {Command::Of("GET", "a"), Command::Of("GET", "a"), Command::Of("GET", "a")}, seen));
  ASSERT_TRUE(RunOk(sim));
  EXPECT_EQ(seen.at_us[0], 202);
  EXPECT_EQ(seen.at_us[1], 202 + 202 + 7'000);
  EXPECT_EQ(seen.at_us[2], 202 + 202 + 7'000 + 202);
}

// What the node executed (true time, client, command name) and which client faults were applied.
struct Trace {
  std::vector<std::tuple<int64_t, int, std::string>> executed;
  std::vector<std::tuple<int64_t, int, Ev, std::string>> faults;
  void Attach(Simulator& sim) {
    sim.set_command_observer([this](int64_t t, int client, int, const Command& c, const Reply&) {
      executed.emplace_back(t, client, c.Name());
    });
    sim.set_fault_observer(
        [this](int64_t t, const FaultRecord& r) { faults.emplace_back(t, r.client, r.type, r.detail); });
  }
};

TEST(SimulatorOnSend, PauseOnGetHoldsItsReplyAndTheNextCommand) {
  Simulator sim(Config());
  Trace trace;
  trace.Attach(sim);
  Plan(sim, OnSend(FaultAction::Kind::kPauseClient, 0, "get", 1, 500'000));
  Seen seen;
  sim.StartClient(0, SendEach(sim, sim.env(0), {Command::Of("GET", "k"), Command::Of("SET", "k", "v")}, seen));
  ASSERT_TRUE(RunOk(sim));
  // The GET left at 0 and ran at the node at 100, during the pause.
  ASSERT_EQ(trace.executed.size(), 2u);
  EXPECT_EQ(trace.executed[0], std::make_tuple(int64_t{100}, 0, std::string("GET")));
  // Its reply (back at 202, well inside the command timeout) is seen when the pause ends.
  ASSERT_EQ(seen.replies.size(), 2u);
  EXPECT_TRUE(seen.replies[0].is_nil()) << ToString(seen.replies[0]);
  EXPECT_EQ(seen.at_us[0], 500'000);
  // Only then is the SET sent.
  EXPECT_EQ(trace.executed[1], std::make_tuple(int64_t{500'100}, 0, std::string("SET")));
  EXPECT_TRUE(seen.replies[1].is_ok());
  EXPECT_EQ(seen.at_us[1], 500'202);
  ASSERT_EQ(trace.faults.size(), 2u);
  EXPECT_EQ(trace.faults[0], std::make_tuple(int64_t{0}, 0, Ev::kPauseStart,
                                             std::string("pause 500 ms on its 1st GET")));
  EXPECT_EQ(trace.faults[1], std::make_tuple(int64_t{500'000}, 0, Ev::kPauseEnd, std::string("resume")));
}

TEST(SimulatorOnSend, CrashOnSetnxLetsItLandButNothingAfter) {
  Simulator sim(Config(2));
  Trace trace;
  trace.Attach(sim);
  Plan(sim, OnSend(FaultAction::Kind::kCrashClient, 0, "SETNX", 1, 0));
  Seen a;
  sim.StartClient(0, SendEach(sim, sim.env(0), {Command::Of("SETNX", "k", "v"), Command::Of("EXPIRE", "k", "10")}, a));
  // Client 1 keeps the run going past the SETNX's arrival.
  sim.StartClient(1, [](Env& env) -> Task<void> { co_await env.SleepMs(5); }(sim.env(1)));
  ASSERT_TRUE(RunOk(sim));
  EXPECT_TRUE(sim.client_crashed(0));
  EXPECT_TRUE(a.replies.empty());
  ASSERT_NE(sim.store(0).Find("k", sim::kSimEpochUs / 1000), nullptr);  // the SETNX landed
  ASSERT_EQ(trace.executed.size(), 1u);                                  // the EXPIRE was never sent
  EXPECT_EQ(std::get<2>(trace.executed[0]), "SETNX");
  EXPECT_EQ(sim.commands_by_client()[0], 1);
  ASSERT_EQ(trace.faults.size(), 1u);
  EXPECT_EQ(trace.faults[0], std::make_tuple(int64_t{0}, 0, Ev::kCrash, std::string("crash on its 1st SETNX")));
}

TEST(SimulatorOnSend, StarMatchesTheNthCommandOfAnyNameOfThatClientOnly) {
  Simulator sim(Config(2));
  Trace trace;
  trace.Attach(sim);
  Plan(sim, OnSend(FaultAction::Kind::kPauseClient, 0, "*", 2, 10'000));
  // Client 0 sends the only PING, but this trigger is client 1's: it never fires.
  Plan(sim, OnSend(FaultAction::Kind::kPauseClient, 1, "PING", 1, 10'000));
  Seen a, b;
  sim.StartClient(0, SendEach(sim, sim.env(0), {Command::Of("PING"), Command::Of("GET", "a"), Command::Of("SET", "a", "1")}, a));
  sim.StartClient(1, SendEach(sim, sim.env(1), {Command::Of("GET", "b"), Command::Of("GET", "b"), Command::Of("GET", "b")}, b));
  ASSERT_TRUE(RunOk(sim));
  ASSERT_EQ(trace.faults.size(), 2u);  // one pause and its end, both client 0's
  EXPECT_EQ(std::get<1>(trace.faults[0]), 0);
  EXPECT_EQ(std::get<2>(trace.faults[0]), Ev::kPauseStart);
  // It began when the GET (client 0's 2nd command) was sent, i.e. when the PING's reply came.
  EXPECT_EQ(std::get<0>(trace.faults[0]), a.at_us[0]);
  ASSERT_EQ(a.replies.size(), 3u);
  EXPECT_EQ(a.at_us[1], a.at_us[0] + 10'000);  // the GET's reply waited for the pause end
  EXPECT_LT(a.at_us[2] - a.at_us[1], 1'000);   // the 3rd command: no second pause
  ASSERT_EQ(b.replies.size(), 3u);
  EXPECT_LT(b.at_us[2], 1'000);  // client 1 never paused
}

TEST(Simulator, TargetedDelayWithStarCountsEveryCommand) {
  Simulator sim(Config());
  Plan(sim, Delay(0, "*", 2, 7'000));
  Seen seen;
  sim.StartClient(0, SendEach(sim, sim.env(0), {Command::Of("SET", "a", "1"), Command::Of("DEL", "a"), Command::Of("GET", "a")}, seen));
  ASSERT_TRUE(RunOk(sim));
  EXPECT_EQ(seen.at_us[0], 202);
  EXPECT_EQ(seen.at_us[1], 202 + 202 + 7'000);  // the DEL: the 2nd command of any name
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
    (void)sim.Run();
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
  const Status run = sim.Run();
  EXPECT_FALSE(run.ok());
  EXPECT_NE(run.message().find("time limit"), std::string::npos);
}

}  // namespace
}  // namespace locklab::sim
