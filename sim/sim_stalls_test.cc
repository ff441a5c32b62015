// Machine stalls (sim/cost_model.h, StallCosts): they only ever make work later, by no more than
// the stalls could add, the same seed gives the same run, and a profile without them is
// untouched.
#include <gtest/gtest.h>

#include "harness/testing/sim_test_util.h"
#include "sim/simulator.h"

namespace locklab::sim {
namespace {

// One client, one node, every step a constant: a GET takes send 3 + path 7 + wake 5 + command 6
// + path 6 + reply 4 = 31 µs (sim_costs_test.cc's first test).
CostModel Constants() {
  CostModel m;
  m.name = "test";
  m.node.command_us = CostDist::Constant(6);
  m.node.wake_us = CostDist::Constant(5);
  m.client.placement = ClientCosts::Placement::kProcessPerClient;
  m.client.send_us = CostDist::Constant(3);
  m.client.reply_us = CostDist::Constant(4);
  m.one_way_us = CostDist::Constant(10);
  return m;
}

Task<void> Gets(Env& env, int n, int64_t* done_us, Simulator& sim) {
  for (int i = 0; i < n; ++i) co_await env.Send(0, Command::Of("GET", "k"));
  *done_us = sim.now_us();
}

// When 200 GETs one after the other are done, under `cost` and `seed`.
int64_t TwoHundredGets(const CostModel& cost, uint64_t seed) {
  SimConfig c = Config(1, 1, 10'000'000);
  c.net.mean_us = 0;  // no injected delay: only the costs
  c.cost = cost;
  c.seed = seed;
  Simulator sim(c);
  int64_t done = 0;
  sim.StartClient(0, Gets(sim.env(0), 200, &done, sim));
  EXPECT_TRUE(RunOk(sim));
  return done;
}

TEST(SimStalls, NoneWithoutARate) {
  CostModel cost = Constants();
  EXPECT_EQ(TwoHundredGets(cost, 1), 200 * 31);
  cost.machine.length_us = CostDist::Constant(50);  // a length but no rate: none
  EXPECT_EQ(TwoHundredGets(cost, 1), 200 * 31);
}

TEST(SimStalls, MakeWorkLaterByAtMostTheirLengths) {
  CostModel cost = Constants();
  cost.machine.per_s = 2000;  // one every 500 µs per CPU on average: about 25 each in 6.2 ms
  cost.machine.length_us = CostDist::Constant(50);
  const int64_t done = TwoHundredGets(cost, 1);
  EXPECT_GT(done, 200 * 31);
  // Two CPUs (the client's, the node's), at most ~30 stalls each in the ~8 ms the run can last
  // (Poisson, mean 16: 30 is far in the tail), 50 µs apiece.
  EXPECT_LE(done, 200 * 31 + 2 * 30 * 50);
  EXPECT_EQ(TwoHundredGets(cost, 1), done);  // the same seed, the same run
  bool seed_matters = false;
  for (uint64_t seed = 2; seed < 6 && !seed_matters; ++seed) seed_matters = TwoHundredGets(cost, seed) != done;
  EXPECT_TRUE(seed_matters);
}

TEST(SimStalls, LongerStallsCostMore) {
  CostModel short_stalls = Constants();
  short_stalls.machine.per_s = 2000;
  short_stalls.machine.length_us = CostDist::Constant(20);
  CostModel long_stalls = short_stalls;
  long_stalls.machine.length_us = CostDist::Constant(200);
  // The same stall times (the stream draws a gap and a length per stall either way).
  EXPECT_LT(TwoHundredGets(short_stalls, 3), TwoHundredGets(long_stalls, 3));
}

}  // namespace
}  // namespace locklab::sim
