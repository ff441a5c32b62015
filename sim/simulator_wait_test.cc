// The simulator's waiting primitives: BLPOP parked at its node (served in FIFO order by a later
// push, timed out by the node's clock, not cut by the command timeout, holding its connection's
// later commands, ended by a node crash), the notify_one script, and pub/sub (Subscribe,
// PUBLISH, WaitMessage through the client's gate). Exact virtual times: constant 100 µs one-way
// delay, 2 µs service.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "sim/simulator.h"
#include "harness/testing/sim_test_util.h"

// Coroutine lambdas that capture are named locals here: an immediately invoked one would leave
// its frame pointing at a destroyed closure.

namespace locklab {
void PrintTo(const Reply& r, std::ostream* os);
}  // namespace locklab

namespace locklab::sim {
namespace {

Reply Pair(const std::string& key, const std::string& value) {
  return Reply::Array({Reply::Str(key), Reply::Str(value)});
}

Task<void> SendAt(Simulator& sim, Env& env, int64_t at_us, Command cmd, Seen& seen) {
  co_await env.SleepUs(at_us);
  seen.Add(sim, co_await env.Send(0, std::move(cmd)));
}

TEST(SimulatorBlpop, ParksAndIsServedFifoByALaterPushFromAnotherClient) {
  Simulator sim(Config(4, 1, /*timeout_us=*/1'000'000));
  Seen w0, w1, w2, pusher;
  // Three waiters block in the order 2, 0, 1; the push brings two elements.
  sim.StartClient(2, SendAt(sim, sim.env(2), 0, Command::Of("BLPOP", "q", "0.5"), w2));
  sim.StartClient(0, SendAt(sim, sim.env(0), 1'000, Command::Of("BLPOP", "q", "0.5"), w0));
  sim.StartClient(1, SendAt(sim, sim.env(1), 2'000, Command::Of("BLPOP", "other", "q", "0.5"), w1));
  size_t parked_before_push = 0;
  auto push = [&](Env& env) -> Task<void> {
    co_await env.SleepUs(10'000);
    parked_before_push = sim.parked(0);
    pusher.Add(sim, co_await env.Send(0, Command::Of("RPUSH", "q", "a", "b")));
  };
  sim.StartClient(3, push(sim.env(3)));
  ASSERT_TRUE(RunOk(sim));
  EXPECT_EQ(parked_before_push, 3u);
  ASSERT_EQ(pusher.replies.size(), 1u);
  EXPECT_EQ(pusher.replies[0], Reply::Int(2));  // the length right after the push, before serving
  ASSERT_EQ(w2.replies.size(), 1u);
  ASSERT_EQ(w0.replies.size(), 1u);
  ASSERT_EQ(w1.replies.size(), 1u);
  EXPECT_EQ(w2.replies[0], Pair("q", "a"));  // the longest blocked first
  EXPECT_EQ(w0.replies[0], Pair("q", "b"));
  EXPECT_EQ(w1.replies[0], Reply::Nil());    // nothing left for it: its own timeout
  // The push reaches the node at 10.1 ms; its reply leaves after 2 µs, then each served BLPOP's.
  EXPECT_EQ(pusher.at_us[0], 10'000 + 100 + 2 + 100);
  EXPECT_EQ(w2.at_us[0], 10'000 + 100 + 4 + 100);
  EXPECT_EQ(w0.at_us[0], 10'000 + 100 + 6 + 100);
  // Client 1 parked at 2.1 ms (node ms 2): nil once the node's ms is past 2 + 500.
  EXPECT_EQ(w1.at_us[0], 503'000 + 2 + 100);
  EXPECT_EQ(sim.parked(0), 0u);
  EXPECT_EQ(sim.store(0).Find("q", kSimEpochUs / 1000), nullptr);  // both elements went to waiters
}

TEST(SimulatorBlpop, TimeoutGivesNilAtTheRightVirtualTime) {
  SimConfig cfg = Config(1, 1, /*timeout_us=*/50'000);
  Simulator sim(cfg);
  Seen seen;
  sim.StartClient(0, SendAt(sim, sim.env(0), 0, Command::Of("BLPOP", "q", "0.25"), seen));
  ASSERT_TRUE(RunOk(sim));
  ASSERT_EQ(seen.replies.size(), 1u);
  EXPECT_EQ(seen.replies[0], Reply::Nil());
  // Parked at 100 µs (node ms 0); Redis times it out once its ms clock is past 0 + 250, i.e. at
  // 251 ms; the nil leaves after 2 µs of service and travels 100 µs.
  EXPECT_EQ(seen.at_us[0], 251'000 + 2 + 100);

  // By the node's clock: a node 400 µs ahead parks it at its ms 0 (true 100 µs = node 500 µs)
  // and times it out when it reads 251 ms, 400 µs earlier in true time.
  Simulator ahead(cfg);
  ahead.SetNodeClock(0, 400, 0);
  Seen seen2;
  ahead.StartClient(0, SendAt(ahead, ahead.env(0), 0, Command::Of("BLPOP", "q", "0.25"), seen2));
  ASSERT_TRUE(RunOk(ahead));
  EXPECT_EQ(seen2.at_us[0], 251'000 - 400 + 2 + 100);
}

TEST(SimulatorBlpop, NodeClockJumpTimesItOutEarly) {
  Simulator sim(Config(1, 1, 50'000));
  Plan(sim, Fault(FaultAction::Kind::kNodeClockJump, 100'000, 0, 0, 0, 10'000'000));  // +10 s at 100 ms
  Seen seen;
  sim.StartClient(0, SendAt(sim, sim.env(0), 0, Command::Of("BLPOP", "q", "5"), seen));
  ASSERT_TRUE(RunOk(sim));
  EXPECT_EQ(seen.replies[0], Reply::Nil());
  EXPECT_EQ(seen.at_us[0], 100'000 + 2 + 100);
}

TEST(SimulatorBlpop, ALongBlpopIsNotCutByTheCommandTimeout) {
  Simulator sim(Config(1, 1, /*timeout_us=*/1'000'000));
  Seen seen;
  auto steps = [&](Env& env) -> Task<void> {
    seen.Add(sim, co_await env.Send(0, Command::Of("BLPOP", "q", "2")));
    seen.Add(sim, co_await env.Send(0, Command::Of("BLPOP", "q", "0")));  // forever: refused
  };
  sim.StartClient(0, steps(sim.env(0)));
  ASSERT_TRUE(RunOk(sim));
  ASSERT_EQ(seen.replies.size(), 2u);
  EXPECT_EQ(seen.replies[0], Reply::Nil());  // not kTimeout at 1 s
  EXPECT_EQ(seen.at_us[0], 2'001'000 + 2 + 100);
  EXPECT_EQ(seen.replies[1], Reply::Error(kBlockForeverError));
}

TEST(SimulatorBlpop, ParkedPastItsCallersDeadlineTheCallerTimesOutAndTheElementIsStillTaken) {
  // The node stops for 3 s while the BLPOP is parked: its caller's deadline (1 s + 0.5 s) passes.
  Simulator sim(Config(2, 1, /*timeout_us=*/1'000'000));
  Plan(sim, Fault(FaultAction::Kind::kPauseNode, 10'000, 0, 0, 3'000'000, 0));
  Seen waiter, pusher;
  sim.StartClient(0, SendAt(sim, sim.env(0), 0, Command::Of("BLPOP", "q", "0.5"), waiter));
  sim.StartClient(1, SendAt(sim, sim.env(1), 5'000, Command::Of("LLEN", "q"), pusher));
  ASSERT_TRUE(RunOk(sim));
  ASSERT_EQ(waiter.replies.size(), 1u);
  EXPECT_TRUE(waiter.replies[0].is_timeout());
  EXPECT_EQ(waiter.at_us[0], 1'500'000);
}

TEST(SimulatorBlpop, LaterCommandsOfTheSameConnectionWaitBehindIt) {
  Simulator sim(Config(2, 1, /*timeout_us=*/1'000'000));
  Seen blpop, get, other;
  auto client0 = [&](Env& env) -> Task<void> {
    env.Spawn([](Simulator& s, Env& e, Seen& out) -> Task<void> {
      out.Add(s, co_await e.Send(0, Command::Of("BLPOP", "q", "0.3")));
    }(sim, env, blpop));
    co_await env.SleepUs(1'000);
    get.Add(sim, co_await env.Send(0, Command::Of("SET", "x", "1")));
    get.Add(sim, co_await env.Send(0, Command::Of("GET", "x")));
  };
  sim.StartClient(0, client0(sim.env(0)));
  // Another client's commands are not held.
  sim.StartClient(1, SendAt(sim, sim.env(1), 2'000, Command::Of("GET", "x"), other));
  ASSERT_TRUE(RunOk(sim));
  ASSERT_EQ(blpop.replies.size(), 1u);
  EXPECT_EQ(blpop.replies[0], Reply::Nil());
  EXPECT_EQ(blpop.at_us[0], 301'000 + 2 + 100);
  ASSERT_EQ(get.replies.size(), 2u);
  EXPECT_EQ(get.replies[0], Reply::Status("OK"));  // ran when the BLPOP was answered
  EXPECT_EQ(get.at_us[0], 301'000 + 4 + 100);
  EXPECT_EQ(get.replies[1], Reply::Str("1"));
  ASSERT_EQ(other.replies.size(), 1u);
  EXPECT_EQ(other.replies[0], Reply::Nil());  // at 2.1 ms, before the held SET ran
  EXPECT_EQ(other.at_us[0], 2'000 + 202);
}

TEST(SimulatorBlpop, ANodeCrashEndsItWithoutAReply) {
  Simulator sim(Config(1, 1, /*timeout_us=*/100'000));
  Plan(sim, Fault(FaultAction::Kind::kCrashNode, 50'000, 0, 0, 0, 0));
  Seen seen;
  sim.StartClient(0, SendAt(sim, sim.env(0), 0, Command::Of("BLPOP", "q", "1"), seen));
  ASSERT_TRUE(RunOk(sim));
  ASSERT_EQ(seen.replies.size(), 1u);
  EXPECT_TRUE(seen.replies[0].is_timeout());
  EXPECT_EQ(seen.at_us[0], 50'000);  // at the crash: its connection is gone
  EXPECT_EQ(sim.parked(0), 0u);
}

TEST(SimulatorBlpop, NotifyOneNeverLetsTheWakeListGrowBeyondOne) {
  // Four releasers notify often; two waiters take tokens now and then.
  Simulator sim(Config(6, 1, /*timeout_us=*/1'000'000));
  size_t longest = 0;
  int64_t notifies = 0, pushed = 0;
  sim.set_command_observer([&](int64_t, int, int, const Command& c, const Reply& r) {
    const Entry* e = sim.store(0).Find("w", kSimEpochUs / 1000);
    longest = std::max(longest, e == nullptr ? size_t{0} : e->list.size());
    if (c.script == Script::kNotifyOne) {
      ++notifies;
      EXPECT_TRUE(r.is_int(0) || r.is_int(1)) << ToString(r);  // 0: pushed and taken by a waiter at once
    }
    if (c.Name() == "BLPOP" && r.type == Reply::Type::kArray) ++pushed;
  });
  int64_t woken = 0;
  for (int c = 0; c < 4; ++c) {
    sim.StartClient(c, [](Env& env, int c) -> Task<void> {
      for (int i = 0; i < 50; ++i) {
        co_await env.SleepUs(env.Uniform(100, 3'000));
        co_await env.Send(0, Command::Run(Script::kNotifyOne, 1, "w"));
      }
      (void)c;
    }(sim.env(c), c));
  }
  for (int c = 4; c < 6; ++c) {
    sim.StartClient(c, [](Env& env, int64_t& woken) -> Task<void> {
      for (int i = 0; i < 30; ++i) {
        Reply r = co_await env.Send(0, Command::Of("BLPOP", "w", "0.01"));
        if (r.type == Reply::Type::kArray) ++woken;
        co_await env.SleepUs(env.Uniform(1'000, 5'000));
      }
    }(sim.env(c), woken));
  }
  ASSERT_TRUE(RunOk(sim));
  EXPECT_EQ(notifies, 200);
  EXPECT_EQ(longest, 1u);  // a token waited, but never two
  EXPECT_GT(woken, 5);
  EXPECT_EQ(pushed, woken);
}

// --- Pub/sub. ---

TEST(SimulatorPubSub, AWaitingSubscriberGetsAMessagePublishedAfterItSubscribed) {
  Simulator sim(Config(2, 1, /*timeout_us=*/50'000));
  bool subscribed = false, got = false;
  int64_t subscribed_at = -1, got_at = -1;
  Seen pub;
  auto sub = [&](Env& env) -> Task<void> {
    subscribed = co_await env.Subscribe(0, "ch");
    subscribed_at = sim.now_us();
    got = co_await env.WaitMessage(1'000'000);
    got_at = sim.now_us();
  };
  sim.StartClient(0, sub(sim.env(0)));
  sim.StartClient(1, SendAt(sim, sim.env(1), 10'000, Command::Of("PUBLISH", "ch", "free"), pub));
  ASSERT_TRUE(RunOk(sim));
  EXPECT_TRUE(subscribed);
  EXPECT_EQ(subscribed_at, 202);  // a round trip
  EXPECT_EQ(pub.replies[0], Reply::Int(1));
  EXPECT_TRUE(got);
  EXPECT_EQ(got_at, 10'000 + 100 + 2 + 100);  // one way after the PUBLISH ran
  std::vector<std::pair<std::string, int64_t>> names = sim.commands_by_name();
  EXPECT_EQ(names, (std::vector<std::pair<std::string, int64_t>>{{"PUBLISH", 1}, {"SUBSCRIBE", 1}}));
}

TEST(SimulatorPubSub, AMessageThatCameWhileNotWaitingIsThereAtTheNextWait) {
  Simulator sim(Config(2, 1, 50'000));
  std::vector<std::pair<bool, int64_t>> waits;
  auto sub = [&](Env& env) -> Task<void> {
    co_await env.Subscribe(0, "ch");
    co_await env.SleepMs(50);
    for (int i = 0; i < 3; ++i) {
      const bool got = co_await env.WaitMessage(10'000);
      waits.emplace_back(got, sim.now_us());
    }
  };
  Seen pub1, pub2;
  sim.StartClient(0, sub(sim.env(0)));
  auto pubs = [&](Env& env) -> Task<void> {
    co_await env.SleepMs(10);
    pub1.Add(sim, co_await env.Send(0, Command::Of("PUBLISH", "ch", "1")));
    pub2.Add(sim, co_await env.Send(0, Command::Of("PUBLISH", "ch", "2")));
  };
  sim.StartClient(1, pubs(sim.env(1)));
  ASSERT_TRUE(RunOk(sim));
  ASSERT_EQ(waits.size(), 3u);
  EXPECT_EQ(waits[0], std::make_pair(true, int64_t{50'202}));  // queued: at once (after a yield)
  EXPECT_EQ(waits[1], std::make_pair(true, int64_t{50'202}));
  EXPECT_EQ(waits[2], std::make_pair(false, int64_t{60'202}));  // nothing more: its timeout
}

TEST(SimulatorPubSub, WaitMessageTimesOutWhenNothingComes) {
  Simulator sim(Config(1, 1, 50'000));
  bool got = true;
  int64_t at = -1;
  auto client0_1 = [&](Env& env) -> Task<void> {
    co_await env.Subscribe(0, "ch");
    got = co_await env.WaitMessage(300'000);
    at = sim.now_us();
  };
  sim.StartClient(0, client0_1(sim.env(0)));
  ASSERT_TRUE(RunOk(sim));
  EXPECT_FALSE(got);
  EXPECT_EQ(at, 202 + 300'000);
}

TEST(SimulatorPubSub, APausedSubscriberGetsItAfterItsPause) {
  Simulator sim(Config(2, 1, 50'000));
  Plan(sim, Fault(FaultAction::Kind::kPauseClient, 5'000, 0, 0, 100'000, 0));
  bool got = false;
  int64_t at = -1;
  auto client0_2 = [&](Env& env) -> Task<void> {
    co_await env.Subscribe(0, "ch");
    got = co_await env.WaitMessage(1'000'000);
    at = sim.now_us();
  };
  sim.StartClient(0, client0_2(sim.env(0)));
  Seen pub;
  sim.StartClient(1, SendAt(sim, sim.env(1), 10'000, Command::Of("PUBLISH", "ch", "x"), pub));
  ASSERT_TRUE(RunOk(sim));
  EXPECT_TRUE(got);
  EXPECT_EQ(at, 105'000);  // delivered at 10.2 ms, held until the pause ends
}

TEST(SimulatorPubSub, APausedWaitersTimerIsHeldToo) {
  Simulator sim(Config(1, 1, 50'000));
  Plan(sim, Fault(FaultAction::Kind::kPauseClient, 5'000, 0, 0, 100'000, 0));
  bool got = true;
  int64_t at = -1;
  auto client0_3 = [&](Env& env) -> Task<void> {
    co_await env.Subscribe(0, "ch");
    got = co_await env.WaitMessage(20'000);
    at = sim.now_us();
  };
  sim.StartClient(0, client0_3(sim.env(0)));
  ASSERT_TRUE(RunOk(sim));
  EXPECT_FALSE(got);
  EXPECT_EQ(at, 105'000);
}

TEST(SimulatorPubSub, SubscribeTwiceIsOneSubscriptionAndCrashedNodesRefuse) {
  Simulator sim(Config(2, 2, 50'000));
  Plan(sim, Fault(FaultAction::Kind::kCrashNode, 0, 1, 0, 0, 0));
  std::vector<bool> results;
  Seen pub;
  auto client0_4 = [&](Env& env) -> Task<void> {
    results.push_back(co_await env.Subscribe(0, "ch"));
    results.push_back(co_await env.Subscribe(0, "ch"));
    results.push_back(co_await env.Subscribe(1, "ch"));  // node 1 is down
    results.push_back(co_await env.Subscribe(7, "ch"));  // no such node
    results.push_back(co_await env.WaitMessage(100'000));
    results.push_back(co_await env.WaitMessage(10'000));
  };
  sim.StartClient(0, client0_4(sim.env(0)));
  sim.StartClient(1, SendAt(sim, sim.env(1), 5'000, Command::Of("PUBLISH", "ch", "x"), pub));
  ASSERT_TRUE(RunOk(sim));
  EXPECT_EQ(results, (std::vector<bool>{true, true, false, false, true, false}));
  EXPECT_EQ(pub.replies[0], Reply::Int(1));  // one receiver, once
  int64_t subscribes = 0;
  for (const auto& [name, n] : sim.commands_by_name())
    if (name == "SUBSCRIBE") subscribes = n;
  EXPECT_EQ(subscribes, 2);  // the no-op is not sent; the refused one is
}

TEST(SimulatorPubSub, PartitionedOrCrashedAwaySubscribersMissMessages) {
  Simulator sim(Config(3, 1, 50'000));
  Plan(sim, Fault(FaultAction::Kind::kPartition, 5'000, 0, 0, 10'000, 0));  // client 0 cut off 5..15 ms
  std::vector<bool> a, b;
  Seen pub;
  auto client0_5 = [&](Env& env) -> Task<void> {
    a.push_back(co_await env.Subscribe(0, "ch"));
    a.push_back(co_await env.WaitMessage(40'000));  // the 10 ms message is dropped; the 20 ms one comes
    a.push_back(co_await env.WaitMessage(100'000));  // nothing else (the node crashed at 30 ms)
  };
  sim.StartClient(0, client0_5(sim.env(0)));
  auto client1_6 = [&](Env& env) -> Task<void> {
    b.push_back(co_await env.Subscribe(0, "ch"));
    b.push_back(co_await env.WaitMessage(40'000));
    b.push_back(co_await env.WaitMessage(40'000));
  };
  sim.StartClient(1, client1_6(sim.env(1)));
  Plan(sim, Fault(FaultAction::Kind::kCrashNode, 30'000, 0, 0, 0, 0));
  Plan(sim, Fault(FaultAction::Kind::kRestartNode, 35'000, 0, 0, 0, 0));
  auto client2_7 = [&](Env& env) -> Task<void> {
    co_await env.SleepMs(10);
    pub.Add(sim, co_await env.Send(0, Command::Of("PUBLISH", "ch", "1")));
    co_await env.SleepMs(10);
    pub.Add(sim, co_await env.Send(0, Command::Of("PUBLISH", "ch", "2")));
    co_await env.SleepMs(30);
    pub.Add(sim, co_await env.Send(0, Command::Of("PUBLISH", "ch", "3")));  // restarted: nobody
  };
  sim.StartClient(2, client2_7(sim.env(2)));
  ASSERT_TRUE(RunOk(sim));
  EXPECT_EQ(a, (std::vector<bool>{true, true, false}));
  EXPECT_EQ(b, (std::vector<bool>{true, true, true}));
  ASSERT_EQ(pub.replies.size(), 3u);
  EXPECT_EQ(pub.replies[0], Reply::Int(2));  // the node counts both; one is lost on the way
  EXPECT_EQ(pub.replies[2], Reply::Int(0));
}

TEST(SimulatorPubSub, TheQueueKeepsAtMostItsLimitAndCountsTheRest) {
  Simulator sim(Config(2, 1, 1'000'000));
  int64_t got = 0;
  auto client0_8 = [&](Env& env) -> Task<void> {
    co_await env.Subscribe(0, "ch");
    co_await env.SleepMs(1'000);  // the publisher's 1034 round trips take ~209 ms
    while (co_await env.WaitMessage(0)) ++got;
  };
  sim.StartClient(0, client0_8(sim.env(0)));
  auto client1_9 = [&](Env& env) -> Task<void> {
    co_await env.SleepMs(1);
    for (int64_t i = 0; i < Env::kMaxQueuedMessages + 10; ++i) co_await env.Send(0, Command::Of("PUBLISH", "ch", "m"));
  };
  sim.StartClient(1, client1_9(sim.env(1)));
  ASSERT_TRUE(RunOk(sim));
  EXPECT_EQ(got, Env::kMaxQueuedMessages);
  EXPECT_EQ(sim.messages_dropped(0), 10);
}

// Same seed, same history: BLPOP waiters, notify_one, pub/sub, long-tailed delays and loss.
std::vector<std::string> Story(uint64_t seed) {
  SimConfig cfg = Config(5, 1, 200'000);
  cfg.seed = seed;
  cfg.net.dist = NetModel::Dist::kLongTail;
  cfg.net.mean_us = 2'000;
  cfg.net.loss = 0.02;
  Simulator sim(cfg);
  std::vector<std::string> out;
  sim.set_command_observer([&](int64_t t, int client, int, const Command& c, const Reply& r) {
    out.push_back(std::to_string(t) + " " + std::to_string(client) + " " + c.ToString() + " -> " + ToString(r));
  });
  for (int c = 0; c < 5; ++c) {
    sim.StartClient(c, [](Simulator& s, Env& env, int c, std::vector<std::string>& out) -> Task<void> {
      co_await env.Subscribe(0, "ch");
      for (int i = 0; i < 20; ++i) {
        if (env.Uniform(0, 1) == 0) {
          Reply r = co_await env.Send(0, Command::Of("BLPOP", "w", "0.05"));
          out.push_back(std::to_string(s.now_us()) + " " + std::to_string(c) + " got " + ToString(r));
          co_await env.Send(0, Command::Of("PUBLISH", "ch", "x"));
        } else {
          co_await env.Send(0, Command::Run(Script::kNotifyOne, 1, "w"));
          const bool m = co_await env.WaitMessage(env.Uniform(1'000, 30'000));
          out.push_back(std::to_string(s.now_us()) + " " + std::to_string(c) + (m ? " message" : " no message"));
        }
      }
    }(sim, sim.env(c), c, out));
  }
  const Status run = sim.Run();
  EXPECT_TRUE(run.ok()) << run.message();
  return out;
}

TEST(SimulatorWaiting, SameSeedSameHistory) {
  const std::vector<std::string> a = Story(21);
  EXPECT_GT(a.size(), 200u);
  EXPECT_EQ(a, Story(21));
  EXPECT_NE(a, Story(22));
}

}  // namespace
}  // namespace locklab::sim
