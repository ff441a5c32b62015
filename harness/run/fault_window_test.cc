// A planned fault with a time window (jitter_ms): written and read in JSON and flags only when
// set, refused where it has no meaning, and drawn from the seed: the same seed puts the fault at
// the same instant inside the window, other seeds elsewhere in it.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "harness/run/config.h"
#include "harness/run/run_spec.h"
#include "harness/testing/test_specs.h"

namespace locklab {
namespace {

using nlohmann::json;

TEST(FaultWindow, RoundTripsThroughJsonAndFlagOnlyWhenSet) {
  FaultAction a;
  std::string error;
  ASSERT_TRUE(Take(ParseFaultFlag("pause_client:at_ms=100,jitter_ms=50,target=1,duration_ms=30"), &a, &error))
      << error;
  EXPECT_EQ(a.at_us, 100'000);
  EXPECT_EQ(a.jitter_us, 50'000);
  EXPECT_EQ(FaultFlag(a), "pause_client:at_ms=100,jitter_ms=50,target=1,duration_ms=30");
  const std::string want = R"({"at_ms":100,"duration_ms":30,"jitter_ms":50,"kind":"pause_client","target":1})";
  EXPECT_EQ(ToJson(a).dump(), want);
  FaultAction back;
  ASSERT_TRUE(Take(FaultActionFromJson(json::parse(want), "p"), &back, &error)) << error;
  EXPECT_EQ(back.jitter_us, 50'000);
  a.jitter_us = 0;
  EXPECT_EQ(FaultFlag(a), "pause_client:at_ms=100,target=1,duration_ms=30");
}

TEST(FaultWindow, IsRefusedWhereTheFaultHasNoTime) {
  RunSpec s = SmallSpec("token");
  std::string error;
  FaultAction a;
  ASSERT_TRUE(Take(ParseFaultFlag("delay_message:target=0,command=SET,occurrence=1,duration_ms=5,jitter_ms=10"), &a,
                   &error));
  s.faults.plan = {a};
  EXPECT_FALSE(ResolveSpec(&s).ok(&error));
  EXPECT_EQ(error, "fault delay_message: jitter_ms applies only to a fault planned at a time (at_ms)");
  ASSERT_TRUE(Take(ParseFaultFlag("pause_client:target=0,on_send=GET,occurrence=1,duration_ms=5,jitter_ms=10"), &a,
                   &error));
  s.faults.plan = {a};
  EXPECT_FALSE(ResolveSpec(&s).ok(&error));
  EXPECT_EQ(error, "fault pause_client: jitter_ms applies only to a fault planned at a time (at_ms)");
  ASSERT_TRUE(Take(ParseFaultFlag("pause_client:at_ms=5,jitter_ms=-1,target=0,duration_ms=5"), &a, &error));
  s.faults.plan = {a};
  EXPECT_FALSE(ResolveSpec(&s).ok(&error));
  EXPECT_EQ(error, "fault pause_client: negative time");
}

// When client 0's pause started in a simulator run with the window [100, 150] ms.
int64_t PauseStartUs(uint64_t seed) {
  RunSpec s = SmallSpec("token");
  s.seed = seed;
  FaultAction a;
  a.kind = FaultAction::Kind::kPauseClient;
  a.at_us = 100'000;
  a.jitter_us = 50'000;
  a.duration_us = 5'000;
  s.faults.plan = {a};
  std::string error;
  EXPECT_TRUE(ResolveSpec(&s).ok(&error)) << error;
  const RunResult r = RunOne(s, false, /*keep_events=*/true);
  EXPECT_TRUE(r.completed) << r.error;
  for (const Event& e : r.events)
    if (e.type == Ev::kPauseStart && e.client == 0) return e.t_us;
  ADD_FAILURE() << "no pause in the history of seed " << seed;
  return -1;
}

TEST(FaultWindow, TheSeedDrawsTheInstantInsideTheWindow) {
  std::set<int64_t> starts;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    const int64_t t = PauseStartUs(seed);
    EXPECT_GE(t, 100'000) << "seed " << seed;
    EXPECT_LE(t, 150'000) << "seed " << seed;
    EXPECT_EQ(PauseStartUs(seed), t) << "seed " << seed << " is not reproducible";
    starts.insert(t);
  }
  EXPECT_GE(starts.size(), 6u);  // eight draws from 50,001 instants: nearly all different
}

// Faults with the same window move together (one draw): the three node clock jumps of a Redlock
// run land at one instant, a fault with another window elsewhere.
TEST(FaultWindow, FaultsWithTheSameWindowMoveTogether) {
  std::set<int64_t> apart;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    RunSpec s = SmallSpec("redlock");
    s.seed = seed;
    for (int node = 0; node < 3; ++node) {
      FaultAction a;
      a.kind = FaultAction::Kind::kNodeClockJump;
      a.target = node;
      a.at_us = 100'000;
      a.jitter_us = 50'000;
      a.delta_us = 1'000;
      s.faults.plan.push_back(a);
    }
    FaultAction pause;
    pause.kind = FaultAction::Kind::kPauseClient;
    pause.at_us = 100'000;
    pause.jitter_us = 60'000;
    pause.duration_us = 1'000;
    s.faults.plan.push_back(pause);
    std::string error;
    ASSERT_TRUE(ResolveSpec(&s).ok(&error)) << error;
    const RunResult r = RunOne(s, false, /*keep_events=*/true);
    ASSERT_TRUE(r.completed) << r.error;
    std::set<int64_t> jumps;
    int64_t pause_us = -1;
    for (const Event& e : r.events) {
      if (e.type == Ev::kFault && e.client < 0) jumps.insert(e.t_us);
      if (e.type == Ev::kPauseStart) pause_us = e.t_us;
    }
    ASSERT_EQ(jumps.size(), 1u) << "seed " << seed << ": the three jumps at different times";
    apart.insert(*jumps.begin() - pause_us);
  }
  EXPECT_GE(apart.size(), 3u);  // the pause's own window: drawn apart from the jumps
}

}  // namespace
}  // namespace locklab
