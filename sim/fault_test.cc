// The world model both runtimes share: the one fault check, the records faults write, and the
// network's matchers and triggers.
#include "sim/fault.h"
#include "sim/net_model.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace locklab::sim {
namespace {

using K = FaultAction::Kind;

FaultAction Make(K kind, int target, int64_t duration_us = 0) {
  FaultAction f;
  f.kind = kind;
  f.target = target;
  f.duration_us = duration_us;
  return f;
}

TEST(ValidateFault, OneCheckForEveryKind) {
  const FaultWorld world{2, 3, false};
  EXPECT_TRUE(ValidateFault(Make(K::kPauseClient, 1, 10), world).ok());
  EXPECT_EQ(ValidateFault(Make(K::kPauseClient, 2, 10), world).message(),
            "fault pause_client: target 2 out of range (2 clients)");
  EXPECT_EQ(ValidateFault(Make(K::kCrashNode, 3), world).message(), "fault crash_node: target 3 out of range (3 nodes)");
  FaultAction cut = Make(K::kPartition, 0, 10);
  cut.node = 3;
  EXPECT_EQ(ValidateFault(cut, world).message(), "fault partition: node 3 out of range (3 nodes)");
  EXPECT_EQ(ValidateFault(Make(K::kPauseNode, 0, -1), world).message(), "fault pause_node: negative time");
  EXPECT_EQ(ValidateFault(Make(K::kFailover, 0), world).message(), "fault failover needs replica=true (--replica)");
  EXPECT_EQ(ValidateFault(Make(K::kFailover, 1), FaultWorld{2, 3, true}).message(),
            "fault failover: only node 0 has a replica");
  EXPECT_EQ(ValidateFault(Make(K::kDelayMessage, 0, 5), world).message(),
            "fault delay_message needs command=NAME and occurrence >= 1");
  FaultAction on_send = Make(K::kCrashNode, 0);
  on_send.on_send = "GET";
  EXPECT_EQ(ValidateFault(on_send, world).message(),
            "fault crash_node: on_send applies only to pause_client and crash_client");
  on_send.kind = K::kPauseClient;
  on_send.occurrence = 0;
  EXPECT_EQ(ValidateFault(on_send, world).message(), "fault pause_client: on_send needs occurrence >= 1");
  EXPECT_TRUE(ValidateFault(on_send, world).invalid());
}

TEST(FaultRecords, WhatEachFaultWritesIntoTheHistory) {
  FaultAction pause = Make(K::kPauseClient, 1, 1'500'000);
  pause.on_send = "get";
  const FaultRecord p = FaultStartRecord(pause);
  EXPECT_EQ(p.client, 1);
  EXPECT_EQ(p.type, Ev::kPauseStart);
  EXPECT_EQ(p.value, 1'500'000);
  EXPECT_EQ(p.detail, "pause 1500 ms on its 1st GET");
  const FaultRecord restart = FaultStartRecord(Make(K::kRestartNode, 2));
  EXPECT_EQ(restart.client, -1);
  EXPECT_EQ(restart.value, 0);  // the same on both runtimes
  EXPECT_EQ(restart.detail, "node 2 restarts empty");
  FaultAction jump = Make(K::kClientClockJump, 0);
  jump.delta_us = -2'000'000;
  EXPECT_EQ(FaultStartRecord(jump).value, -2'000'000);
  EXPECT_EQ(FaultStartRecord(jump).detail, "wall clock jumps -2000 ms");
  EXPECT_EQ(ResumeClientRecord(1).type, Ev::kPauseEnd);
  EXPECT_EQ(ResumeClientRecord(1).value, 0);
}

TEST(Network, DelayMatchersAndTriggersCountPerClientAndFireOnce) {
  Network net(NetModel{}, 1);
  FaultAction delay = Make(K::kDelayMessage, 0, 7'000);
  delay.command = "get";
  delay.occurrence = 2;
  ASSERT_TRUE(net.AddDelay(delay));
  int matched = -1;
  EXPECT_EQ(net.ExtraDelayUs(0, "GET", &matched), 0);
  EXPECT_EQ(net.ExtraDelayUs(1, "GET", &matched), 0);  // another client's GET does not count
  EXPECT_EQ(net.ExtraDelayUs(0, "GET", &matched), 7'000);
  EXPECT_EQ(matched, 0);
  EXPECT_EQ(net.ExtraDelayUs(0, "GET", &matched), 0);

  FaultAction crash = Make(K::kCrashClient, 1, 99);
  crash.on_send = "*";
  crash.occurrence = 2;
  ASSERT_TRUE(net.AddTrigger(crash));
  std::vector<FaultAction> fired;
  net.FireTriggers(1, "SET", &fired);
  EXPECT_TRUE(fired.empty());
  net.FireTriggers(1, "compare_and_delete", &fired);
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_EQ(fired[0].duration_us, 0);  // a crash records no duration
  net.FireTriggers(1, "SET", &fired);
  EXPECT_EQ(fired.size(), 1u);
}

TEST(Network, PartitionsAreHalfOpenAndDrawsComeDelayThenLoss) {
  Network net(NetModel{NetModel::Dist::kUniform, 100, 0.5}, 7);
  ASSERT_TRUE(net.Cut(0, 1, 1'000, 500));
  EXPECT_FALSE(net.Partitioned(0, 1, 999));
  EXPECT_TRUE(net.Partitioned(0, 1, 1'000));
  EXPECT_FALSE(net.Partitioned(0, 1, 1'500));
  EXPECT_FALSE(net.Partitioned(1, 1, 1'200));
  // The same stream drawn by hand: one delay, then one loss draw, per hop.
  Rng rng(7 * 2 + 1);
  for (int i = 0; i < 100; ++i) {
    const Network::Hop hop = net.Draw(0, 0, 0);
    EXPECT_EQ(hop.delay_us, DrawDelayUs(net.model(), rng));
    EXPECT_EQ(hop.lost, rng.Chance(0.5));
    EXPECT_FALSE(hop.partitioned);
  }
}

}  // namespace
}  // namespace locklab::sim
