// The protected resource's fencing checks (reads and writes), and a fenced critical section
// run end to end.
#include "harness/run/workload.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "harness/report/report.h"
#include "harness/run/config.h"
#include "harness/run/run_spec.h"

namespace locklab {
namespace {

TEST(Resource, UnfencedAccessIsNeverRefused) {
  Resource r;
  int64_t v = -7;
  EXPECT_TRUE(r.Read(-1, &v));
  EXPECT_EQ(v, 0);
  EXPECT_TRUE(r.Write(1, -1));
  EXPECT_EQ(r.max_fence, -1);
  EXPECT_TRUE(r.Write(5, 3));
  EXPECT_TRUE(r.Read(-1, &v));  // fence -1: the lock has no fences, nothing to check
  EXPECT_TRUE(r.Write(6, -1));
  EXPECT_EQ(r.value, 6);
}

TEST(Resource, ReadWithAStaleFenceIsRefusedAndLeavesTheValueAlone) {
  Resource r;
  r.value = 10;
  int64_t v = -1;
  EXPECT_TRUE(r.Read(4, &v));
  EXPECT_EQ(v, 10);
  EXPECT_EQ(r.max_fence, 4);  // an accepted read raises the highest fence
  v = -1;
  EXPECT_FALSE(r.Read(3, &v));
  EXPECT_EQ(v, -1);
  EXPECT_TRUE(r.Read(4, &v));  // the same fence again: the same holder
  EXPECT_EQ(r.max_fence, 4);
}

// Two overlapping holders, A (fence 1) and B (fence 2), interleave read, read, write, write:
// A's write would overwrite B's read basis with the same value (a lost update) had the read not
// raised the fence; it is refused and only B's increment lands.
TEST(Resource, InterleavedFencedReadReadWriteWriteLosesNoUpdate) {
  Resource r;
  int64_t a = 0, b = 0;
  ASSERT_TRUE(r.Read(1, &a));
  ASSERT_TRUE(r.Read(2, &b));
  EXPECT_FALSE(r.Write(a + 1, 1));
  EXPECT_TRUE(r.Write(b + 1, 2));
  EXPECT_EQ(r.value, 1);  // one acknowledged increment, and the counter shows it

  // The other interleaving: A reads, B reads, B writes, A writes.
  Resource q;
  ASSERT_TRUE(q.Read(1, &a));
  ASSERT_TRUE(q.Read(2, &b));
  EXPECT_TRUE(q.Write(b + 1, 2));
  EXPECT_FALSE(q.Write(a + 1, 1));
  EXPECT_EQ(q.value, 1);
}

// End to end on the simulator: client 0 reads, freezes past its TTL, client 1 takes the lock
// (fence 2) and reads, client 0 wakes and writes while client 1 still thinks: read, read,
// write, write. With reads unchecked both writes landed (a lost update); now client 0's write
// is refused.
TEST(FencedCriticalSection, OverlappingHoldersLoseNoUpdate) {
  RunSpec s;
  s.algorithm = "fencing";
  s.clients = 2;
  s.requests = 2;
  s.ttl_ms = 300;
  s.hold_ms = 200;
  s.seed = 3;
  FaultAction pause;
  pause.kind = FaultAction::Kind::kPauseClient;
  pause.at_us = 20'000;  // client 0 is inside its first critical section, before its write
  pause.target = 0;
  pause.duration_us = 400'000;
  s.faults.plan.push_back(pause);
  std::string err;
  ASSERT_TRUE(ResolveSpec(&s).ok(&err)) << err;
  RunResult r = RunOne(s, false);
  ASSERT_TRUE(r.completed) << r.error;
  EXPECT_EQ(r.check.safety.violations, 1);  // the holders did overlap
  EXPECT_EQ(r.check.resource.writes_accepted, 1);
  EXPECT_EQ(r.check.resource.stale_writes_rejected, 1);
  EXPECT_EQ(r.check.resource.stale_writes_accepted, 0);
  EXPECT_EQ(r.check.resource.lost_updates, 0);
  EXPECT_EQ(r.counter_final, 1);
}

// Holds of random length (RunSpec::hold_spread_ms): with a spread every hold the history records
// lies in [hold - spread, hold + spread] (plus the critical section's costs) and they differ.
// Without one nothing more is drawn, so a run keeps its bytes.
std::vector<int64_t> HoldsUs(int64_t spread_ms) {
  RunSpec s;
  s.clients = 1;
  s.requests = 40;
  s.hold_ms = 20;
  s.hold_spread_ms = spread_ms;
  s.trace = "none";
  std::string err;
  EXPECT_TRUE(ResolveSpec(&s).ok(&err)) << err;
  RunResult r = RunOne(s, false, /*keep_events=*/true);
  EXPECT_TRUE(r.completed) << r.error;
  std::vector<int64_t> holds;
  int64_t enter_us = -1;
  for (const Event& e : r.events) {
    if (e.type == Ev::kEnter) enter_us = e.t_us;
    if (e.type == Ev::kExit && enter_us >= 0) holds.push_back(e.t_us - enter_us);
  }
  return holds;
}

TEST(HoldSpread, EachHoldIsDrawnWithinTheSpread) {
  // Without a spread every hold is the 20 ms sleep plus the read's and the write's costs (a
  // hundred microseconds or so, drawn by the cost model).
  const std::vector<int64_t> fixed = HoldsUs(0);
  ASSERT_EQ(fixed.size(), 40u);
  const auto [fixed_lo, fixed_hi] = std::minmax_element(fixed.begin(), fixed.end());
  EXPECT_GE(*fixed_lo, 20'000);
  EXPECT_LT(*fixed_hi - *fixed_lo, 1'000);
  const int64_t costs_us = *fixed_hi - 20'000;
  const std::vector<int64_t> spread = HoldsUs(10);
  ASSERT_EQ(spread.size(), 40u);
  const auto [lo, hi] = std::minmax_element(spread.begin(), spread.end());
  EXPECT_GE(*lo, 10'000);
  EXPECT_LE(*hi, 30'000 + costs_us + 1'000);
  EXPECT_GT(*hi - *lo, 10'000);  // 40 uniform draws over 20 ms cover more than half of it
}

TEST(HoldSpread, IsInTheConfigOnlyWhenSetAndRefusedBeyondTheHold) {
  RunSpec s;
  EXPECT_FALSE(ToJson(s).contains("hold_spread_ms"));
  s.hold_spread_ms = 5;
  EXPECT_EQ(ToJson(s)["hold_spread_ms"], 5);
  RunSpec back;
  std::string err;
  ASSERT_TRUE(FromJson(ToJson(s), &back).ok(&err)) << err;
  EXPECT_EQ(back.hold_spread_ms, 5);
  EXPECT_NE(ReplayCommand(s).find("--hold-spread-ms 5"), std::string::npos);
  s.hold_spread_ms = s.hold_ms + 1;
  EXPECT_FALSE(ResolveSpec(&s).ok(&err));
  EXPECT_EQ(err, "hold_spread_ms must be in [0, hold_ms]");
  s.hold_spread_ms = -1;
  EXPECT_FALSE(ResolveSpec(&s).ok(&err));
}

}  // namespace
}  // namespace locklab
