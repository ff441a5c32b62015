// The checkers with several locks (CheckInput::lock_of_client): mutual exclusion, stale writes and
// stuck stretches are judged among the clients of each lock; naming one lock for every client is
// the same as naming none.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "harness/check/checkers.h"
#include "harness/run/run_spec.h"

namespace locklab {
namespace {

int64_t Us(double ms) { return static_cast<int64_t>(ms * 1000); }

// Events in time order (the tests write them so).
class Events {
 public:
  Events& At(double ms, int client, Ev type, int64_t value = 0) {
    h_.Add(Us(ms), client, type, value);
    return *this;
  }
  Events& Hold(int client, double enter_ms, double exit_ms) {
    return At(enter_ms, client, Ev::kEnter).At(exit_ms, client, Ev::kExit);
  }
  const History& history() const { return h_; }

 private:
  History h_;
};

CheckInput Locks(std::map<int, std::string> lock_of_client, double end_ms = 1000) {
  CheckInput in;
  in.end_us = Us(end_ms);
  in.lock_of_client = std::move(lock_of_client);
  return in;
}

// Client 0 holds 0..100 ms, client 1 holds 50..150 ms.
History TwoOverlapping() {
  Events e;
  e.At(0, 0, Ev::kAcquireStart).At(0, 0, Ev::kEnter).At(40, 1, Ev::kAcquireStart).At(50, 1, Ev::kEnter);
  e.At(100, 0, Ev::kExit).At(150, 1, Ev::kExit);
  return e.history();
}

TEST(CheckLocksTest, OverlapOnDifferentLocksIsNoViolation) {
  const SafetyResult r = CheckMutualExclusion(TwoOverlapping(), Locks({{0, "a"}, {1, "b"}}));
  EXPECT_EQ(r.violations, 0);
  EXPECT_EQ(r.max_concurrent_holders, 1);
  EXPECT_DOUBLE_EQ(r.overlap_ms_total, 0);
  EXPECT_TRUE(r.overlapping_pairs.empty());
  EXPECT_TRUE(r.examples.empty());
  // One named, the other on the shared lock "": different locks too.
  EXPECT_EQ(CheckMutualExclusion(TwoOverlapping(), Locks({{1, "b"}})).violations, 0);
}

TEST(CheckLocksTest, OverlapOnTheSameLockIsAViolation) {
  const SafetyResult r = CheckMutualExclusion(TwoOverlapping(), Locks({{0, "a"}, {1, "a"}}));
  EXPECT_EQ(r.violations, 1);
  EXPECT_EQ(r.max_concurrent_holders, 2);
  EXPECT_DOUBLE_EQ(r.overlap_ms_total, 50);
  ASSERT_EQ(r.overlapping_pairs.size(), 1u);
  EXPECT_EQ(r.overlapping_pairs[0], std::make_pair(0, 1));
  ASSERT_EQ(r.examples.size(), 1u);
  EXPECT_EQ(r.examples[0].lock, "a");
  EXPECT_EQ(r.examples[0].clients, (std::vector<int>{0, 1}));
  EXPECT_EQ(r.examples[0].start_us, Us(50));
}

TEST(CheckLocksTest, OneLockNamedForAllIsTheSameAsNoneNamed) {
  Events e;
  for (int i = 0; i < 6; ++i) e.At(i * 10, i % 3, Ev::kAcquireStart).At(i * 10 + 1, i % 3, Ev::kEnter);
  for (int i = 0; i < 6; ++i) e.At(100 + i * 10, i % 3, Ev::kWriteOk, i + 1).At(100 + i * 10, i % 3, Ev::kExit);
  CheckInput none = Locks({});
  none.counter_final = 4;
  CheckInput all = Locks({{0, "k"}, {1, "k"}, {2, "k"}});
  all.counter_final = 4;
  const CheckResult a = CheckAll(e.history(), none), b = CheckAll(e.history(), all);
  EXPECT_EQ(a.safety.violations, b.safety.violations);
  EXPECT_GT(a.safety.violations, 0);
  EXPECT_DOUBLE_EQ(a.safety.overlap_ms_total, b.safety.overlap_ms_total);
  EXPECT_EQ(a.safety.max_concurrent_holders, b.safety.max_concurrent_holders);
  EXPECT_EQ(a.safety.overlapping_pairs, b.safety.overlapping_pairs);
  ASSERT_EQ(a.safety.examples.size(), b.safety.examples.size());
  for (size_t i = 0; i < a.safety.examples.size(); ++i) {
    EXPECT_EQ(a.safety.examples[i].start_us, b.safety.examples[i].start_us);
    EXPECT_EQ(a.safety.examples[i].clients, b.safety.examples[i].clients);
    EXPECT_EQ(a.safety.examples[i].timeline.size(), b.safety.examples[i].timeline.size());
    EXPECT_EQ(a.safety.examples[i].lock, "");
    EXPECT_EQ(b.safety.examples[i].lock, "k");
  }
  EXPECT_EQ(a.resource.lost_updates, 2);  // 6 writes, the counter moved 4
  EXPECT_EQ(b.resource.lost_updates, a.resource.lost_updates);
  EXPECT_EQ(a.resource.stale_writes_accepted, b.resource.stale_writes_accepted);
  EXPECT_DOUBLE_EQ(a.liveness.stuck_ms_max, b.liveness.stuck_ms_max);
}

TEST(CheckLocksTest, ViolationsAreSummedOverLocksAndExamplesComeInTimeOrder) {
  Events e;
  // Lock "b" (clients 2, 3) overlaps first, 10..20 ms; lock "a" (clients 0, 1) at 30..60 ms.
  e.Hold(2, 0, 20).Hold(3, 10, 25).Hold(0, 30, 60).Hold(1, 40, 70);
  CheckInput in = Locks({{0, "a"}, {1, "a"}, {2, "b"}, {3, "b"}});
  const SafetyResult r = CheckMutualExclusion(e.history(), in);
  EXPECT_EQ(r.violations, 2);
  EXPECT_EQ(r.max_concurrent_holders, 2);
  EXPECT_DOUBLE_EQ(r.overlap_ms_total, 10 + 20);
  EXPECT_EQ(r.overlapping_pairs, (std::vector<std::pair<int, int>>{{0, 1}, {2, 3}}));
  ASSERT_EQ(r.examples.size(), 2u);
  EXPECT_EQ(r.examples[0].lock, "b");
  EXPECT_EQ(r.examples[1].lock, "a");
  // Capped over all locks: the earliest.
  in.max_examples = 1;
  const SafetyResult one = CheckMutualExclusion(e.history(), in);
  ASSERT_EQ(one.examples.size(), 1u);
  EXPECT_EQ(one.examples[0].lock, "b");
  EXPECT_EQ(one.violations, 2);
}

TEST(CheckLocksTest, StaleWritesAreJudgedAmongTheWritersLock) {
  Events e;
  // Client 1 enters after client 0 did, then client 0 writes: stale on one lock, not on two.
  e.At(0, 0, Ev::kEnter).At(10, 1, Ev::kEnter).At(20, 0, Ev::kWriteOk, 1).At(30, 1, Ev::kWriteOk, 2);
  EXPECT_EQ(CheckResource(e.history(), Locks({})).stale_writes_accepted, 1);
  EXPECT_EQ(CheckResource(e.history(), Locks({{0, "a"}, {1, "b"}})).stale_writes_accepted, 0);
}

TEST(CheckLocksTest, TheCounterIsNotJudgedAcrossLocks) {
  Events e;
  e.Hold(0, 0, 10).At(10, 0, Ev::kWriteOk, 1).Hold(1, 5, 15).At(15, 1, Ev::kWriteOk, 1);
  CheckInput one = Locks({});
  one.counter_final = 1;
  EXPECT_EQ(CheckResource(e.history(), one).lost_updates, 1);
  CheckInput two = Locks({{0, "a"}, {1, "b"}});
  two.counter_final = 1;
  const ResourceResult r = CheckResource(e.history(), two);
  EXPECT_EQ(r.lost_updates, 0);
  EXPECT_EQ(r.writes_accepted, 2);
}

TEST(CheckLocksTest, AWaiterIsStuckOnlyWhenNoOneHoldsItsLock) {
  Events e;
  // Client 0 holds lock "a" 0..500 ms; client 1 waits for lock "b" 100..300 ms, which no one holds.
  e.At(0, 0, Ev::kEnter).At(100, 1, Ev::kAcquireStart).At(300, 1, Ev::kAcquireFail).At(500, 0, Ev::kExit);
  EXPECT_DOUBLE_EQ(CheckLiveness(e.history(), Locks({})).stuck_ms_max, 0);
  EXPECT_DOUBLE_EQ(CheckLiveness(e.history(), Locks({{0, "a"}, {1, "b"}})).stuck_ms_max, 200);
}

// RunOne names each client's key as its lock: a key-per-client run is judged per key.
TEST(CheckLocksTest, AKeyPerClientRunIsJudgedPerKey) {
  RunSpec s;
  s.algorithm = "token";
  s.clients = 4;
  s.requests = 40;
  s.hold_ms = 10;
  s.key_per_client = true;
  std::string error;
  ASSERT_TRUE(ResolveSpec(&s).ok(&error)) << error;
  const RunResult r = RunOne(s, false, /*keep_events=*/true);
  ASSERT_TRUE(r.completed) << r.error;
  EXPECT_EQ(r.check.liveness.acquired, 40);
  EXPECT_EQ(r.check.safety.violations, 0);
  EXPECT_EQ(r.check.safety.max_concurrent_holders, 1);
  // The clients did hold at once, each on its own key: judged as one lock, they overlap.
  History h;
  for (const Event& e : r.events) h.Add(e.t_us, e.client, e.type, e.value, e.detail);
  CheckInput one_lock;
  one_lock.end_us = r.duration_us;
  EXPECT_GT(CheckMutualExclusion(h, one_lock).max_concurrent_holders, 1);
}

// A semaphore of N permits (CheckInput::holders_allowed): N holders are fine, the (N+1)-th is
// a violation, and only the holds that made them too many form pairs.
TEST(CheckLocksTest, HoldersAllowedCountsOnlyHoldersBeyondThePermits) {
  Events e;
  e.At(0, 0, Ev::kEnter).At(10, 1, Ev::kEnter).At(20, 2, Ev::kEnter);  // three at once from 20 ms
  e.At(30, 0, Ev::kExit).At(40, 3, Ev::kEnter);                        // three again from 40 ms
  e.At(50, 1, Ev::kExit).At(60, 2, Ev::kExit).At(70, 3, Ev::kExit);
  CheckInput in;
  in.end_us = Us(100);
  in.holders_allowed = 3;
  SafetyResult ok = CheckMutualExclusion(e.history(), in);
  EXPECT_EQ(ok.violations, 0);
  EXPECT_EQ(ok.max_concurrent_holders, 3);
  EXPECT_TRUE(ok.overlapping_pairs.empty());
  EXPECT_DOUBLE_EQ(ok.overlap_ms_total, 0);

  in.holders_allowed = 2;
  SafetyResult two = CheckMutualExclusion(e.history(), in);
  EXPECT_EQ(two.violations, 2);  // 20..30 ms and 40..50 ms
  EXPECT_DOUBLE_EQ(two.overlap_ms_total, 20);
  EXPECT_EQ(two.overlapping_pairs, (std::vector<std::pair<int, int>>{{0, 2}, {1, 2}, {1, 3}, {2, 3}}));
  ASSERT_EQ(two.examples.size(), 2u);
  EXPECT_EQ(two.examples[0].clients, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(two.examples[0].start_us, Us(20));
  EXPECT_EQ(two.examples[0].end_us, Us(30));

  in.holders_allowed = 1;  // a lock: every overlap counts
  EXPECT_EQ(CheckMutualExclusion(e.history(), in).violations, 1);
}

// A read-write lock: readers (kEnter detail "read") share, a writer overlapping anyone is a
// violation, and a write while a reader is inside is a stale read.
TEST(CheckLocksTest, ReadersShareAndAWriterWithAnyoneIsAViolation) {
  History h;
  h.Add(Us(0), 0, Ev::kEnter, -1, kReadHold);
  h.Add(Us(10), 1, Ev::kEnter, -1, kReadHold);  // two readers: fine
  h.Add(Us(20), 0, Ev::kExit);
  h.Add(Us(30), 2, Ev::kEnter);                  // a writer while reader 1 reads
  h.Add(Us(35), 2, Ev::kWriteOk, 1);             // ... and writes under it: stale
  h.Add(Us(40), 1, Ev::kExit);
  h.Add(Us(45), 2, Ev::kWriteOk, 2);             // alone now: fine
  h.Add(Us(50), 2, Ev::kExit);
  h.Add(Us(60), 3, Ev::kEnter, -1, kReadHold);
  h.Add(Us(70), 3, Ev::kExit);
  CheckInput in;
  in.end_us = Us(100);
  in.counter_final = 2;
  const SafetyResult s = CheckMutualExclusion(h, in);
  EXPECT_EQ(s.violations, 1);
  EXPECT_DOUBLE_EQ(s.overlap_ms_total, 10);
  EXPECT_EQ(s.overlapping_pairs, (std::vector<std::pair<int, int>>{{1, 2}}));
  EXPECT_EQ(s.max_concurrent_holders, 2);
  const ResourceResult r = CheckResource(h, in);
  EXPECT_EQ(r.read_holds, 3);
  EXPECT_EQ(r.stale_reads, 1);
  EXPECT_EQ(r.writes_accepted, 2);
}

}  // namespace
}  // namespace locklab
