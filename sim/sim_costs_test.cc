// The simulator's costs (simulator.h, "Costs"): exact times for constant costs, the direction
// in which costs move time, and determinism with drawn costs.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "harness/testing/sim_test_util.h"
#include "sim/simulator.h"

namespace locklab::sim {
namespace {

using Placement = ClientCosts::Placement;

// Every figure a constant, so that times can be checked to the µs.
CostModel ConstantCosts(double command, double wake, double send, double reply, double one_way,
                        Placement placement = Placement::kProcessPerClient) {
  CostModel m;
  m.name = "test";
  m.node.command_us = CostDist::Constant(command);
  m.node.wake_us = CostDist::Constant(wake);
  m.node.script_us = CostDist::Constant(command);
  m.node.blpop_serve_us = CostDist::Constant(command);
  m.client.placement = placement;
  m.client.send_us = CostDist::Constant(send);
  m.client.reply_us = CostDist::Constant(reply);
  m.one_way_us = CostDist::Constant(one_way);
  return m;
}

// One process, the passes loop with a 5 us wire, nodes waking at no cost: the passes tests' costs.
CostModel OneProcessPasses(double command, double send, double reply, double reply_write) {
  CostModel m = ConstantCosts(command, 0, send, reply, 10, Placement::kOneProcess);
  m.loop.passes = true;
  m.loop.wire_us = CostDist::Constant(5);
  m.loop.reply_write_us = CostDist::Constant(reply_write);
  return m;
}

SimConfig CostConfig(int clients, const CostModel& cost, int64_t injected_us = 0) {
  SimConfig c = Config(clients, 1, 10'000'000);
  c.net.mean_us = injected_us;
  c.cost = cost;
  return c;
}

// `n` GETs one after the other; the time the last reply resumed the client.
Task<void> Gets(Env& env, int n, int64_t* done_us, Simulator& sim) {
  for (int i = 0; i < n; ++i) co_await env.Send(0, Command::Of("GET", "k"));
  *done_us = sim.now_us();
}

TEST(SimCosts, LoneCommandPaysSendPathWakeCommandPathReply) {
  // send 3, path 10 - 3 = 7 (the path's figure holds the client's send work), wake 5 + command 6,
  // path 10 - 4 = 6, reply 4: 3 + 7 + 11 + 6 + 4 = 31, plus 2 x 100 injected.
  Simulator sim(CostConfig(1, ConstantCosts(6, 5, 3, 4, 10), 100));
  int64_t done = 0;
  sim.StartClient(0, Gets(sim.env(0), 1, &done, sim));
  ASSERT_TRUE(RunOk(sim));
  EXPECT_EQ(done, 231);
}

TEST(SimCosts, HeldMessagesPayTheHoldOnTheClient) {
  // As the first test, with hold 2 on the held request and 2 on the held reply: 231 + 4.
  CostModel cost = ConstantCosts(6, 5, 3, 4, 10);
  cost.client.hold_us = CostDist::Constant(2);
  Simulator held(CostConfig(1, cost, 100));
  int64_t done = 0;
  held.StartClient(0, Gets(held.env(0), 1, &done, held));
  ASSERT_TRUE(RunOk(held));
  EXPECT_EQ(done, 235);
  // Without an injected delay nothing is held: the hold costs nothing (3 + 7 + 11 + 6 + 4).
  Simulator plain(CostConfig(1, cost, 0));
  plain.StartClient(0, Gets(plain.env(0), 1, &done, plain));
  ASSERT_TRUE(RunOk(plain));
  EXPECT_EQ(done, 31);
}

TEST(SimCosts, LegacyModelIsTheOldFixedService) {
  Simulator sim(CostConfig(1, LegacyCostModel(), 100));
  int64_t done = 0;
  sim.StartClient(0, Gets(sim.env(0), 2, &done, sim));
  ASSERT_TRUE(RunOk(sim));
  EXPECT_EQ(done, 404);  // (100 + 2 + 100) x 2: no wake-up, no client cost, no path of its own
}

TEST(SimCosts, SaturatedNodeServesAtOneOverItsServiceTime) {
  // 50 clients, each 200 GETs back to back, no client cost: the node is the bottleneck. A node
  // that stays busy pays no wake-up, so 10,000 commands take 10,000 x 10 µs and a little.
  const CostModel cost = ConstantCosts(10, 5, 0, 0, 1);
  Simulator sim(CostConfig(50, cost));
  std::vector<int64_t> done(50);
  for (int c = 0; c < 50; ++c) sim.StartClient(c, Gets(sim.env(c), 200, &done[static_cast<size_t>(c)], sim));
  ASSERT_TRUE(RunOk(sim));
  const int64_t end = *std::max_element(done.begin(), done.end());
  EXPECT_GE(end, 10'000 * 10);
  EXPECT_LE(end, 10'000 * 10 + 1'000);
}

// Two clients, one GET each, starting together: when each was resumed with its reply.
std::pair<int64_t, int64_t> TwoGets(const CostModel& cost) {
  Simulator sim(CostConfig(2, cost));
  int64_t a = 0, b = 0;
  sim.StartClient(0, Gets(sim.env(0), 1, &a, sim));
  sim.StartClient(1, Gets(sim.env(1), 1, &b, sim));
  EXPECT_TRUE(RunOk(sim));
  return {a, b};
}

TEST(SimCosts, WakeUpIsPaidOncePerIdleToBusyTurn) {
  // Two clients send at the same instant: one wake-up (5) for both, then 6 + 6.
  EXPECT_EQ(TwoGets(ConstantCosts(6, 5, 0, 0, 0)), std::make_pair(int64_t{11}, int64_t{17}));
}

TEST(SimCosts, OneProcessSharesOneCpuAmongItsClients) {
  // 1,000 clients x 5 GETs, client CPU 3 + 3 µs per command, node 1 µs: on one CPU the client
  // side (6 µs x 5,000) bounds the run; with a CPU each it does not.
  auto run = [](Placement placement) {
    Simulator sim(CostConfig(1000, ConstantCosts(1, 0, 3, 3, 5, placement)));
    std::vector<int64_t> done(1000);
    for (int c = 0; c < 1000; ++c) sim.StartClient(c, Gets(sim.env(c), 5, &done[static_cast<size_t>(c)], sim));
    EXPECT_TRUE(RunOk(sim));
    return *std::max_element(done.begin(), done.end());
  };
  const int64_t one = run(Placement::kOneProcess);
  const int64_t each = run(Placement::kProcessPerClient);
  EXPECT_GE(one, 5'000 * 6);
  EXPECT_LT(each, 5'000 * 2);  // bounded by the node: 5,000 x 1 µs and the paths
  EXPECT_GT(one, 3 * each);
}

TEST(SimCosts, ScriptPaysPerCallInItsText) {
  CostModel cost = ConstantCosts(6, 0, 0, 0, 0);
  cost.node.script_us = CostDist::Constant(7);
  cost.node.script_call_us = CostDist::Constant(1);
  Simulator sim(CostConfig(1, cost));
  int64_t done = 0;
  auto body = [](Env& env, Simulator& s, int64_t* out) -> Task<void> {
    Command cas = Command::Call(Script::kCompareAndDelete, {"k"}, {"v"});  // 2 redis.call's in its text
    co_await env.Send(0, std::move(cas));
    *out = s.now_us();
  };
  sim.StartClient(0, body(sim.env(0), sim, &done));
  ASSERT_TRUE(RunOk(sim));
  EXPECT_EQ(done, 9);  // 7 + 2 x 1
}

// Sleeps `n` times `us`; the time each sleep ended.
Task<void> Sleeps(Env& env, int n, int64_t us, std::vector<int64_t>* ends, Simulator& sim) {
  for (int i = 0; i < n; ++i) {
    co_await env.SleepUs(us);
    ends->push_back(sim.now_us());
  }
}

TEST(SimCosts, TimerInAnIdleProcessFiresLateByHowLongItIdled) {
  CostModel cost = ConstantCosts(6, 0, 0, 0, 0);
  cost.client.timer_us = CostDist::Constant(1);
  cost.client.wake_after_idle = {{100, CostDist::Constant(10)}, {1000, CostDist::Constant(100)}};
  Simulator sim(CostConfig(1, cost));
  std::vector<int64_t> ends;
  sim.StartClient(0, Sleeps(sim.env(0), 2, 1000, &ends, sim));
  ASSERT_TRUE(RunOk(sim));
  // The start step at 0 finds the CPU just free (idle 0): 1. The first sleep, due at 1001 after
  // 1000 idle, wakes 100 late, then 1: 1102. The second likewise: 1102 + 1000 + 101 = 2203.
  EXPECT_EQ(ends, (std::vector<int64_t>{1102, 2203}));
}

TEST(SimCosts, AWakeUpFromIdleCostsWakeCpuUsAfterItsEvent) {
  CostModel cost = ConstantCosts(6, 0, 0, 0, 0);
  cost.client.timer_us = CostDist::Constant(1);
  cost.client.wake_after_idle = {{1000, CostDist::Constant(100)}};
  cost.client.wake_cpu_us = CostDist::Constant(20);
  Simulator sim(CostConfig(1, cost));
  std::vector<int64_t> ends;
  sim.StartClient(0, Sleeps(sim.env(0), 2, 1000, &ends, sim));
  ASSERT_TRUE(RunOk(sim));
  // The start step at 0 finds the CPU just free (idle 0: no wake-up): 1. The first sleep, due
  // at 1001 after 1000 idle: 100 late, then 1: 1102, as without wake_cpu_us; its 20 µs of wake
  // CPU follow, so the CPU is busy until 1122. The second sleep, due at 2102, finds it idle for
  // 980 µs: 98 late, then 1: 2201.
  EXPECT_EQ(ends, (std::vector<int64_t>{1102, 2201}));
  EXPECT_EQ(sim.client_cpu_ns(), (1 + 21 + 21) * 1000);  // the lateness is a delay, not CPU
}

// Sleeps `us`, then sends one GET; the time its reply resumed the client.
Task<void> SleepThenGet(Env& env, int64_t us, int64_t* done_us, Simulator& sim) {
  co_await env.SleepUs(us);
  co_await env.Send(0, Command::Of("GET", "k"));
  *done_us = sim.now_us();
}

TEST(SimCosts, AWakeUpsCpuDelaysTheNextEventNotItsOwnSends) {
  // A lone client wakes from idle and sends at once: with or without 50 µs of wake CPU its GET
  // leaves at the same time, the wake CPU coming after the handler's sends. (Its reply comes at
  // the same time too: in this queue-model profile a reply is no wake-up and waits for no wake
  // CPU; in the passes loop it would.)
  for (double wake_cpu : {0.0, 50.0}) {
    CostModel cost = ConstantCosts(6, 5, 3, 4, 10);
    cost.client.timer_us = CostDist::Constant(1);
    if (wake_cpu > 0) cost.client.wake_cpu_us = CostDist::Constant(wake_cpu);
    Simulator sim(CostConfig(1, cost));
    int64_t done = 0;
    sim.StartClient(0, SleepThenGet(sim.env(0), 1000, &done, sim));
    ASSERT_TRUE(RunOk(sim));
    // The start step at 0: 1. The sleep, due at 1001, finds the CPU idle: 1002. Then send 3,
    // path 7, node wake 5 + command 6, path 6, reply 4: 1002 + 31.
    EXPECT_EQ(done, 1033) << wake_cpu;
  }
}

// Two clients (timer 1 µs; one CPU unless placed a process each), one sleep each of a_us and
// b_us: when each ended.
std::pair<std::vector<int64_t>, std::vector<int64_t>> TwoSleepers(CostModel cost, int64_t a_us, int64_t b_us,
                                                                  Placement placement = Placement::kOneProcess) {
  cost.client.placement = placement;
  cost.client.timer_us = CostDist::Constant(1);
  Simulator sim(CostConfig(2, cost));
  std::vector<int64_t> a, b;
  sim.StartClient(0, Sleeps(sim.env(0), 1, a_us, &a, sim));
  sim.StartClient(1, Sleeps(sim.env(1), 1, b_us, &b, sim));
  EXPECT_TRUE(RunOk(sim));
  return {a, b};
}

TEST(SimCosts, AWakeUpsCpuDelaysTheNextEvent) {
  // Client 0 wakes the process from idle at 1001 (wake CPU 50 after it); client 1's timer is due
  // at 1010, inside those 50 µs, and waits for them. Start steps at 0: 1 and 2. Client 0: 1002.
  // Client 1: 1002 + 50 + 1.
  CostModel cost = ConstantCosts(6, 0, 0, 0, 0);
  cost.client.wake_cpu_us = CostDist::Constant(50);
  const auto [a, b] = TwoSleepers(cost, 1000, 1008);
  EXPECT_EQ(a, (std::vector<int64_t>{1002}));
  EXPECT_EQ(b, (std::vector<int64_t>{1053}));
  // A process each: client 1's CPU owes nothing for client 0's wake-up (and its own is after it).
  const auto [a2, b2] = TwoSleepers(cost, 1000, 1008, Placement::kProcessPerClient);
  EXPECT_EQ(a2, (std::vector<int64_t>{1002}));
  EXPECT_EQ(b2, (std::vector<int64_t>{1010}));
}

TEST(SimCosts, TimersDueWhileTheProcessWakesFireTogether) {
  // Two clients on one CPU sleep 1000 and 1005: the first wakes the process (100 late after
  // 1000 idle) and the second, due while it wakes, queues behind it and pays no wake-up of its own.
  CostModel cost = ConstantCosts(6, 0, 0, 0, 0);
  cost.client.wake_after_idle = {{1000, CostDist::Constant(100)}};
  const auto [a, b] = TwoSleepers(cost, 1000, 1005);
  // Start steps at 0: 1 and 2. Client 0 due at 1001 after 999 idle: 1001 + 99.9 + 1 = 1102
  // (rounded up from 1101.9); client 1, due at 1007, waits for the CPU: 1102 + 1 = 1103.
  EXPECT_EQ(a, (std::vector<int64_t>{1102}));
  EXPECT_EQ(b, (std::vector<int64_t>{1103}));
}

TEST(SimCosts, PassesLoopReadsWhatCameWhileTheNodeWokeAndWritesTheLastReadFirst) {
  // One process, send 4, reply 1, command 7 (3 of it the reply's write), wire 5, no node
  // wake_us; waking after 2 us of idling or more takes 10 (after 1 us: 0, the floor).
  CostModel cost = ConstantCosts(7, 0, 4, 1, 10, Placement::kOneProcess);
  cost.loop.passes = true;
  cost.loop.wire_us = CostDist::Constant(5);
  cost.loop.reply_write_us = CostDist::Constant(3);
  cost.client.wake_after_idle = {{1, CostDist::Constant(0)}, {2, CostDist::Constant(10)}};
  // Client 0's GET leaves at 4 and arrives at 9; the node, idle 9 us, polls at 19, by when
  // client 1's (leaving at 8) has arrived at 13. The pass: 19 + 2 x (7 - 3) = 27, then client
  // 1's reply at 30 and client 0's at 33; they arrive at 35 and 38. Client 1's finds the
  // process idle since 8: it wakes 10 late, then 1: 46; client 0's queues behind it: 47.
  EXPECT_EQ(TwoGets(cost), std::make_pair(int64_t{47}, int64_t{46}));
  // The queue model answers each as it is done, in the order read: client 0 first.
  cost.loop = LoopCosts{};
  const auto [queue0, queue1] = TwoGets(cost);
  EXPECT_LT(queue0, queue1);
}

TEST(SimCosts, PassesLoopKeepsEachPathInOrder) {
  // Two clients of one process send 30 GETs each; the wire takes 0-100 us at random. On a FIFO
  // path the node runs them in the order they were sent; with the queue model's independent
  // draws (one_way 0-100) some overtake.
  auto order_kept = [](bool passes, uint64_t seed) {
    CostModel cost = ConstantCosts(2, 1, 1, 1, 0, Placement::kOneProcess);
    cost.one_way_us = CostDist{{{0, 0}, {1, 100}}};
    cost.loop.passes = passes;
    cost.loop.wire_us = CostDist{{{0, 0}, {1, 100}}};
    cost.loop.reply_write_us = CostDist::Constant(1);
    SimConfig config = CostConfig(2, cost);
    config.seed = seed;
    Simulator sim(config);
    std::vector<std::string> sent, ran;
    sim.set_command_observer([&](int64_t, int, int, const Command& cmd, const Reply&) { ran.emplace_back(cmd.argv[1]); });
    auto sender = [&](Env& env, int c) -> Task<void> {
      for (int i = 0; i < 30; ++i) {
        const std::string key = std::to_string(c) + ":" + std::to_string(i);
        sent.push_back(key);
        co_await env.Send(0, Command::Of("GET", key));
      }
    };
    sim.StartClient(0, sender(sim.env(0), 0));
    sim.StartClient(1, sender(sim.env(1), 1));
    EXPECT_TRUE(RunOk(sim));
    return sent == ran;
  };
  int queue_kept = 0;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    EXPECT_TRUE(order_kept(true, seed)) << "seed " << seed;
    queue_kept += order_kept(false, seed) ? 1 : 0;
  }
  EXPECT_LT(queue_kept, 5);
}

// When each of two clients' GETs (one process, injected delay 100) reaches the node.
std::vector<int64_t> HeldArrivals(const CostModel& cost) {
  Simulator sim(CostConfig(2, cost, 100));
  std::vector<int64_t> at;
  sim.set_command_observer([&](int64_t t_us, int, int, const Command&, const Reply&) { at.push_back(t_us); });
  int64_t a = 0, b = 0;
  sim.StartClient(0, Gets(sim.env(0), 1, &a, sim));
  sim.StartClient(1, Gets(sim.env(1), 1, &b, sim));
  EXPECT_TRUE(RunOk(sim));
  return at;
}

TEST(SimCosts, AHeldRequestIsWrittenWhenTheLoopRunsItsTimer) {
  // One process, send 3, hold 2, wire 5; waking after 2 us of idling or more takes 10.
  CostModel cost = OneProcessPasses(6, 3, 4, 1);
  cost.client.hold_us = CostDist::Constant(2);
  cost.client.wake_after_idle = {{1, CostDist::Constant(0)}, {2, CostDist::Constant(10)}};
  // The hold as a delay on the path: each leaves after send + hold (5, then 10), + 5 + 100.
  EXPECT_EQ(HeldArrivals(cost), (std::vector<int64_t>{110, 115}));
  // As the real runtime: arming the hold costs 2 (client 0 at 0, client 1 at 2); the holds end
  // at 100 and 102. The process, idle since 4, wakes 10 late; client 0's write (3) leaves at
  // 113, client 1's queues behind it and leaves at 116; + 5 on the wire.
  cost.loop.held_request_waits = true;
  EXPECT_EQ(HeldArrivals(cost), (std::vector<int64_t>{118, 121}));
  // With held_write_us (7) the timer's write costs that instead of send_us: client 0's write
  // leaves at 117, client 1's at 124.
  cost.client.held_write_us = CostDist::Constant(7);
  EXPECT_EQ(HeldArrivals(cost), (std::vector<int64_t>{122, 129}));
}

// When client 0's GET and client 1's 1 us sleep resume them, with client 2 only taking its start
// (one process; timers and replies 10 us each, sends free; the node takes 5, the wire 5).
std::pair<int64_t, int64_t> ReplyAndTimer(bool client_passes) {
  CostModel cost = OneProcessPasses(5, 0, 10, 0);
  cost.client.timer_us = CostDist::Constant(10);
  cost.loop.client_passes = client_passes;
  Simulator sim(CostConfig(3, cost));
  int64_t got = 0, slept = 0;
  auto sleeper = [&](Env& env) -> Task<void> {
    co_await env.SleepUs(1);
    slept = sim.now_us();
  };
  auto idle = [](Env&) -> Task<void> { co_return; };
  sim.StartClient(0, Gets(sim.env(0), 1, &got, sim));
  sim.StartClient(1, sleeper(sim.env(1)));
  sim.StartClient(2, idle(sim.env(2)));
  EXPECT_TRUE(RunOk(sim));
  return {got, slept};
}

TEST(SimCosts, AClientPassTakesRepliesBeforeTimersAndWritesEachHandlersSends) {
  // Events: the three starts take the CPU 0-10, 10-20, 20-30 as they arrive; client 0's GET,
  // sent at 10, queues behind them and leaves at 30 (node 35-40, back at 45); client 1's timer,
  // due at 21, runs 30-40; the reply 45-55.
  EXPECT_EQ(ReplyAndTimer(false), (std::pair<int64_t, int64_t>{55, 40}));
  // Passes: the first pass takes the three starts; client 0's GET leaves when its handler ends
  // at 10 (node 15-20, back at 25). The timer (due 21) and the reply (25) arrive during that
  // pass, so the next one takes them at 30, the reply first: 30-40, then the timer 40-50.
  EXPECT_EQ(ReplyAndTimer(true), (std::pair<int64_t, int64_t>{40, 50}));
}

// When client 0's GET resumes it while client 1, woken at 119, writes its own GET (one process,
// every message held 100 us; the held reply's callback at held_callback_us and its read at
// held_read_us when given).
int64_t HeldReplyResumes(bool client_passes, double held_callback_us = 0, double held_read_us = 0) {
  CostModel cost = OneProcessPasses(6, 3, 4, 1);
  cost.client.hold_us = CostDist::Constant(2);
  if (held_callback_us > 0) cost.client.held_callback_us = CostDist::Constant(held_callback_us);
  if (held_read_us > 0) cost.client.held_read_us = CostDist::Constant(held_read_us);
  cost.loop.client_passes = client_passes;
  Simulator sim(CostConfig(2, cost, 100));
  int64_t got = 0, other = 0;
  auto late_get = [&](Env& env) -> Task<void> {
    co_await env.SleepUs(114);
    co_await env.Send(0, Command::Of("GET", "k"));
    other = sim.now_us();
  };
  sim.StartClient(0, Gets(sim.env(0), 1, &got, sim));
  sim.StartClient(1, late_get(sim.env(1)));
  EXPECT_TRUE(RunOk(sim));
  return got;
}

TEST(SimCosts, UnderClientPassesAHeldReplyIsReadBeforeItsHold) {
  // Client 0's GET leaves at 5 (send 3 + hold 2), reaches the node at 110 and its reply leaves
  // at 116, on the wire until 121. Client 1 wakes at 119 and writes its GET until 124.
  // Events: the reply arrives held, at 221, and costs reply + hold: 227.
  EXPECT_EQ(HeldReplyResumes(false), 227);
  // Passes: the reply reaches the socket at 121, is read once the CPU is free (124) at hold_us
  // (2), its hold ends at 226 and the pass then resumes the caller at reply_us (4): 230.
  EXPECT_EQ(HeldReplyResumes(true), 230);
}

TEST(SimCosts, UnderClientPassesAHeldReplysCallbackCostsHeldCallbackUsWhereTheProfileHasIt) {
  // As above, but the hold's end at 226 resumes the caller at held_callback_us (1): 227.
  EXPECT_EQ(HeldReplyResumes(true, 1), 227);
}

TEST(SimCosts, UnderClientPassesAHeldReplysReadCostsHeldReadUsWhereTheProfileHasIt) {
  // The read at 124 takes held_read_us (5) instead of hold_us (2): the hold ends at 229, the
  // callback (reply_us, 4) resumes the caller at 233; with held_callback_us (1) too, at 230.
  EXPECT_EQ(HeldReplyResumes(true, 0, 5), 233);
  EXPECT_EQ(HeldReplyResumes(true, 1, 5), 230);
}

// When a client's second GET, sent `sleep_us` after its first one's reply, resumes it (one
// process, the client in passes; a command 5, send 3, reply 4; cold connections off or after
// 500 us without a read, a cold write 7 and a cold read 11).
int64_t SecondGetDone(int64_t sleep_us, bool cold) {
  CostModel cost = OneProcessPasses(5, 3, 4, 0);
  cost.loop.client_passes = true;
  if (cold) {
    cost.client.cold_after_ms = 0.5;
    cost.client.cold_write_us = CostDist::Constant(7);
    cost.client.cold_read_us = CostDist::Constant(11);
  }
  Simulator sim(CostConfig(1, cost));
  int64_t done = 0;
  auto twice = [&](Env& env) -> Task<void> {
    co_await env.Send(0, Command::Of("GET", "k"));
    co_await env.SleepUs(sleep_us);
    co_await env.Send(0, Command::Of("GET", "k"));
    done = sim.now_us();
  };
  sim.StartClient(0, twice(sim.env(0)));
  EXPECT_TRUE(RunOk(sim));
  return done;
}

TEST(SimCosts, UnderClientPassesAColdConnectionPaysOnItsNextWriteAndRead) {
  // 1000 us after its last read the second GET's write and read are cold: 7 + 11 later. The
  // first GET, at the run's start, is not; nor is the second 100 us after the first's reply.
  EXPECT_EQ(SecondGetDone(1000, true) - SecondGetDone(1000, false), 18);
  EXPECT_EQ(SecondGetDone(100, true), SecondGetDone(100, false));
  EXPECT_GT(SecondGetDone(100, false), 100);
}

TEST(SimCosts, UnderClientPassesAWakeUpsCpuIsSpentWhenItsPassIsDone) {
  // One process; a timer costs 10 us, a wake-up from idle 40 us of CPU. The first pass (at 0,
  // from idle) runs the four clients' starts one after the other: 0-10, 10-20, 20-30, 30-40;
  // the wake-up's CPU comes after them (40-80), so client 3's 1 us sleep, due at 41, waits for
  // the next pass, at 80, and resumes it at 90. (Spent after the first handler instead, it
  // would have given 10, 60, 70, 91.)
  CostModel cost = OneProcessPasses(5, 0, 10, 0);
  cost.client.timer_us = CostDist::Constant(10);
  cost.client.wake_cpu_us = CostDist::Constant(40);
  cost.loop.client_passes = true;
  Simulator sim(CostConfig(4, cost));
  std::vector<int64_t> at(4, -1);
  auto mark = [&](Env& env, int i, int64_t sleep_us) -> Task<void> {
    if (sleep_us > 0) co_await env.SleepUs(sleep_us);
    at[static_cast<size_t>(i)] = sim.now_us();
  };
  for (int i = 0; i < 4; ++i) sim.StartClient(i, mark(sim.env(i), i, i == 3 ? 1 : 0));
  EXPECT_TRUE(RunOk(sim));
  EXPECT_EQ(at, (std::vector<int64_t>{10, 20, 30, 90}));
}

// Under client passes, with a timer's wake-up 40 us late after 1 us of idling and 50 us late
// after 2 us or more, and one process: when client 0's GET resumes it, and when client 1's sleep
// of `sleep_us` (0: none) does.
std::pair<int64_t, int64_t> GetBesideASleep(bool socket_wakes, int64_t sleep_us) {
  CostModel cost = OneProcessPasses(6, 3, 4, 1);
  cost.loop.client_passes = true;
  cost.loop.socket_wakes = socket_wakes;
  cost.client.wake_after_idle = {{1, CostDist::Constant(40)}, {2, CostDist::Constant(50)}};
  Simulator sim(CostConfig(2, cost));
  int64_t got = 0, slept = -1;
  auto sleeper = [&](Env& env) -> Task<void> {
    if (sleep_us == 0) co_return;
    co_await env.SleepUs(sleep_us);
    slept = sim.now_us();
  };
  sim.StartClient(0, Gets(sim.env(0), 1, &got, sim));
  sim.StartClient(1, sleeper(sim.env(1)));
  EXPECT_TRUE(RunOk(sim));
  return {got, slept};
}

TEST(SimCosts, UnderSocketWakesAReplyWakesAnIdleClientAsANodesPollWakes) {
  // The first pass (at 0) runs both starts; the GET leaves at 3 (send), reaches the node at 8,
  // which idled 8 us and polls 50 - 40 = 10 late, at 18: command 6 (its reply written at its
  // end: 24), back at 29. The process has idled since 3 (26 us): a timer's wake-up is 50 late,
  // so the reply resumes the caller at 29 + 50 + 4 = 83; a socket's is 50 - 40 = 10: 43.
  EXPECT_EQ(GetBesideASleep(false, 0).first, 83);
  EXPECT_EQ(GetBesideASleep(true, 0).first, 43);
}

TEST(SimCosts, UnderSocketWakesAReplyBringsForwardAPassWaitingForALateTimer) {
  // Client 1's 10 us sleep begins after client 0's send (3) and falls due at 13 with the process
  // idle since 3: its pass is queued 50 late, at 63. Timer wake-ups: the reply (back at 29)
  // joins that pass, read first (67), then the timer runs (67). Socket wake-ups: the reply wakes
  // the process after 26 us of idling, 10 late, at 39: that pass reads it (43) and runs the due
  // timer after it (43); the pass queued for 63 is dropped.
  EXPECT_EQ(GetBesideASleep(false, 10), (std::pair<int64_t, int64_t>{67, 67}));
  EXPECT_EQ(GetBesideASleep(true, 10), (std::pair<int64_t, int64_t>{43, 43}));
}

// When a subscriber resumes with a message published at 10 ms, under `cost`.
int64_t MessageResumesAt(const CostModel& cost) {
  Simulator sim(CostConfig(2, cost));
  int64_t got_at = -1;
  auto sub = [&](Env& env) -> Task<void> {
    if (co_await env.Subscribe(0, "ch") && co_await env.WaitMessage(1'000'000)) got_at = sim.now_us();
  };
  auto pub = [&](Env& env) -> Task<void> {
    co_await env.SleepUs(10'000);
    co_await env.Send(0, Command::Of("PUBLISH", "ch", "m"));
  };
  sim.StartClient(0, sub(sim.env(0)));
  sim.StartClient(1, pub(sim.env(1)));
  EXPECT_TRUE(RunOk(sim));
  return got_at;
}

TEST(SimCosts, AMessageCostsMessageUsWhereTheProfileHasIt) {
  CostModel cost = ConstantCosts(6, 0, 0, 3, 10);
  const int64_t as_reply = MessageResumesAt(cost);
  ASSERT_GT(as_reply, 10'000);
  cost.client.message_us = CostDist::Constant(20);
  EXPECT_EQ(MessageResumesAt(cost), as_reply + 17);  // 20 instead of reply_us' 3
}

// The reports of a busy run: when and what each client saw, and the node's commands.
std::string Trace(const CostModel& cost, uint64_t seed) {
  SimConfig c = CostConfig(20, cost, 50);
  c.seed = seed;
  c.net.dist = NetModel::Dist::kUniform;
  Simulator sim(c);
  std::string out;
  sim.set_command_observer([&out](int64_t t, int client, int, const Command& cmd, const Reply&) {
    out += std::to_string(t) + ":" + std::to_string(client) + ":" + cmd.Name() + " ";
  });
  std::vector<int64_t> done(20);
  for (int i = 0; i < 20; ++i) sim.StartClient(i, Gets(sim.env(i), 30, &done[static_cast<size_t>(i)], sim));
  EXPECT_TRUE(RunOk(sim));
  for (int64_t d : done) out += std::to_string(d) + " ";
  return out;
}

CostModel Drawn() {
  CostModel m = ConstantCosts(6, 3, 3, 3, 5, Placement::kOneProcess);
  m.node.command_us = CostDist{{{0, 5}, {0.9, 6}, {1, 10}}};
  m.node.wake_us = CostDist{{{0, 0}, {0.95, 3.5}, {1, 30}}};
  m.one_way_us = CostDist{{{0, 3.6}, {0.95, 4.7}, {1, 50}}};
  return m;
}

TEST(SimCosts, SameSeedSameRunWithDrawnCosts) {
  EXPECT_EQ(Trace(Drawn(), 7), Trace(Drawn(), 7));
  EXPECT_NE(Trace(Drawn(), 7), Trace(Drawn(), 8));
}

}  // namespace
}  // namespace locklab::sim
