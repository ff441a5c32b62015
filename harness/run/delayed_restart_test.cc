// Redlock's delayed restart: restarts moved to no sooner than the minimum down time after their
// node went down, a restart of a node that is up taking it down first, and the field written
// into a config only when set.
#include "harness/run/delayed_restart.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/run/config.h"
#include "harness/run/run_spec.h"
#include "harness/testing/test_specs.h"

namespace locklab {
namespace {

using K = FaultAction::Kind;

FaultAction Node(K kind, int node, int64_t at_ms) {
  FaultAction f;
  f.kind = kind;
  f.target = node;
  f.at_us = at_ms * 1000;
  return f;
}

std::string Text(const std::vector<FaultAction>& plan) {
  std::string out;
  for (const FaultAction& f : plan)
    out += std::string(f.kind == K::kCrashNode ? "crash" : f.kind == K::kRestartNode ? "restart" : "other") + "(" +
           std::to_string(f.target) + ")@" + std::to_string(f.at_us / 1000) + " ";
  return out;
}

TEST(DelayRestarts, MovesEachRestartToTheMinimumDownTimeAfterItsNodeWentDown) {
  const std::vector<FaultAction> plan = {Node(K::kCrashNode, 2, 200), Node(K::kRestartNode, 2, 201),
                                         Node(K::kRestartNode, 1, 500), Node(K::kCrashNode, 3, 100),
                                         Node(K::kRestartNode, 3, 5000)};
  EXPECT_EQ(Text(DelayRestarts(plan, 0)), Text(plan));
  EXPECT_EQ(Text(DelayRestarts(plan, 2'100'000)),
            "crash(2)@200 restart(2)@2300 crash(1)@500 restart(1)@2600 crash(3)@100 restart(3)@5000 ");
}

// A crash while the node is still down (its restart moved past it) and that period's second
// restart are dropped: the node comes back once, min_down after it first went down, and keeps
// what it was given since.
TEST(DelayRestarts, FaultsInsideAMovedDownPeriodAreDropped) {
  const std::vector<FaultAction> plan = {Node(K::kCrashNode, 3, 540), Node(K::kRestartNode, 3, 600),
                                         Node(K::kCrashNode, 3, 1344), Node(K::kRestartNode, 3, 1400)};
  EXPECT_EQ(Text(DelayRestarts(plan, 2'100'000)), "crash(3)@540 restart(3)@2640 ");
}

TEST(DelayRestarts, ANodeDownAgainAfterItsRestartWaitsAgain) {
  const std::vector<FaultAction> plan = {Node(K::kCrashNode, 0, 100), Node(K::kRestartNode, 0, 150),
                                         Node(K::kCrashNode, 0, 3000), Node(K::kRestartNode, 0, 3001)};
  EXPECT_EQ(Text(DelayRestarts(plan, 1'000'000)), "crash(0)@100 restart(0)@1100 crash(0)@3000 restart(0)@4000 ");
}

TEST(NodeMinDown, IsInTheConfigOnlyWhenSetAndRefusedWhenNegative) {
  RunSpec s = SmallSpec("redlock");
  EXPECT_FALSE(ToJson(s).contains("node_min_down_ms"));
  s.node_min_down_ms = 2100;
  EXPECT_EQ(ToJson(s)["node_min_down_ms"], 2100);
  std::string error;
  EXPECT_TRUE(ResolveSpec(&s).ok(&error)) << error;
  s.node_min_down_ms = -1;
  EXPECT_FALSE(ResolveSpec(&s).ok(&error));
  EXPECT_EQ(error, "node_min_down_ms must be in [0, 86400000]");
}

}  // namespace
}  // namespace locklab
