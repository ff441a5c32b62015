// The waiting primitives a retry policy uses instead of polling, the same cases on both
// runtimes (the simulator through SimRuntime, and real redis-server processes that the
// RedisRuntime starts and stops): BLPOP parked at the node and served FIFO by a later push,
// its timeout, its deadline beyond the command timeout, the connection it holds, the
// notify_one script, and pub/sub (Subscribe, PUBLISH, WaitMessage; pauses hold both messages
// and timers).
//
// Times are what the client's monotonic clock reads (true time: no drift here). The simulator
// is exact; real Redis adds loopback and scheduling noise (ctest runs tests in parallel), and
// redis-server 7.0 notices a BLPOP's timeout in its cron (hz 10: up to ~100 ms late), hence the
// upper bounds.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sim/history.h"
#include "harness/testing/redis_test_util.h"
#include "harness/testing/runtime_test_util.h"
#include "harness/real/redis_runtime.h"
#include "harness/run/sim_runtime.h"
#include "sim/store.h"

namespace locklab {
namespace {

BackendConfig Cfg(int clients, int64_t timeout_ms) {
  BackendConfig c;
  c.clients = clients;
  c.nodes = 1;
  c.command_timeout_us = timeout_ms * 1000;
  return c;
}

Reply Pair(const std::string& key, const std::string& value) {
  return Reply::Array({Reply::Str(key), Reply::Str(value)});
}

// Capture-less coroutines (their arguments live in the frame).
Task<void> SendAt(Env& env, int64_t at_ms, Command cmd, Seen* seen) {
  co_await env.SleepMs(at_ms);
  seen->Add(env, co_await env.Send(0, std::move(cmd)));
}

class Waiting : public ::testing::TestWithParam<bool> {  // true: real redis-server
 protected:
  bool real() const { return GetParam(); }
  std::unique_ptr<Runtime> Make(const BackendConfig& cfg) {
    if (!real()) return MakeSimRuntime(cfg);
    return MakeRedis(cfg);
  }
  // Real time may run late (never early); the simulator is exact up to its 50 µs floor each way.
  void ExpectAbout(int64_t got_ms, int64_t want_ms, int64_t real_slack_ms, const char* what) {
    EXPECT_GE(got_ms, want_ms) << what;
    EXPECT_LE(got_ms, want_ms + (real() ? real_slack_ms : 1)) << what;
  }
};

TEST_P(Waiting, BlpopParksAndIsServedFifoByALaterRpushFromAnotherClient) {
  auto rt = Make(Cfg(4, 1000));
  ASSERT_TRUE(rt);
  History h;
  rt->set_history(&h);
  Seen w0, w1, w2, pusher;
  // They block in the order 2, 0, 1; the push brings two elements at 300 ms.
  rt->StartClient(2, SendAt(rt->env(2), 0, Command::Of("BLPOP", "q", "2"), &w2));
  rt->StartClient(0, SendAt(rt->env(0), 50, Command::Of("BLPOP", "q", "2"), &w0));
  rt->StartClient(1, SendAt(rt->env(1), 100, Command::Of("BLPOP", "other", "q", "0.6"), &w1));
  rt->StartClient(3, SendAt(rt->env(3), 300, Command::Of("RPUSH", "q", "a", "b"), &pusher));
  MustRun(*rt);
  ASSERT_EQ(w2.replies.size(), 1u);
  ASSERT_EQ(w0.replies.size(), 1u);
  ASSERT_EQ(w1.replies.size(), 1u);
  EXPECT_EQ(pusher.replies[0], Reply::Int(2));
  EXPECT_EQ(w2.replies[0], Pair("q", "a")) << ToString(w2.replies[0]);  // the longest blocked first
  EXPECT_EQ(w0.replies[0], Pair("q", "b")) << ToString(w0.replies[0]);
  EXPECT_EQ(w1.replies[0], Reply::Nil()) << ToString(w1.replies[0]);
  ExpectAbout(w2.at_ms[0], 300, 100, "served at the push");
  ExpectAbout(w0.at_ms[0], 300, 100, "served at the push");
  ExpectAbout(w1.at_ms[0], 700, 200, "the third one's own timeout");
  // The history has each BLPOP once, with the reply its client saw.
  int blpops = 0;
  for (const auto& e : h.events())
    if (e.type == Ev::kCommand && e.detail.rfind("BLPOP", 0) == 0) ++blpops;
  EXPECT_EQ(blpops, 3);
}

TEST_P(Waiting, BlpopTimeoutGivesNilAtItsTimeout) {
  auto rt = Make(Cfg(1, 1000));
  ASSERT_TRUE(rt);
  Seen seen;
  rt->StartClient(0, SendAt(rt->env(0), 0, Command::Of("BLPOP", "q", "0.3"), &seen));
  MustRun(*rt);
  ASSERT_EQ(seen.replies.size(), 1u);
  EXPECT_EQ(seen.replies[0], Reply::Nil()) << ToString(seen.replies[0]);
  ExpectAbout(seen.at_ms[0], 300, 200, "nil at the timeout");
}

TEST_P(Waiting, ALongBlpopIsNotCutByTheCommandTimeoutAndZeroIsRefused) {
  auto rt = Make(Cfg(1, 1000));
  ASSERT_TRUE(rt);
  Seen seen;
  rt->StartClient(0, [](Env& env, Seen* seen) -> Task<void> {
    seen->Add(env, co_await env.Send(0, Command::Of("BLPOP", "q", "2")));
    seen->Add(env, co_await env.Send(0, Command::Of("BLPOP", "q", "0")));
    seen->Add(env, co_await env.Send(0, Command::Of("PING")));  // the connection was not blocked
  }(rt->env(0), &seen));
  MustRun(*rt);
  ASSERT_EQ(seen.replies.size(), 3u);
  EXPECT_EQ(seen.replies[0], Reply::Nil()) << ToString(seen.replies[0]);  // not kTimeout at 1 s
  ExpectAbout(seen.at_ms[0], 2000, 250, "nil after its 2 s");
  EXPECT_EQ(seen.replies[1], Reply::Error(sim::kBlockForeverError)) << ToString(seen.replies[1]);
  EXPECT_EQ(seen.replies[2], Reply::Status("PONG"));
  ExpectAbout(seen.at_ms[2], seen.at_ms[0], 100, "no wait for the refused one");
  EXPECT_EQ(rt->Commands().by_name["BLPOP"], 2);
}

TEST_P(Waiting, ACommandBehindAParkedBlpopOnTheSameConnectionWaitsForIt) {
  auto rt = Make(Cfg(2, 2000));
  ASSERT_TRUE(rt);
  Seen blpop, main, other;
  rt->StartClient(0, [](Env& env, Seen* blpop, Seen* main) -> Task<void> {
    env.Spawn([](Env& env, Seen* out) -> Task<void> {
      out->Add(env, co_await env.Send(0, Command::Of("BLPOP", "q", "0.4")));
    }(env, blpop));
    co_await env.SleepMs(50);
    main->Add(env, co_await env.Send(0, Command::Of("SET", "x", "1")));
  }(rt->env(0), &blpop, &main));
  rt->StartClient(1, SendAt(rt->env(1), 100, Command::Of("GET", "x"), &other));
  MustRun(*rt);
  ASSERT_EQ(blpop.replies.size(), 1u);
  ASSERT_EQ(main.replies.size(), 1u);
  ASSERT_EQ(other.replies.size(), 1u);
  EXPECT_EQ(blpop.replies[0], Reply::Nil());
  EXPECT_TRUE(main.replies[0].is_ok()) << ToString(main.replies[0]);
  ExpectAbout(main.at_ms[0], 400, 200, "the SET ran once the BLPOP was answered");
  EXPECT_GE(main.at_ms[0], blpop.at_ms[0]);
  EXPECT_EQ(other.replies[0], Reply::Nil());  // another client's GET at 100 ms: not held, no x yet
  ExpectAbout(other.at_ms[0], 100, 100, "another connection is not held");
}

TEST_P(Waiting, NotifyOneLeavesAtMostOneTokenAndWakesAParkedWaiter) {
  auto rt = Make(Cfg(2, 1000));
  ASSERT_TRUE(rt);
  Seen notifier, waiter;
  rt->StartClient(0, [](Env& env, Seen* seen) -> Task<void> {
    co_await env.SleepMs(200);  // the waiter is parked by then
    seen->Add(env, co_await env.Send(0, Command::Run(Script::kNotifyOne, 1, "w")));
    seen->Add(env, co_await env.Send(0, Command::Of("LLEN", "w")));
    for (int i = 0; i < 4; ++i) seen->Add(env, co_await env.Send(0, Command::Run(Script::kNotifyOne, 1, "w")));
    seen->Add(env, co_await env.Send(0, Command::Of("LLEN", "w")));
  }(rt->env(0), &notifier));
  rt->StartClient(1, SendAt(rt->env(1), 0, Command::Of("BLPOP", "w", "1"), &waiter));
  MustRun(*rt);
  ASSERT_EQ(notifier.replies.size(), 7u);
  ASSERT_EQ(waiter.replies.size(), 1u);
  EXPECT_EQ(waiter.replies[0], Pair("w", "1")) << ToString(waiter.replies[0]);
  ExpectAbout(waiter.at_ms[0], 200, 100, "woken by the first notify_one");
  EXPECT_EQ(notifier.replies[0], Reply::Int(1));  // the script's RPUSH; the waiter is served after it
  EXPECT_EQ(notifier.replies[1], Reply::Int(0));  // ... and took the token
  for (int i = 2; i < 6; ++i) EXPECT_EQ(notifier.replies[static_cast<size_t>(i)], Reply::Int(1)) << i;
  EXPECT_EQ(notifier.replies[6], Reply::Int(1));  // one token waits, however often it ran
}

TEST_P(Waiting, AWaitingSubscriberGetsAMessagePublishedAfterItSubscribed) {
  auto rt = Make(Cfg(2, 1000));
  ASSERT_TRUE(rt);
  History h;
  rt->set_history(&h);
  Seen sub, pub;
  rt->StartClient(0, [](Env& env, Seen* seen) -> Task<void> {
    seen->Flag(env, co_await env.Subscribe(0, "ch"));
    seen->Flag(env, co_await env.Subscribe(0, "ch"));  // again: a no-op
    seen->Flag(env, co_await env.WaitMessage(2'000'000));
  }(rt->env(0), &sub));
  rt->StartClient(1, SendAt(rt->env(1), 200, Command::Of("PUBLISH", "ch", "free"), &pub));
  MustRun(*rt);
  ASSERT_EQ(sub.flags.size(), 3u);
  EXPECT_TRUE(sub.flags[0]);
  EXPECT_TRUE(sub.flags[1]);
  EXPECT_LT(sub.flag_at_ms[0], 100);
  EXPECT_TRUE(sub.flags[2]);
  ExpectAbout(sub.flag_at_ms[2], 200, 100, "woken by the message");
  ASSERT_EQ(pub.replies.size(), 1u);
  EXPECT_EQ(pub.replies[0], Reply::Int(1));
  CommandStats cs = rt->Commands();
  EXPECT_EQ(cs.by_name["SUBSCRIBE"], 1);
  EXPECT_EQ(cs.by_name["PUBLISH"], 1);
  EXPECT_EQ(cs.total, 2);
  EXPECT_EQ(cs.by_client[0], 1);
  int subscribes = 0;
  for (const auto& e : h.events())
    if (e.type == Ev::kCommand && e.detail.rfind("SUBSCRIBE ch -> ", 0) == 0) ++subscribes;
  EXPECT_EQ(subscribes, 1);
  if (real()) {
    Result<std::map<std::string, int64_t>> stats = static_cast<RedisRuntime&>(*rt).ServerCommandStats();
    ASSERT_TRUE(stats.ok()) << stats.status().message();
    std::map<std::string, int64_t> server = *stats;
    EXPECT_EQ(server["SUBSCRIBE"], 1);
    EXPECT_EQ(server["PUBLISH"], 1);
  }
}

TEST_P(Waiting, AMessageThatCameWhileNotWaitingIsThereAtTheNextWait) {
  auto rt = Make(Cfg(2, 1000));
  ASSERT_TRUE(rt);
  Seen sub, pub;
  rt->StartClient(0, [](Env& env, Seen* seen) -> Task<void> {
    seen->Flag(env, co_await env.Subscribe(0, "ch"));
    co_await env.SleepMs(300);
    seen->Flag(env, co_await env.WaitMessage(1'000'000));
    seen->Flag(env, co_await env.WaitMessage(100'000));
  }(rt->env(0), &sub));
  rt->StartClient(1, SendAt(rt->env(1), 100, Command::Of("PUBLISH", "ch", "x"), &pub));
  MustRun(*rt);
  ASSERT_EQ(sub.flags.size(), 3u);
  EXPECT_TRUE(sub.flags[0]);
  EXPECT_TRUE(sub.flags[1]);  // queued at 100 ms, taken at 300 ms
  ExpectAbout(sub.flag_at_ms[1], 300, 60, "at once");
  EXPECT_FALSE(sub.flags[2]);  // consumed: nothing more
  ExpectAbout(sub.flag_at_ms[2], sub.flag_at_ms[1] + 100, 60, "its timeout");
  EXPECT_EQ(pub.replies[0], Reply::Int(1));
}

TEST_P(Waiting, WaitMessageTimesOutWhenNothingComes) {
  auto rt = Make(Cfg(1, 1000));
  ASSERT_TRUE(rt);
  Seen sub;
  rt->StartClient(0, [](Env& env, Seen* seen) -> Task<void> {
    seen->Flag(env, co_await env.Subscribe(0, "ch"));
    const int64_t start = env.MonotonicMs();
    seen->Flag(env, co_await env.WaitMessage(250'000));
    seen->at_ms.push_back(env.MonotonicMs() - start);
  }(rt->env(0), &sub));
  MustRun(*rt);
  ASSERT_EQ(sub.flags.size(), 2u);
  EXPECT_TRUE(sub.flags[0]);
  EXPECT_FALSE(sub.flags[1]);
  ExpectAbout(sub.at_ms[0], 250, 60, "its timeout");
}

TEST_P(Waiting, APausedSubscriberGetsTheMessageAfterItsPause) {
  auto rt = Make(Cfg(2, 1000));
  ASSERT_TRUE(rt);
  History h;
  rt->set_history(&h);
  FaultAction pause;
  pause.kind = FaultAction::Kind::kPauseClient;
  pause.at_us = 100'000;
  pause.target = 0;
  pause.duration_us = 300'000;
  std::string error;
  ASSERT_TRUE(IsOk(rt->PlanFault(pause)));
  Seen sub, pub;
  rt->StartClient(0, [](Env& env, Seen* seen) -> Task<void> {
    seen->Flag(env, co_await env.Subscribe(0, "ch"));
    seen->Flag(env, co_await env.WaitMessage(2'000'000));
  }(rt->env(0), &sub));
  rt->StartClient(1, SendAt(rt->env(1), 200, Command::Of("PUBLISH", "ch", "x"), &pub));
  MustRun(*rt);
  ASSERT_EQ(sub.flags.size(), 2u);
  EXPECT_TRUE(sub.flags[0]);
  EXPECT_TRUE(sub.flags[1]);
  ExpectAbout(sub.flag_at_ms[1], 400, 100, "after the pause ends");
  EXPECT_EQ(pub.replies[0], Reply::Int(1));
  ExpectAbout(pub.at_ms[0], 200, 100, "the publisher is not held");
}

TEST_P(Waiting, ANodeCrashEndsAParkedBlpopAndTheSubscriptions) {
  auto rt = Make(Cfg(2, 500));
  ASSERT_TRUE(rt);
  std::string error;
  FaultAction crash;
  crash.kind = FaultAction::Kind::kCrashNode;
  crash.at_us = 200'000;
  crash.target = 0;
  FaultAction restart = crash;
  restart.kind = FaultAction::Kind::kRestartNode;
  restart.at_us = 300'000;
  ASSERT_TRUE(IsOk(rt->PlanFault(crash)));
  ASSERT_TRUE(IsOk(rt->PlanFault(restart)));
  Seen blpop, sub, pub;
  rt->StartClient(0, [](Env& env, Seen* blpop, Seen* sub) -> Task<void> {
    sub->Flag(env, co_await env.Subscribe(0, "ch"));
    env.Spawn([](Env& env, Seen* out) -> Task<void> {
      out->Add(env, co_await env.Send(0, Command::Of("BLPOP", "q", "1")));
    }(env, blpop));
    sub->Flag(env, co_await env.WaitMessage(1'500'000));  // the 600 ms message: nobody hears it
    sub->Flag(env, co_await env.Subscribe(0, "ch"));       // a new subscription
    sub->Flag(env, co_await env.WaitMessage(1'500'000));   // the 2000 ms message
  }(rt->env(0), &blpop, &sub));
  rt->StartClient(1, [](Env& env, Seen* pub) -> Task<void> {
    co_await env.SleepMs(600);
    pub->Add(env, co_await env.Send(0, Command::Of("PUBLISH", "ch", "1")));
    co_await env.SleepMs(2000 - env.MonotonicMs());
    pub->Add(env, co_await env.Send(0, Command::Of("PUBLISH", "ch", "2")));
  }(rt->env(1), &pub));
  MustRun(*rt);
  ASSERT_EQ(blpop.replies.size(), 1u);
  EXPECT_TRUE(blpop.replies[0].is_timeout()) << ToString(blpop.replies[0]);
  ExpectAbout(blpop.at_ms[0], 200, 100, "at the crash");
  ASSERT_EQ(sub.flags.size(), 4u);
  EXPECT_TRUE(sub.flags[0]);
  EXPECT_FALSE(sub.flags[1]);
  ExpectAbout(sub.flag_at_ms[1], 1500, 100, "its timeout");
  EXPECT_TRUE(sub.flags[2]);
  EXPECT_TRUE(sub.flags[3]);
  ExpectAbout(sub.flag_at_ms[3], 2000, 100, "the second message");
  ASSERT_EQ(pub.replies.size(), 2u);
  EXPECT_EQ(pub.replies[0], Reply::Int(0));  // the restarted node has no subscribers
  EXPECT_EQ(pub.replies[1], Reply::Int(1));
  if (real()) {
    bool noted = false;
    for (const auto& n : rt->Notes()) noted = noted || n.find("lost at") != std::string::npos;
    EXPECT_TRUE(noted) << "Notes() should say the subscription was lost";
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Waiting, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "Redis" : "Sim"; });

// Same seed, same history (the report's source) on the simulator, waiting primitives included.
std::vector<std::string> SimHistory(uint64_t seed) {
  BackendConfig cfg = Cfg(4, 300);
  cfg.seed = seed;
  cfg.net.dist = NetSetting::Dist::kLongTail;
  cfg.net.mean_us = 3'000;
  std::unique_ptr<Runtime> rt = MakeSimRuntime(cfg);
  History h;
  rt->set_history(&h);
  for (int c = 0; c < 4; ++c)
    rt->StartClient(c, [](Env& env) -> Task<void> {
      co_await env.Subscribe(0, "released");
      for (int i = 0; i < 15; ++i) {
        if (env.Uniform(0, 2) == 0) {
          co_await env.Send(0, Command::Run(Script::kNotifyOne, 1, "w"));
          co_await env.Send(0, Command::Of("PUBLISH", "released", "1"));
        } else if (env.Uniform(0, 1) == 0) {
          co_await env.Send(0, Command::Of("BLPOP", "w", "0.02"));
        } else {
          co_await env.WaitMessage(env.Uniform(1'000, 20'000));
        }
      }
    }(rt->env(c)));
  std::string error;
  EXPECT_TRUE(IsOk(rt->Run(RuntimeLimits{})));
  std::vector<std::string> out;
  for (const auto& e : h.events())
    out.push_back(std::to_string(e.t_us) + " " + std::to_string(e.client) + " " + e.detail);
  return out;
}

TEST(WaitingSim, SameSeedSameHistory) {
  const std::vector<std::string> a = SimHistory(5);
  EXPECT_GT(a.size(), 40u);
  EXPECT_EQ(a, SimHistory(5));
  EXPECT_NE(a, SimHistory(6));
}

}  // namespace
}  // namespace locklab
