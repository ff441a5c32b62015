// RedisRuntime against real redis-server processes: commands through Env, timeouts, process
// semantics (pause, crash, background tasks), sleeps, and each real fault.
#include "harness/real/redis_runtime.h"
#include "harness/testing/redis_test_util.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/history.h"
#include "harness/testing/runtime_test_util.h"
#include "harness/run/sim_runtime.h"

namespace locklab {
namespace {

using K = FaultAction::Kind;

std::unique_ptr<RedisRuntime> Make(const BackendConfig& cfg, const std::vector<std::string>& endpoints = {}) {
  std::unique_ptr<Runtime> rt = MakeRedis(cfg, endpoints);
  return std::unique_ptr<RedisRuntime>(static_cast<RedisRuntime*>(rt.release()));
}

BackendConfig Cfg(int clients = 1, int nodes = 1, int64_t timeout_ms = 1000) {
  BackendConfig c;
  c.clients = clients;
  c.nodes = nodes;
  c.command_timeout_us = timeout_ms * 1000;
  return c;
}

FaultAction Fault(K kind, int64_t at_ms, int target, int64_t duration_ms = 0, int64_t delta_ms = 0) {
  FaultAction f;
  f.kind = kind;
  f.at_us = at_ms * 1000;
  f.target = target;
  f.duration_us = duration_ms * 1000;
  f.delta_us = delta_ms * 1000;
  return f;
}

// Commands from one string of space-separated words. (GCC 12 miscompiles braced lists of string
// literals inside co_await expressions: "array used as initializer".)
Command S(Script s, const std::string& keys, const std::string& args) { return Command::Call(s, Words(keys), Words(args)); }

Task<void> SetGetDelete(Env& env, Seen* seen) {
  seen->Add(env, co_await env.Send(0, P("SET k tok NX PX 10000")));
  seen->Add(env, co_await env.Send(0, P("GET k")));
  seen->Add(env, co_await env.Send(0, S(Script::kCompareAndDelete, "k", "other")));
  seen->Add(env, co_await env.Send(0, S(Script::kCompareAndDelete, "k", "tok")));
  seen->Add(env, co_await env.Send(0, P("GET k")));
}

TEST(RedisRuntime, SetGetAndScriptsThroughEnv) {
  auto rt = Make(Cfg());
  ASSERT_TRUE(rt);
  History h;
  rt->set_history(&h);
  Seen seen;
  rt->StartClient(0, SetGetDelete(rt->env(0), &seen));
  MustRun(*rt);
  ASSERT_EQ(seen.replies.size(), 5u);
  EXPECT_TRUE(seen.replies[0].is_ok()) << ToString(seen.replies[0]);
  EXPECT_EQ(seen.replies[1], Reply::Str("tok"));
  EXPECT_TRUE(seen.replies[2].is_int(0)) << ToString(seen.replies[2]);
  EXPECT_TRUE(seen.replies[3].is_int(1)) << ToString(seen.replies[3]);
  EXPECT_TRUE(seen.replies[4].is_nil());

  CommandStats cs = rt->Commands();
  EXPECT_EQ(cs.total, 5);
  EXPECT_EQ(cs.by_name["SET"], 1);
  EXPECT_EQ(cs.by_name["GET"], 2);
  EXPECT_EQ(cs.by_name["compare_and_delete"], 2);
  ASSERT_EQ(cs.by_client.size(), 1u);
  EXPECT_EQ(cs.by_client[0], 5);

  Result<std::map<std::string, int64_t>> stats = rt->ServerCommandStats();
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  std::map<std::string, int64_t> server = *stats;
  EXPECT_EQ(server["SET"], 1);
  EXPECT_EQ(server["EVALSHA"], 2);
  EXPECT_EQ(server["GET"], 2 + 2);  // Redis counts the scripts' redis.call('GET') too
  EXPECT_EQ(server["DEL"], 1);

  int commands = 0;
  for (const auto& e : h.events())
    if (e.type == Ev::kCommand) {
      ++commands;
      EXPECT_EQ(e.client, 0);
      EXPECT_EQ(e.value, 0);
    }
  EXPECT_EQ(commands, 5);
  ASSERT_FALSE(h.events().empty());
  EXPECT_EQ(h.events()[0].detail, "SET k tok NX PX 10000 -> OK");

  // Our servers go with the runtime.
  const std::string dir = rt->servers()->dir();
  EXPECT_TRUE(AnyServerIn(dir));
  rt.reset();
  EXPECT_FALSE(AnyServerIn(dir));
}

Task<void> GetTwice(Env& env, Seen* seen, int64_t first_ms, int64_t second_ms) {
  co_await env.SleepMs(first_ms);
  seen->Add(env, co_await env.Send(0, P("GET x")));
  co_await env.SleepMs(second_ms - env.MonotonicMs());
  seen->Add(env, co_await env.Send(0, P("SET x 1")));
}

TEST(RedisRuntime, PausedNodeGivesTimeoutAfterCommandTimeout) {
  auto rt = Make(Cfg(1, 1, /*timeout_ms=*/200));
  ASSERT_TRUE(rt);
  History h;
  rt->set_history(&h);
  std::string error;
  ASSERT_TRUE(IsOk(rt->PlanFault(Fault(K::kPauseNode, 0, 0, /*duration_ms=*/500))));
  Seen seen;
  rt->StartClient(0, GetTwice(rt->env(0), &seen, 50, 700));
  MustRun(*rt);
  ASSERT_EQ(seen.replies.size(), 2u);
  EXPECT_TRUE(seen.replies[0].is_timeout()) << ToString(seen.replies[0]);
  EXPECT_GE(seen.at_ms[0], 50 + 200);
  EXPECT_LT(seen.at_ms[0], 50 + 200 + 150);  // loose: ctest runs tests in parallel
  EXPECT_TRUE(seen.replies[1].is_ok()) << ToString(seen.replies[1]);
  // The late reply (after SIGCONT) is in the history: the GET did run.
  bool late_get = false;
  for (const auto& e : h.events())
    if (e.type == Ev::kCommand && e.detail == "GET x -> (nil)") late_get = e.t_us >= 500'000;
  EXPECT_TRUE(late_get);
}

Task<void> GetAfter(Env& env, Seen* seen, int64_t at_ms) {
  co_await env.SleepMs(at_ms);
  seen->Add(env, co_await env.Send(0, P("INCR n")));
}

TEST(RedisRuntime, PausedClientGetsItsReplyOnlyAfterThePause) {
  auto rt = Make(Cfg(1, 1, /*timeout_ms=*/2000));
  ASSERT_TRUE(rt);
  History h;
  rt->set_history(&h);
  std::string error;
  // The node holds the INCR until 200 ms; the reply then arrives while the client is frozen.
  ASSERT_TRUE(IsOk(rt->PlanFault(Fault(K::kPauseNode, 0, 0, 200))));
  ASSERT_TRUE(IsOk(rt->PlanFault(Fault(K::kPauseClient, 100, 0, 300))));
  Seen seen;
  rt->StartClient(0, GetAfter(rt->env(0), &seen, 20));
  MustRun(*rt);
  ASSERT_EQ(seen.replies.size(), 1u);
  EXPECT_TRUE(seen.replies[0].is_int(1)) << ToString(seen.replies[0]);
  EXPECT_GE(seen.at_ms[0], 400);
  EXPECT_LT(seen.at_ms[0], 550);
  int64_t executed_us = -1, pause_start = -1, pause_end = -1;
  for (const auto& e : h.events()) {
    if (e.type == Ev::kCommand) executed_us = e.t_us;
    if (e.type == Ev::kPauseStart) pause_start = e.t_us;
    if (e.type == Ev::kPauseEnd) pause_end = e.t_us;
  }
  EXPECT_GE(executed_us, 200'000);  // ran when the node came back, during the client's pause
  EXPECT_LT(executed_us, 400'000);
  EXPECT_GE(pause_start, 100'000);
  EXPECT_GE(pause_end, 400'000);
}

Task<void> Sleeper(Env& env, std::vector<int64_t>* wakes) {
  const int64_t t0 = env.MonotonicUs();
  co_await env.SleepMs(100);
  wakes->push_back(env.MonotonicUs() - t0);
  co_await env.Yield();
  wakes->push_back(env.MonotonicUs() - t0);
  co_await env.SleepUs(1500);
  wakes->push_back(env.MonotonicUs() - t0);
}

TEST(RedisRuntime, SleepsAndYields) {
  auto rt = Make(Cfg());
  ASSERT_TRUE(rt);
  std::vector<int64_t> wakes;
  rt->StartClient(0, Sleeper(rt->env(0), &wakes));
  MustRun(*rt);
  ASSERT_EQ(wakes.size(), 3u);
  EXPECT_GE(wakes[0], 100'000);
  EXPECT_LT(wakes[0], 130'000);
  EXPECT_GE(wakes[1], wakes[0]);
  EXPECT_LT(wakes[1], wakes[0] + 20'000);
  EXPECT_GE(wakes[2], wakes[1] + 1'500);
  EXPECT_LT(wakes[2], wakes[1] + 30'000);
}

TEST(RedisRuntime, ClientClocksAndRandomAreTheClients) {
  auto rt = Make(Cfg(2));
  ASSERT_TRUE(rt);
  ClockSetting skew;
  skew.offset_us = 5'000'000;
  skew.drift_ppm = 0;
  rt->SetClientClock(1, skew);
  const int64_t w0 = rt->env(0).WallUs(), w1 = rt->env(1).WallUs();
  EXPECT_NEAR(static_cast<double>(w1 - w0), 5e6, 50e3);
  EXPECT_NE(rt->env(0).Random(), rt->env(1).Random());
  // Same seed, same client: same stream.
  auto again = Make(Cfg(2));
  ASSERT_TRUE(again);
  auto third = Make(Cfg(2));
  ASSERT_TRUE(third);
  EXPECT_EQ(again->env(1).Random(), third->env(1).Random());
  EXPECT_EQ(rt->env(0).node_count(), 1);
  EXPECT_EQ(rt->env(1).client_id(), 1);
}

Task<void> SetThenWait(Env& env, Seen* seen, int64_t wait_ms) {
  seen->Add(env, co_await env.Send(0, P("SET k1 v PX 60000")));
  seen->Add(env, co_await env.Send(0, P("SET k2 v PX 60000")));
  co_await env.SleepMs(wait_ms);
}

TEST(RedisRuntime, NodeClockJumpExpiresKeysEvenUntouched) {
  auto rt = Make(Cfg());
  ASSERT_TRUE(rt);
  ASSERT_TRUE(rt->servers()->clock_shim_loaded()) << "build target locklab_clockshim";
  History h;
  rt->set_history(&h);
  std::string error;
  ASSERT_TRUE(IsOk(rt->PlanFault(Fault(K::kNodeClockJump, 100, 0, 0, /*delta_ms=*/120'000))));
  Seen seen;
  rt->StartClient(0, SetThenWait(rt->env(0), &seen, 1200));
  MustRun(*rt);
  ASSERT_EQ(seen.replies.size(), 2u);
  EXPECT_TRUE(seen.replies[1].is_ok());
  const Result<std::string> dbsize = rt->QueryEndpoint(0, {"DBSIZE"});
  ASSERT_TRUE(dbsize.ok()) << dbsize.status().message();
  const std::string out = *dbsize;
  EXPECT_EQ(out, "0");  // active expiry: nobody touched the keys after the jump
  bool logged = false;
  for (const auto& e : h.events()) logged = logged || (e.type == Ev::kFault && e.detail.find("jumps 120000 ms") != std::string::npos);
  EXPECT_TRUE(logged);
}

Task<void> CrashRestartClient(Env& env, Seen* seen) {
  seen->Add(env, co_await env.Send(0, P("SET k v")));           // node up
  co_await env.SleepMs(200);                                             // crash at 100
  seen->Add(env, co_await env.Send(0, P("GET k")));                // refused
  co_await env.SleepMs(500 - env.MonotonicMs());                         // restart at 300
  for (int i = 0; i < 40; ++i) {
    Reply r = co_await env.Send(0, P("GET k"));
    if (!r.is_error()) {
      seen->Add(env, std::move(r));
      break;
    }
    co_await env.SleepMs(25);
  }
}

TEST(RedisRuntime, NodeCrashRefusesAndRestartComesBackEmpty) {
  auto rt = Make(Cfg());
  ASSERT_TRUE(rt);
  std::string error;
  ASSERT_TRUE(IsOk(rt->PlanFault(Fault(K::kCrashNode, 100, 0))));
  ASSERT_TRUE(IsOk(rt->PlanFault(Fault(K::kRestartNode, 300, 0))));
  Seen seen;
  rt->StartClient(0, CrashRestartClient(rt->env(0), &seen));
  MustRun(*rt);
  ASSERT_EQ(seen.replies.size(), 3u);
  EXPECT_TRUE(seen.replies[0].is_ok());
  EXPECT_TRUE(seen.replies[1].is_error()) << ToString(seen.replies[1]);  // surely did not run
  EXPECT_TRUE(seen.replies[2].is_nil()) << ToString(seen.replies[2]);    // restarted empty
  bool restart_noted = false;
  for (const auto& n : rt->Notes()) restart_noted = restart_noted || n.find("restart node 0") != std::string::npos;
  EXPECT_TRUE(restart_noted);
}

Task<void> FailoverClient(Env& env, Seen* seen) {
  seen->Add(env, co_await env.Send(0, P("SET before 1")));  // replicated at once
  co_await env.SleepMs(150);                                        // replica cut off at 100
  seen->Add(env, co_await env.Send(0, P("SET lock A PX 30000")));  // master only
  co_await env.SleepMs(400 - env.MonotonicMs());                    // promoted at 300
  seen->Add(env, co_await env.Send(0, P("GET before")));
  seen->Add(env, co_await env.Send(0, P("GET lock")));
  seen->Add(env, co_await env.Send(0, P("SET lock B NX PX 30000")));  // B acquires
}

TEST(RedisRuntime, FailoverLosesTheUnreplicatedWriteFiveOfFive) {
  int lost = 0;
  for (int round = 0; round < 5; ++round) {
    BackendConfig cfg = Cfg();
    cfg.with_replica = true;
    auto rt = Make(cfg);
    ASSERT_TRUE(rt);
    const std::string before = rt->endpoint_address(0);
    std::string error;
    ASSERT_TRUE(IsOk(rt->PlanFault(Fault(K::kFailover, 100, 0, /*duration_ms=*/200))));
    Seen seen;
    rt->StartClient(0, FailoverClient(rt->env(0), &seen));
    MustRun(*rt);
    ASSERT_EQ(seen.replies.size(), 5u);
    EXPECT_TRUE(seen.replies[1].is_ok());
    EXPECT_EQ(seen.replies[2], Reply::Str("1")) << ToString(seen.replies[2]) << " / " << ToString(seen.replies[3]) << " / " << ToString(seen.replies[4]);
    EXPECT_NE(rt->endpoint_address(0), before);
    if (seen.replies[3].is_nil() && seen.replies[4].is_ok()) ++lost;
  }
  EXPECT_EQ(lost, 5);
}

Task<void> Ticker(Env& env, std::vector<int64_t>* ticks, int64_t until_ms) {
  while (env.MonotonicMs() < until_ms) {
    ticks->push_back(env.MonotonicUs());
    co_await env.SleepMs(10);
  }
}

Task<void> MainWithWatchdog(Env& env, std::vector<int64_t>* ticks, bool* after) {
  env.Spawn(Ticker(env, ticks, 450));
  co_await env.SleepMs(500);
  *after = true;
}

TEST(RedisRuntime, PauseFreezesBackgroundTasksAndCrashStopsEverything) {
  auto rt = Make(Cfg(2));
  ASSERT_TRUE(rt);
  std::string error;
  ASSERT_TRUE(IsOk(rt->PlanFault(Fault(K::kPauseClient, 100, 0, 200))));
  ASSERT_TRUE(IsOk(rt->PlanFault(Fault(K::kCrashClient, 100, 1))));
  std::vector<int64_t> ticks0, ticks1;
  bool after0 = false, after1 = false;
  rt->StartClient(0, MainWithWatchdog(rt->env(0), &ticks0, &after0));
  rt->StartClient(1, MainWithWatchdog(rt->env(1), &ticks1, &after1));
  MustRun(*rt);
  EXPECT_TRUE(after0);
  EXPECT_FALSE(after1);  // crashed: never resumed
  for (int64_t t : ticks1) EXPECT_LT(t, 105'000);
  // Client 0's watchdog is frozen with it: no tick strictly inside the pause.
  int inside = 0;
  for (int64_t t : ticks0) inside += (t > 105'000 && t < 295'000) ? 1 : 0;
  EXPECT_EQ(inside, 0);
  EXPECT_GT(ticks0.size(), 20u);
}

Task<void> DelayedDel(Env& env, Seen* seen) {
  seen->Add(env, co_await env.Send(0, P("SET k v")));
  const int64_t t0 = env.MonotonicMs();
  seen->Add(env, co_await env.Send(0, P("del k")));
  seen->at_ms.back() -= t0;
}

TEST(RedisRuntime, DelayedMessageIsHeldAndMeasured) {
  auto rt = Make(Cfg(1, 1, /*timeout_ms=*/1000));
  ASSERT_TRUE(rt);
  FaultAction f = Fault(K::kDelayMessage, 0, 0, /*duration_ms=*/250);
  f.command = "DEL";
  f.occurrence = 1;
  std::string error;
  ASSERT_TRUE(IsOk(rt->PlanFault(f)));
  Seen seen;
  rt->StartClient(0, DelayedDel(rt->env(0), &seen));
  MustRun(*rt);
  ASSERT_EQ(seen.replies.size(), 2u);
  EXPECT_TRUE(seen.replies[1].is_int(1));
  EXPECT_GE(seen.at_ms[1], 250);
  EXPECT_LT(seen.at_ms[1], 400);
  bool noted = false;
  for (const auto& n : rt->Notes()) noted = noted || n.find("delayed-message DEL") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(RedisRuntime, DelayedMessageOutlivesItsTimeoutAndStillRuns) {
  // delayed-del: the caller times out, but the DEL still reaches Redis later.
  auto rt = Make(Cfg(1, 1, /*timeout_ms=*/100));
  ASSERT_TRUE(rt);
  FaultAction f = Fault(K::kDelayMessage, 0, 0, 300);
  f.command = "DEL";
  std::string error;
  ASSERT_TRUE(IsOk(rt->PlanFault(f)));
  Seen seen;
  rt->StartClient(0, [](Env& env, Seen* seen) -> Task<void> {
    seen->Add(env, co_await env.Send(0, P("SET k v")));
    seen->Add(env, co_await env.Send(0, P("DEL k")));
    seen->Add(env, co_await env.Send(0, P("EXISTS k")));
    co_await env.SleepMs(400);
    seen->Add(env, co_await env.Send(0, P("EXISTS k")));
  }(rt->env(0), &seen));
  MustRun(*rt);
  ASSERT_EQ(seen.replies.size(), 4u);
  EXPECT_TRUE(seen.replies[1].is_timeout());
  EXPECT_TRUE(seen.replies[2].is_int(1));  // not yet deleted
  EXPECT_TRUE(seen.replies[3].is_int(0));  // the late DEL ran
}

TEST(RedisRuntime, PartitionDropsThatClientsMessagesToThatNode) {
  auto rt = Make(Cfg(1, 2, /*timeout_ms=*/100));
  ASSERT_TRUE(rt);
  FaultAction f = Fault(K::kPartition, 0, 0, 300);
  f.node = 1;
  std::string error;
  ASSERT_TRUE(IsOk(rt->PlanFault(f)));
  Seen seen;
  rt->StartClient(0, [](Env& env, Seen* seen) -> Task<void> {
    co_await env.SleepMs(20);
    seen->Add(env, co_await env.Send(1, P("PING")));  // cut off
    seen->Add(env, co_await env.Send(0, P("PING")));  // fine
    co_await env.SleepMs(350 - env.MonotonicMs());
    seen->Add(env, co_await env.Send(1, P("PING")));  // healed
  }(rt->env(0), &seen));
  MustRun(*rt);
  ASSERT_EQ(seen.replies.size(), 3u);
  EXPECT_TRUE(seen.replies[0].is_timeout());
  EXPECT_EQ(seen.replies[1], Reply::Status("PONG"));
  EXPECT_EQ(seen.replies[2], Reply::Status("PONG"));
  bool noted = false;
  for (const auto& n : rt->Notes()) noted = noted || n.find("emulated in locklab") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(RedisRuntime, NetworkDelayHoldsBothDirections) {
  BackendConfig cfg = Cfg();
  cfg.net.mean_us = 5'000;  // constant 5 ms each way
  auto rt = Make(cfg);
  ASSERT_TRUE(rt);
  Seen seen;
  rt->StartClient(0, [](Env& env, Seen* seen) -> Task<void> {
    const int64_t t0 = env.MonotonicUs();
    for (int i = 0; i < 5; ++i) co_await env.Send(0, P("PING"));
    seen->Add(env, Reply::Int(env.MonotonicUs() - t0));
  }(rt->env(0), &seen));
  MustRun(*rt);
  ASSERT_EQ(seen.replies.size(), 1u);
  EXPECT_GE(seen.replies[0].integer, 5 * 10'000);
  EXPECT_LT(seen.replies[0].integer, 5 * 10'000 + 60'000);
  bool noted = false;
  for (const auto& n : rt->Notes()) noted = noted || n.find("10 messages, planned mean 5.0 ms") != std::string::npos;
  EXPECT_TRUE(noted) << (rt->Notes().empty() ? "" : rt->Notes().back());
}

TEST(RedisRuntime, ExistingEndpointsWorkAndRefuseServerFaults) {
  std::string error;
  auto servers = StartServers(RedisServerOptions{});
  ASSERT_TRUE(servers);
  auto rt = Make(Cfg(), {servers->address(0)});
  ASSERT_TRUE(rt);
  EXPECT_EQ(rt->servers(), nullptr);
  error = rt->PlanFault(Fault(K::kCrashNode, 0, 0)).message();
  EXPECT_FALSE(error.empty());
  EXPECT_NE(error.find("crash_node"), std::string::npos) << error;
  EXPECT_NE(error.find("drop --redis"), std::string::npos) << error;
  error = rt->PlanFault(Fault(K::kNodeClockJump, 0, 0, 0, 1000)).message();
  EXPECT_FALSE(error.empty());
  EXPECT_TRUE(IsOk(rt->PlanFault(Fault(K::kPauseClient, 0, 0, 10))));
  Seen seen;
  rt->StartClient(0, SetGetDelete(rt->env(0), &seen));
  MustRun(*rt);
  ASSERT_EQ(seen.replies.size(), 5u);
  EXPECT_TRUE(seen.replies[3].is_int(1));
  rt.reset();
  EXPECT_TRUE(servers->PingOnce(0));  // not ours to stop
}

Task<void> Hammer(Env& env, int* ok) {
  const std::string key = "k" + std::to_string(env.client_id());
  const std::string tok = env.RandomToken();
  std::vector<std::pair<int, Command>> set, del;
  for (int n = 0; n < env.node_count(); ++n) {
    set.emplace_back(n, P("SET " + key + " " + tok + " NX PX 10000"));
    del.emplace_back(n, S(Script::kCompareAndDelete, key, tok));
  }
  std::vector<Reply> a = co_await env.SendAll(std::move(set));
  std::vector<Reply> b = co_await env.SendAll(std::move(del));
  bool all = true;
  for (auto& r : a) all = all && r.is_ok();
  for (auto& r : b) all = all && r.is_int(1);
  if (all) ++*ok;
}

TEST(RedisRuntime, AThousandClientsOnFiveNodes) {
  auto rt = Make(Cfg(1000, 5, /*timeout_ms=*/5000));
  ASSERT_TRUE(rt);
  int ok = 0;
  for (int c = 0; c < 1000; ++c) rt->StartClient(c, Hammer(rt->env(c), &ok));
  MustRun(*rt, 30'000);
  EXPECT_EQ(ok, 1000);
  EXPECT_EQ(rt->Commands().total, 10'000);
}

TEST(RedisRuntime, HardCapStopsARunawayRun) {
  auto rt = Make(Cfg());
  ASSERT_TRUE(rt);
  rt->StartClient(0, [](Env& env) -> Task<void> {
    for (int i = 0; i < 1'000'000; ++i) co_await env.SleepMs(10);
  }(rt->env(0)));
  std::string error;
  RuntimeLimits limits;
  limits.max_duration_us = 200'000;
  error = rt->Run(limits).message();
  EXPECT_FALSE(error.empty());
  EXPECT_NE(error.find("time limit"), std::string::npos) << error;
}

// --- Command-triggered client faults (FaultAction::on_send): the same cases on both runtimes. ---

std::unique_ptr<Runtime> MakeBackend(bool real, const BackendConfig& cfg) {
  if (!real) return MakeSimRuntime(cfg);
  return MakeRedis(cfg);
}

// A node crash, a restart, a node pause and a partition write the same history records on both
// runtimes (sim/fault.h); the real runtime adds only that the node answered again.
TEST(RedisRuntime, NodeFaultsRecordWhatTheSimulatorRecords) {
  std::vector<std::string> recorded[2];
  for (const bool real : {false, true}) {
    std::unique_ptr<Runtime> rt = MakeBackend(real, Cfg(1, 2));
    ASSERT_TRUE(rt);
    History h;
    rt->set_history(&h);
    ASSERT_TRUE(IsOk(rt->PlanFault(Fault(K::kCrashNode, 100, 0))));
    ASSERT_TRUE(IsOk(rt->PlanFault(Fault(K::kRestartNode, 300, 0))));
    ASSERT_TRUE(IsOk(rt->PlanFault(Fault(K::kPauseNode, 50, 1, /*duration_ms=*/100))));
    FaultAction cut = Fault(K::kPartition, 20, 0, /*duration_ms=*/30);
    cut.node = 1;
    ASSERT_TRUE(IsOk(rt->PlanFault(cut)));
    Seen seen;
    rt->StartClient(0, CrashRestartClient(rt->env(0), &seen));
    MustRun(*rt);
    for (const auto& e : h.events()) {
      if (e.type != Ev::kFault || e.detail.find("answers again") != std::string::npos) continue;
      recorded[real].push_back(std::to_string(e.client) + " " + std::to_string(e.value) + " " + e.detail);
    }
  }
  EXPECT_EQ(recorded[1], recorded[0]);
  EXPECT_EQ(recorded[0], (std::vector<std::string>{"0 30000 cut off from node 1 for 30 ms", "-1 100000 node 1 pauses 100 ms",
                                                   "-1 0 node 0 crashes (data lost)", "-1 0 node 1 resumes",
                                                   "-1 0 node 0 restarts empty"}));
}

FaultAction Trigger(K kind, int target, const std::string& on_send, int occurrence, int64_t duration_ms = 0) {
  FaultAction f = Fault(kind, /*at_ms=*/0, target, duration_ms);
  f.on_send = on_send;
  f.occurrence = occurrence;
  return f;
}

bool AnyNote(const Runtime& rt, const std::string& part) {
  for (const auto& n : rt.Notes())
    if (n.find(part) != std::string::npos) return true;
  return false;
}

class OnSend : public ::testing::TestWithParam<bool> {  // true: real redis-server
 protected:
  bool real() const { return GetParam(); }
};

TEST_P(OnSend, PauseOnGetHoldsItsReplyAndTheNextCommandUntilThePauseEnds) {
  auto rt = MakeBackend(real(), Cfg(1, 1, /*timeout_ms=*/2000));
  ASSERT_TRUE(rt);
  History h;
  rt->set_history(&h);
  std::string error;
  ASSERT_TRUE(IsOk(rt->PlanFault(Trigger(K::kPauseClient, 0, "GET", 1, /*duration_ms=*/300))));
  Seen seen;
  rt->StartClient(0, [](Env& env, Seen* seen) -> Task<void> {
    seen->Add(env, co_await env.Send(0, P("GET k")));
    seen->Add(env, co_await env.Send(0, P("SET k v")));
  }(rt->env(0), &seen));
  MustRun(*rt);
  ASSERT_EQ(seen.replies.size(), 2u);
  EXPECT_TRUE(seen.replies[0].is_nil()) << ToString(seen.replies[0]);
  EXPECT_TRUE(seen.replies[1].is_ok()) << ToString(seen.replies[1]);
  EXPECT_GE(seen.at_ms[0], 300);  // the GET's reply is seen only after the pause
  EXPECT_LT(seen.at_ms[0], 450);
  int64_t get_us = -1, set_us = -1, start_us = -1, end_us = -1;
  std::string start_detail;
  for (const auto& e : h.events()) {
    if (e.type == Ev::kCommand && e.detail.rfind("GET k ->", 0) == 0) get_us = e.t_us;
    if (e.type == Ev::kCommand && e.detail.rfind("SET k v ->", 0) == 0) set_us = e.t_us;
    if (e.type == Ev::kPauseStart) {
      start_us = e.t_us;
      start_detail = e.detail;
      EXPECT_EQ(e.client, 0);
      EXPECT_EQ(e.value, 300'000);
    }
    if (e.type == Ev::kPauseEnd) end_us = e.t_us;
  }
  EXPECT_GE(get_us, 0);  // the GET reached Redis at once (real: its reply came back at once)
  EXPECT_LT(get_us, 100'000);
  EXPECT_GE(set_us, 300'000);  // the SET went out after the pause
  EXPECT_GE(start_us, 0);
  EXPECT_LT(start_us, 50'000);
  EXPECT_EQ(start_detail, "pause 300 ms on its 1st GET");
  EXPECT_GE(end_us, 300'000);
  if (real()) {
    EXPECT_TRUE(AnyNote(*rt, "pause client 0 on its 1st GET: planned 300.0 ms, applied "));
  }
}

TEST_P(OnSend, CrashOnSetnxLetsItLandButNothingAfter) {
  auto rt = MakeBackend(real(), Cfg(2));
  ASSERT_TRUE(rt);
  History h;
  rt->set_history(&h);
  std::string error;
  ASSERT_TRUE(IsOk(rt->PlanFault(Trigger(K::kCrashClient, 0, "setnx", 1))));
  Seen seen;
  rt->StartClient(0, [](Env& env, Seen* seen) -> Task<void> {
    seen->Add(env, co_await env.Send(0, P("SETNX k v")));
    seen->Add(env, co_await env.Send(0, P("EXPIRE k 10")));
  }(rt->env(0), &seen));
  // Client 1 keeps the run going well past the SETNX's round trip.
  rt->StartClient(1, [](Env& env) -> Task<void> { co_await env.SleepMs(200); }(rt->env(1)));
  MustRun(*rt);
  EXPECT_TRUE(seen.replies.empty());  // not even the SETNX's reply
  EXPECT_EQ(rt->Commands().by_client[0], 1);
  bool setnx = false, expire = false;
  int crashes = 0;
  for (const auto& e : h.events()) {
    if (e.type == Ev::kCommand && e.detail == "SETNX k v -> (integer) 1") setnx = true;
    if (e.type == Ev::kCommand && e.detail.find("EXPIRE") != std::string::npos) expire = true;
    if (e.type == Ev::kCrash) {
      ++crashes;
      EXPECT_EQ(e.client, 0);
      EXPECT_LT(e.t_us, 50'000);
      EXPECT_EQ(e.detail, "crash on its 1st SETNX");
    }
  }
  EXPECT_TRUE(setnx);
  EXPECT_FALSE(expire);
  EXPECT_EQ(crashes, 1);
  if (real()) {
    auto& redis = static_cast<RedisRuntime&>(*rt);
    Result<std::string> out = redis.QueryEndpoint(0, {"EXISTS", "k"});
    ASSERT_TRUE(out.ok()) << out.status().message();
    EXPECT_EQ(*out, "1");
    out = redis.QueryEndpoint(0, {"TTL", "k"});
    ASSERT_TRUE(out.ok()) << out.status().message();
    EXPECT_EQ(*out, "-1");  // no EXPIRE ever ran
    EXPECT_TRUE(AnyNote(*rt, "crash client 0 on its 1st SETNX: applied at "));
  }
}

TEST_P(OnSend, StarMatchesTheNthCommandOfAnyNameOfThatClientOnly) {
  auto rt = MakeBackend(real(), Cfg(2));
  ASSERT_TRUE(rt);
  History h;
  rt->set_history(&h);
  std::string error;
  ASSERT_TRUE(IsOk(rt->PlanFault(Trigger(K::kPauseClient, 0, "*", 2, 200))));
  // Only client 0 sends a PING: client 1's trigger never fires.
  ASSERT_TRUE(IsOk(rt->PlanFault(Trigger(K::kPauseClient, 1, "PING", 1, 200))));
  Seen a, b;
  rt->StartClient(0, [](Env& env, Seen* seen) -> Task<void> {
    seen->Add(env, co_await env.Send(0, P("PING")));
    seen->Add(env, co_await env.Send(0, P("GET a")));
    seen->Add(env, co_await env.Send(0, P("SET a 1")));
  }(rt->env(0), &a));
  rt->StartClient(1, [](Env& env, Seen* seen) -> Task<void> {
    for (int i = 0; i < 3; ++i) seen->Add(env, co_await env.Send(0, P("GET b")));
  }(rt->env(1), &b));
  MustRun(*rt);
  ASSERT_EQ(a.replies.size(), 3u);
  ASSERT_EQ(b.replies.size(), 3u);
  int pauses = 0;
  for (const auto& e : h.events())
    if (e.type == Ev::kPauseStart) {
      ++pauses;
      EXPECT_EQ(e.client, 0);
      EXPECT_EQ(e.detail, "pause 200 ms on its 2nd command");
      EXPECT_GE(e.t_us / 1000, a.at_ms[0]);  // when the GET went out, after the PING's reply
    }
  EXPECT_EQ(pauses, 1);
  EXPECT_GE(a.at_ms[1] - a.at_ms[0], 200);  // the GET's reply waited for the pause
  EXPECT_LT(a.at_ms[2] - a.at_ms[1], 100);  // the SET (3rd command): no second pause
  EXPECT_LT(b.at_ms[2], 100);               // client 1 never paused
}

TEST_P(OnSend, OnlyClientPausesAndCrashesTakeIt) {
  auto rt = MakeBackend(real(), Cfg());
  ASSERT_TRUE(rt);
  std::string error;
  error = rt->PlanFault(Trigger(K::kCrashNode, 0, "GET", 1)).message();
  EXPECT_FALSE(error.empty());
  EXPECT_NE(error.find("crash_node: on_send applies only to pause_client and crash_client"), std::string::npos)
      << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
  error = rt->PlanFault(Trigger(K::kClientClockJump, 0, "GET", 1)).message();
  EXPECT_FALSE(error.empty());
  EXPECT_NE(error.find("on_send applies only"), std::string::npos) << error;
  error = rt->PlanFault(Trigger(K::kPauseClient, 0, "GET", 0, 10)).message();
  EXPECT_FALSE(error.empty());
  EXPECT_NE(error.find("occurrence >= 1"), std::string::npos) << error;
}

INSTANTIATE_TEST_SUITE_P(Backends, OnSend, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "Redis" : "Sim"; });

TEST(RedisRuntime, BadConfigIsRefused) {
  std::string error;
  BackendConfig cfg = Cfg();
  cfg.with_replica = true;
  Result<std::unique_ptr<Runtime>> made = MakeRedisRuntime(cfg, {"127.0.0.1:1"});
  EXPECT_FALSE(made.ok());
  error = made.status().message();
  EXPECT_NE(error.find("drop --redis"), std::string::npos);
  EXPECT_FALSE(MakeRedisRuntime(Cfg(1, 2), {"127.0.0.1:1"}).ok());
  EXPECT_FALSE(MakeRedisRuntime(Cfg(), {"nonsense"}).ok());
  // Nobody listens on port 1: the scripts cannot be loaded.
  made = MakeRedisRuntime(Cfg(), {"127.0.0.1:1"});
  EXPECT_FALSE(made.ok());
  error = made.status().message();
  EXPECT_NE(error.find("127.0.0.1:1"), std::string::npos) << error;
}

}  // namespace
}  // namespace locklab
