// The protected resource's fencing checks (reads and writes), and a fenced critical section
// run end to end.
#include "harness/run/workload.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace locklab
