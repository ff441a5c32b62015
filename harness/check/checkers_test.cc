#include "harness/check/checkers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace locklab {
namespace {

int64_t Us(double ms) { return static_cast<int64_t>(ms * 1000); }

// Builds a history from events written in any order: per client is easiest to read. Build()
// sorts them by time, stably, so events written at the same instant keep the order written.
class Script {
 public:
  Script& At(double ms, int client, Ev type, int64_t value = 0, std::string detail = {}) {
    events_.push_back(Event{Us(ms), client, type, value, std::move(detail)});
    return *this;
  }

  // One whole request that acquires: acquire, enter, one command, exit, release.
  Script& Request(int client, double start_ms, double enter_ms, double exit_ms, double done_ms) {
    At(start_ms, client, Ev::kAcquireStart);
    At(enter_ms, client, Ev::kCommand, 0, "SET lock NX -> OK");
    At(enter_ms, client, Ev::kAcquireOk, 1);
    At(enter_ms, client, Ev::kEnter);
    At(exit_ms, client, Ev::kExit);
    At(exit_ms, client, Ev::kReleaseStart);
    At(done_ms, client, Ev::kReleaseOk);
    return *this;
  }

  // Just the critical section.
  Script& Hold(int client, double enter_ms, double exit_ms) {
    At(enter_ms, client, Ev::kEnter);
    At(exit_ms, client, Ev::kExit);
    return *this;
  }

  History Build() const {
    std::vector<Event> sorted = events_;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const Event& a, const Event& b) { return a.t_us < b.t_us; });
    History h;
    for (const Event& e : sorted) h.Add(e.t_us, e.client, e.type, e.value, e.detail);
    return h;
  }

 private:
  std::vector<Event> events_;
};

CheckInput EndingAt(double end_ms) {
  CheckInput in;
  in.end_us = Us(end_ms);
  return in;
}

bool HasEvent(const std::vector<Event>& tl, int client, Ev type, const std::string& detail = {}) {
  return std::any_of(tl.begin(), tl.end(), [&](const Event& e) {
    return e.client == client && e.type == type && (detail.empty() || e.detail == detail);
  });
}

bool InTimeOrder(const std::vector<Event>& tl) {
  return std::is_sorted(tl.begin(), tl.end(),
                        [](const Event& a, const Event& b) { return a.t_us < b.t_us; });
}

// ---------------------------------------------------------------------------------------------
// Mutual exclusion

TEST(CheckMutualExclusionTest, CleanSequentialHistoryHasNoViolation) {
  Script s;
  s.Request(0, 0, 5, 50, 55).Request(1, 10, 56, 100, 104).Request(2, 20, 105, 150, 151);
  SafetyResult r = CheckMutualExclusion(s.Build(), EndingAt(200));
  EXPECT_EQ(r.violations, 0);
  EXPECT_EQ(r.max_concurrent_holders, 1);
  EXPECT_DOUBLE_EQ(r.overlap_ms_total, 0);
  EXPECT_TRUE(r.examples.empty());
  EXPECT_TRUE(r.overlapping_pairs.empty());
}

TEST(CheckMutualExclusionTest, EmptyHistory) {
  SafetyResult r = CheckMutualExclusion(History{}, EndingAt(100));
  EXPECT_EQ(r.violations, 0);
  EXPECT_EQ(r.max_concurrent_holders, 0);
  EXPECT_TRUE(r.examples.empty());
}

TEST(CheckMutualExclusionTest, TwoOverlappingHoldsGiveOneViolationWithTimeline) {
  Script s;
  s.At(0, 0, Ev::kAcquireStart)
      .At(5, 0, Ev::kCommand, 0, "SET lock a NX PX 50 -> OK")
      .At(5, 0, Ev::kAcquireOk, 1)
      .At(5, 0, Ev::kEnter)
      .At(10, 0, Ev::kPauseStart, 80'000)
      .At(40, 1, Ev::kAcquireStart)
      .At(55, -1, Ev::kFault, 0, "node 0 clock jump +1s")
      .At(60, 1, Ev::kCommand, 0, "SET lock b NX PX 50 -> OK")
      .At(60, 1, Ev::kAcquireOk, 1)
      .At(60, 1, Ev::kEnter)
      .At(70, 2, Ev::kAcquireStart)  // a bystander: not in the timeline
      .At(90, 0, Ev::kPauseEnd)
      .At(100, 0, Ev::kExit)
      .At(100, 0, Ev::kReleaseStart)
      .At(101, 0, Ev::kCommand, 0, "EVAL release -> 0")
      .At(101, 0, Ev::kReleaseFail)
      .At(150, 1, Ev::kExit);
  SafetyResult r = CheckMutualExclusion(s.Build(), EndingAt(200));

  EXPECT_EQ(r.violations, 1);
  EXPECT_EQ(r.max_concurrent_holders, 2);
  EXPECT_DOUBLE_EQ(r.overlap_ms_total, 40);  // 60..100
  ASSERT_EQ(r.examples.size(), 1u);
  const Violation& v = r.examples[0];
  EXPECT_EQ(v.start_us, Us(60));
  EXPECT_EQ(v.end_us, Us(100));
  EXPECT_EQ(v.clients, (std::vector<int>{0, 1}));

  // From client 0's kAcquireStart (0 ms) to the end of the overlap (100 ms), both clients.
  const std::vector<Event>& tl = v.timeline;
  EXPECT_TRUE(InTimeOrder(tl));
  EXPECT_TRUE(HasEvent(tl, 0, Ev::kCommand, "SET lock a NX PX 50 -> OK"));
  EXPECT_TRUE(HasEvent(tl, 1, Ev::kCommand, "SET lock b NX PX 50 -> OK"));
  EXPECT_TRUE(HasEvent(tl, 0, Ev::kPauseStart));
  EXPECT_TRUE(HasEvent(tl, 0, Ev::kPauseEnd));
  EXPECT_TRUE(HasEvent(tl, -1, Ev::kFault));
  EXPECT_FALSE(HasEvent(tl, 2, Ev::kAcquireStart));          // not involved
  EXPECT_FALSE(HasEvent(tl, 0, Ev::kCommand, "EVAL release -> 0"));  // after the overlap
  EXPECT_EQ(tl.front().t_us, 0);
  EXPECT_EQ(tl.front().type, Ev::kAcquireStart);
  EXPECT_EQ(tl.back().t_us, Us(100));
  EXPECT_EQ(tl.size(), 13u);  // every event of clients 0, 1 and the fault within 0..100 ms
}

TEST(CheckMutualExclusionTest, TimelineMarginReplacesTheAcquireStart) {
  Script s;
  s.At(0, 0, Ev::kAcquireStart).Hold(0, 5, 100);
  s.At(10, 1, Ev::kAcquireStart).At(20, 1, Ev::kCommand).Hold(1, 60, 150);
  CheckInput in = EndingAt(200);
  in.timeline_margin_us = Us(45);  // timeline starts at 60 - 45 = 15 ms
  SafetyResult r = CheckMutualExclusion(s.Build(), in);
  ASSERT_EQ(r.examples.size(), 1u);
  const std::vector<Event>& tl = r.examples[0].timeline;
  ASSERT_EQ(tl.size(), 3u);  // client 1's command and enter, client 0's exit
  EXPECT_EQ(tl[0].type, Ev::kCommand);
  EXPECT_EQ(tl[1].type, Ev::kEnter);
  EXPECT_EQ(tl[2].type, Ev::kExit);
}

TEST(CheckMutualExclusionTest, ThreeHoldersOverlappingAreOneEpisode) {
  Script s;
  s.Hold(0, 0, 100).Hold(1, 20, 80).Hold(2, 40, 120);
  SafetyResult r = CheckMutualExclusion(s.Build(), EndingAt(200));
  EXPECT_EQ(r.violations, 1);
  EXPECT_EQ(r.max_concurrent_holders, 3);
  EXPECT_DOUBLE_EQ(r.overlap_ms_total, 80);  // 20..100: 2+ holders throughout
  ASSERT_EQ(r.examples.size(), 1u);
  EXPECT_EQ(r.examples[0].start_us, Us(20));
  EXPECT_EQ(r.examples[0].end_us, Us(100));
  EXPECT_EQ(r.examples[0].clients, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(r.overlapping_pairs, (std::vector<std::pair<int, int>>{{0, 1}, {0, 2}, {1, 2}}));
}

TEST(CheckMutualExclusionTest, OverlappingPairsAreOnlyThePairsThatHeldTogether) {
  Script s;
  // A overlaps B (50..100), B overlaps C (150..200); A is gone before C enters.
  s.Hold(0, 0, 100).Hold(1, 50, 200).Hold(2, 150, 300);
  SafetyResult r = CheckMutualExclusion(s.Build(), EndingAt(400));
  EXPECT_EQ(r.violations, 2);
  EXPECT_EQ(r.overlapping_pairs, (std::vector<std::pair<int, int>>{{0, 1}, {1, 2}}));
}

TEST(CheckMutualExclusionTest, OverlappingPairsAreSortedUniqueAndLowFirst) {
  Script s;
  // Client 3 holds first and client 1 joins it, twice: one pair (1, 3). A handoff at one
  // instant (3 -> 2 at 500) is no pair; a paused holder still holds (client 0 vs client 2).
  s.Hold(3, 0, 100).Hold(1, 50, 60).Hold(1, 70, 80).Hold(3, 200, 500).Hold(2, 500, 510);
  s.At(520, 0, Ev::kEnter).At(530, 0, Ev::kPauseStart, Us(170)).At(700, 0, Ev::kPauseEnd).At(710, 0, Ev::kExit);
  s.Hold(2, 600, 650);  // during client 0's pause
  SafetyResult r = CheckMutualExclusion(s.Build(), EndingAt(800));
  EXPECT_EQ(r.overlapping_pairs, (std::vector<std::pair<int, int>>{{0, 2}, {1, 3}}));
}

TEST(CheckMutualExclusionTest, SeparateEpisodesCountSeparatelyAndExamplesAreCapped) {
  Script s;
  // Client 0 holds long; clients 1, 2, 3 overlap it one after another.
  s.Hold(0, 0, 1000).Hold(1, 100, 200).Hold(2, 300, 350).Hold(3, 500, 510);
  CheckInput in = EndingAt(2000);
  in.max_examples = 2;
  SafetyResult r = CheckMutualExclusion(s.Build(), in);
  EXPECT_EQ(r.violations, 3);
  EXPECT_EQ(r.max_concurrent_holders, 2);
  EXPECT_DOUBLE_EQ(r.overlap_ms_total, 160);
  ASSERT_EQ(r.examples.size(), 2u);
  EXPECT_EQ(r.examples[0].clients, (std::vector<int>{0, 1}));
  EXPECT_EQ(r.examples[1].clients, (std::vector<int>{0, 2}));
  EXPECT_EQ(r.examples[1].start_us, Us(300));
  EXPECT_EQ(r.examples[1].end_us, Us(350));

  in.max_examples = 0;
  EXPECT_TRUE(CheckMutualExclusion(s.Build(), in).examples.empty());
}

TEST(CheckMutualExclusionTest, BackToBackHandoffAtTheSameInstantIsNoViolation) {
  Script s;
  s.At(0, 0, Ev::kEnter);
  // Logged in the unlucky order: the new holder's enter before the old holder's exit.
  s.At(100, 1, Ev::kEnter).At(100, 0, Ev::kExit).At(200, 1, Ev::kExit);
  SafetyResult r = CheckMutualExclusion(s.Build(), EndingAt(300));
  EXPECT_EQ(r.violations, 0);
  EXPECT_EQ(r.max_concurrent_holders, 1);
  EXPECT_TRUE(r.overlapping_pairs.empty());
}

TEST(CheckMutualExclusionTest, CrashEndsTheHold) {
  Script after;
  after.At(0, 0, Ev::kEnter).At(50, 0, Ev::kCrash).Hold(1, 60, 200);
  SafetyResult r = CheckMutualExclusion(after.Build(), EndingAt(300));
  EXPECT_EQ(r.violations, 0);

  Script during;
  during.At(0, 0, Ev::kEnter).Hold(1, 40, 200).At(50, 0, Ev::kCrash);
  r = CheckMutualExclusion(during.Build(), EndingAt(300));
  EXPECT_EQ(r.violations, 1);
  EXPECT_DOUBLE_EQ(r.overlap_ms_total, 10);  // 40..50, not 40..200
  ASSERT_EQ(r.examples.size(), 1u);
  EXPECT_EQ(r.examples[0].end_us, Us(50));
  EXPECT_TRUE(HasEvent(r.examples[0].timeline, 0, Ev::kCrash));
}

TEST(CheckMutualExclusionTest, HoldStillOpenAtTheEndLastsUntilEndUs) {
  Script s;
  s.At(0, 0, Ev::kEnter).Hold(1, 500, 600);
  SafetyResult r = CheckMutualExclusion(s.Build(), EndingAt(1000));
  EXPECT_EQ(r.violations, 1);
  EXPECT_DOUBLE_EQ(r.overlap_ms_total, 100);

  Script both_open;
  both_open.At(0, 0, Ev::kEnter).At(900, 1, Ev::kEnter);
  r = CheckMutualExclusion(both_open.Build(), EndingAt(1000));
  EXPECT_EQ(r.violations, 1);
  EXPECT_DOUBLE_EQ(r.overlap_ms_total, 100);
  ASSERT_EQ(r.examples.size(), 1u);
  EXPECT_EQ(r.examples[0].end_us, Us(1000));
}

TEST(CheckMutualExclusionTest, PauseDoesNotEndTheHold) {
  Script s;
  s.At(0, 0, Ev::kEnter)
      .At(10, 0, Ev::kPauseStart, Us(4990))
      .Hold(1, 1000, 2000)
      .At(5000, 0, Ev::kPauseEnd)
      .At(5001, 0, Ev::kExit);
  SafetyResult r = CheckMutualExclusion(s.Build(), EndingAt(6000));
  EXPECT_EQ(r.violations, 1);
  EXPECT_DOUBLE_EQ(r.overlap_ms_total, 1000);
  EXPECT_EQ(r.examples[0].clients, (std::vector<int>{0, 1}));
  EXPECT_EQ(r.overlapping_pairs, (std::vector<std::pair<int, int>>{{0, 1}}));
}

TEST(CheckMutualExclusionTest, ZeroLengthHoldInsideAnotherIsAViolation) {
  Script s;
  s.Hold(0, 0, 100).Hold(1, 50, 50);
  SafetyResult r = CheckMutualExclusion(s.Build(), EndingAt(200));
  EXPECT_EQ(r.violations, 1);
  EXPECT_EQ(r.max_concurrent_holders, 2);
  EXPECT_DOUBLE_EQ(r.overlap_ms_total, 0);
  ASSERT_EQ(r.examples.size(), 1u);
  EXPECT_EQ(r.examples[0].start_us, Us(50));
  EXPECT_EQ(r.examples[0].end_us, Us(50));
  EXPECT_EQ(r.overlapping_pairs, (std::vector<std::pair<int, int>>{{0, 1}}));

  // ...but not at the other holder's exit, nor against the same client's next hold.
  Script edge;
  edge.Hold(0, 0, 100).Hold(1, 100, 100).Hold(2, 200, 200).Hold(2, 200, 300);
  r = CheckMutualExclusion(edge.Build(), EndingAt(400));
  EXPECT_EQ(r.violations, 0);
  EXPECT_EQ(r.max_concurrent_holders, 1);
  EXPECT_TRUE(r.overlapping_pairs.empty());
}

TEST(CheckMutualExclusionTest, RepeatedEnterWithoutExitIsOneHold) {
  Script s;
  s.At(0, 0, Ev::kEnter).Hold(1, 5, 8).At(10, 0, Ev::kEnter).At(20, 0, Ev::kExit);
  SafetyResult r = CheckMutualExclusion(s.Build(), EndingAt(100));
  EXPECT_EQ(r.violations, 1);  // client 0 held from 0 to 20, across client 1's hold
  EXPECT_EQ(r.max_concurrent_holders, 2);
  EXPECT_DOUBLE_EQ(r.overlap_ms_total, 3);
}

TEST(CheckMutualExclusionTest, LongTimelineIsCutNearTheOverlapStartInOrder) {
  Script s;
  s.At(0, 0, Ev::kAcquireStart).At(1, 0, Ev::kEnter);
  for (int i = 0; i < 1000; ++i) s.At(2 + i, 0, Ev::kCommand, 0, "before");  // 2..1001 ms
  s.At(1002, 1, Ev::kEnter);
  for (int i = 0; i < 1000; ++i) s.At(1003 + i, 1, Ev::kCommand, 0, "during");  // ..2002 ms
  s.At(3000, 0, Ev::kExit).At(3001, 1, Ev::kExit);
  SafetyResult r = CheckMutualExclusion(s.Build(), EndingAt(4000));
  ASSERT_EQ(r.examples.size(), 1u);
  const std::vector<Event>& tl = r.examples[0].timeline;
  ASSERT_EQ(tl.size(), 200u);
  EXPECT_TRUE(InTimeOrder(tl));
  // 1 ms apart on both sides: 100 before the enter at 1002 ms (ties go to the earlier side),
  // the enter itself, and 99 after it.
  EXPECT_EQ(tl.front().t_us, Us(902));
  EXPECT_EQ(tl[100].type, Ev::kEnter);
  EXPECT_EQ(tl.back().t_us, Us(1101));
}

TEST(CheckAllTest, OutOfOrderHistoryIsCheckedInTimeOrder) {
  History h;
  h.Add(Us(0), 0, Ev::kAcquireStart);
  h.Add(Us(0), 0, Ev::kEnter);
  h.Add(Us(60), 0, Ev::kWriteOk);
  h.Add(Us(100), 0, Ev::kExit);
  h.Add(Us(50), 1, Ev::kEnter);  // appended late
  h.Add(Us(150), 1, Ev::kExit);
  CheckResult r = CheckAll(h, EndingAt(200));
  EXPECT_EQ(r.safety.violations, 1);
  EXPECT_DOUBLE_EQ(r.safety.overlap_ms_total, 50);
  ASSERT_EQ(r.safety.examples.size(), 1u);
  EXPECT_TRUE(InTimeOrder(r.safety.examples[0].timeline));
  EXPECT_EQ(r.safety.examples[0].timeline.size(), 5u);
  EXPECT_EQ(r.resource.stale_writes_accepted, 1);  // client 1 entered at 50, before the write
}

// ---------------------------------------------------------------------------------------------
// Resource

TEST(CheckResourceTest, LostUpdatesAreAcknowledgedWritesTheCounterDoesNotShow) {
  Script s;
  for (int i = 0; i < 10; ++i) s.At(i, i % 2, Ev::kEnter).At(i + 0.5, i % 2, Ev::kWriteOk, i + 1);
  CheckInput in;
  in.counter_initial = 100;
  in.counter_final = 107;
  ResourceResult r = CheckResource(s.Build(), in);
  EXPECT_EQ(r.writes_accepted, 10);
  EXPECT_EQ(r.lost_updates, 3);

  in.counter_final = 110;
  EXPECT_EQ(CheckResource(s.Build(), in).lost_updates, 0);
  in.counter_final = 115;  // moved further than acknowledged: not negative
  EXPECT_EQ(CheckResource(s.Build(), in).lost_updates, 0);
}

TEST(CheckResourceTest, LostUpdatesNeedWritesAndNoOrders) {
  CheckInput in;
  in.counter_initial = 0;
  in.counter_final = 0;
  Script no_writes;
  no_writes.Hold(0, 0, 10);
  EXPECT_EQ(CheckResource(no_writes.Build(), in).lost_updates, 0);

  Script seckill;
  seckill.At(0, 0, Ev::kEnter).At(1, 0, Ev::kWriteOk, 9).At(1, 0, Ev::kOrder, 9);
  ResourceResult r = CheckResource(seckill.Build(), in);
  EXPECT_EQ(r.writes_accepted, 1);
  EXPECT_EQ(r.orders, 1);
  EXPECT_EQ(r.lost_updates, 0);
}

TEST(CheckResourceTest, OversoldCountsOrdersBeyondTheStock) {
  Script s;
  for (int i = 0; i < 7; ++i) s.At(i, i % 3, Ev::kOrder, 4 - i);  // stock left 4, 3, ... -2
  CheckInput in;
  in.stock_initial = 5;
  ResourceResult r = CheckResource(s.Build(), in);
  EXPECT_EQ(r.orders, 7);
  EXPECT_EQ(r.oversold, 2);

  in.stock_initial = 10;  // enough stock by count, but two orders left it negative
  EXPECT_EQ(CheckResource(s.Build(), in).oversold, 2);

  Script fine;
  for (int i = 0; i < 5; ++i) fine.At(i, 0, Ev::kOrder, 4 - i);
  in.stock_initial = 5;
  EXPECT_EQ(CheckResource(fine.Build(), in).oversold, 0);
}

TEST(CheckResourceTest, StaleWriteAcceptedVersusRejected) {
  Script s;
  s.At(0, 0, Ev::kEnter)
      .At(10, 0, Ev::kWriteOk, 1)         // fresh
      .At(100, 1, Ev::kEnter)             // client 0 paused meanwhile
      .At(150, 1, Ev::kWriteOk, 2)        // fresh: client 1 entered last
      .At(200, 0, Ev::kWriteOk, 3)        // stale and accepted
      .At(210, 0, Ev::kWriteRejected, 33) // stale and refused
      .At(220, 1, Ev::kWriteRejected, 34)   // counted: the resource judged it stale
      .At(230, 0, Ev::kEnter)
      .At(230, 0, Ev::kReadRejected, 35);   // a refused read is no write at all
  ResourceResult r = CheckResource(s.Build(), CheckInput{});
  EXPECT_EQ(r.writes_accepted, 3);
  EXPECT_EQ(r.stale_writes_accepted, 1);
  EXPECT_EQ(r.stale_writes_rejected, 2);
  EXPECT_EQ(r.stale_reads_rejected, 1);
}

// Found by `locklab explore --algorithm fencing --faults pause_client --find damage`: B froze
// between its lock command (token 1) and the reply, A got token 2, then B entered with the older
// token (the resource refused its read). A's write with the newer token is not stale.
TEST(CheckResourceTest, AnEnterWithAnOlderFenceDoesNotMakeTheNewerHoldersWriteStale) {
  Script s;
  s.At(1702, 0, Ev::kEnter, 2)
      .At(1805, 1, Ev::kEnter, 1)
      .At(1805, 1, Ev::kReadRejected, 1)
      .At(2035, 0, Ev::kWriteOk, 1)   // fresh: the holder of token 2
      .At(2100, 1, Ev::kWriteOk, 2);  // had the resource accepted B's write: stale
  ResourceResult r = CheckResource(s.Build(), CheckInput{});
  EXPECT_EQ(r.writes_accepted, 2);
  EXPECT_EQ(r.stale_writes_accepted, 1);
}

TEST(CheckResourceTest, StaleWriteUsesTheWritersLatestEnter) {
  Script s;
  s.At(0, 0, Ev::kEnter)
      .At(10, 1, Ev::kEnter)
      .At(20, 0, Ev::kEnter)       // client 0 enters again: its own enter is the latest
      .At(30, 0, Ev::kWriteOk)     // fresh: client 1's enter (10) is older than 20
      .At(30, 1, Ev::kWriteOk)     // stale: client 0 entered at 20 > 10
      .At(40, 0, Ev::kEnter)
      .At(50, 0, Ev::kWriteOk)     // fresh: no one else entered since
      .At(60, 2, Ev::kWriteOk);    // never entered at all: stale
  ResourceResult r = CheckResource(s.Build(), CheckInput{});
  EXPECT_EQ(r.writes_accepted, 4);
  EXPECT_EQ(r.stale_writes_accepted, 2);
}

TEST(CheckResourceTest, OnlyEntersAfterTheWritersOwnCount) {
  Script s;
  // Client 1 entered long before client 0's latest enter: client 0's write is fresh even
  // though client 1 is not the writer and entered after client 0's first enter.
  s.At(0, 0, Ev::kEnter).At(10, 1, Ev::kEnter).At(20, 1, Ev::kExit).At(30, 0, Ev::kEnter);
  s.At(40, 0, Ev::kWriteOk);
  ResourceResult r = CheckResource(s.Build(), CheckInput{});
  EXPECT_EQ(r.writes_accepted, 1);
  EXPECT_EQ(r.stale_writes_accepted, 0);
}

TEST(CheckResourceTest, StaleWriteAtTheInstantOfAnotherEnter) {
  Script same;
  // Client 1's enter is logged after client 0's write, at the same instant: "at or before".
  same.At(0, 0, Ev::kEnter).At(100, 0, Ev::kWriteOk).At(100, 1, Ev::kEnter);
  EXPECT_EQ(CheckResource(same.Build(), CheckInput{}).stale_writes_accepted, 1);

  Script together;
  // Both enter at the same instant: neither enter is strictly after the other.
  together.At(0, 0, Ev::kEnter).At(0, 1, Ev::kEnter).At(5, 0, Ev::kWriteOk).At(5, 1, Ev::kWriteOk);
  EXPECT_EQ(CheckResource(together.Build(), CheckInput{}).stale_writes_accepted, 0);
}

// ---------------------------------------------------------------------------------------------
// Liveness

TEST(CheckLivenessTest, CountsOutcomes) {
  Script s;
  s.Request(0, 0, 1, 2, 3);
  s.At(4, 1, Ev::kAcquireStart).At(5, 1, Ev::kAcquireFail, 3);
  s.At(6, 2, Ev::kAcquireStart).At(7, 2, Ev::kAcquireUnknown, 3);
  s.At(8, 0, Ev::kAcquireStart).At(9, 0, Ev::kAcquireOk).At(9, 0, Ev::kEnter).At(10, 0, Ev::kExit);
  s.At(10, 0, Ev::kReleaseStart).At(11, 0, Ev::kReleaseFail);
  s.At(12, 0, Ev::kAcquireStart).At(13, 0, Ev::kAcquireOk).At(13, 0, Ev::kEnter).At(14, 0, Ev::kExit);
  s.At(14, 0, Ev::kReleaseStart).At(15, 0, Ev::kReleaseUnknown);
  LivenessResult r = CheckLiveness(s.Build(), EndingAt(20));
  EXPECT_EQ(r.acquired, 3);
  EXPECT_EQ(r.failed, 1);
  EXPECT_EQ(r.unknown, 1);
  EXPECT_EQ(r.releases_failed, 1);
  EXPECT_EQ(r.releases_unknown, 1);
}

TEST(CheckLivenessTest, CrashedHolderLeavesWaitersStuck) {
  Script s;
  s.At(0, 0, Ev::kAcquireStart).At(1, 0, Ev::kAcquireOk).At(1, 0, Ev::kEnter);
  s.At(50, 1, Ev::kAcquireStart);
  s.At(100, 0, Ev::kCrash);  // the lock stays taken until it expires
  s.At(200, 2, Ev::kAcquireStart).At(5000, 2, Ev::kAcquireFail);
  s.At(10100, 1, Ev::kAcquireOk).At(10100, 1, Ev::kEnter).At(10200, 1, Ev::kExit);
  LivenessResult r = CheckLiveness(s.Build(), EndingAt(10300));
  EXPECT_DOUBLE_EQ(r.stuck_ms_max, 10000);
}

TEST(CheckLivenessTest, StuckStretchEndsWhenTheWaiterGivesUpOrCrashes) {
  Script gave_up;
  gave_up.At(0, 0, Ev::kAcquireStart).At(300, 0, Ev::kAcquireFail);
  EXPECT_DOUBLE_EQ(CheckLiveness(gave_up.Build(), EndingAt(1000)).stuck_ms_max, 300);

  Script crashed;
  crashed.At(0, 0, Ev::kAcquireStart).At(250, 0, Ev::kCrash);
  EXPECT_DOUBLE_EQ(CheckLiveness(crashed.Build(), EndingAt(1000)).stuck_ms_max, 250);

  Script open;
  open.At(400, 0, Ev::kAcquireStart);
  EXPECT_DOUBLE_EQ(CheckLiveness(open.Build(), EndingAt(1000)).stuck_ms_max, 600);
}

TEST(CheckLivenessTest, NoStuckTimeWhileSomeoneHolds) {
  Script s;
  s.At(0, 0, Ev::kEnter).At(10, 1, Ev::kAcquireStart).At(500, 0, Ev::kExit);
  s.At(520, 1, Ev::kAcquireOk).At(520, 1, Ev::kEnter).At(600, 1, Ev::kExit);
  // The only stuck stretch: 500..520, between the exit and the waiter getting the lock.
  EXPECT_DOUBLE_EQ(CheckLiveness(s.Build(), EndingAt(700)).stuck_ms_max, 20);
}

TEST(CheckLivenessTest, RetryAtTheSameInstantDoesNotSplitAStretch) {
  Script s;
  s.At(0, 0, Ev::kAcquireStart).At(100, 0, Ev::kAcquireFail).At(100, 0, Ev::kAcquireStart);
  s.At(250, 0, Ev::kAcquireFail);
  EXPECT_DOUBLE_EQ(CheckLiveness(s.Build(), EndingAt(1000)).stuck_ms_max, 250);
}

TEST(CheckLivenessTest, InstantHoldSplitsAStretch) {
  Script s;
  s.At(0, 0, Ev::kAcquireStart).Hold(1, 100, 100).At(250, 0, Ev::kAcquireFail);
  EXPECT_DOUBLE_EQ(CheckLiveness(s.Build(), EndingAt(1000)).stuck_ms_max, 150);
}

// ---------------------------------------------------------------------------------------------
// Latency

TEST(CheckLatencyTest, SummarizeUsesNearestRank) {
  std::vector<double> samples;
  for (int i = 100; i >= 1; --i) samples.push_back(i);  // unsorted on purpose
  LatencySummary s = Summarize(samples);
  EXPECT_EQ(s.count, 100);
  EXPECT_DOUBLE_EQ(s.p50, 50);
  EXPECT_DOUBLE_EQ(s.p90, 90);
  EXPECT_DOUBLE_EQ(s.p99, 99);
  EXPECT_DOUBLE_EQ(s.max, 100);
  EXPECT_DOUBLE_EQ(s.mean, 50.5);
}

TEST(CheckLatencyTest, SummarizeRanksRoundUp) {
  // Ranks ceil(0.5*70) = 35, ceil(0.9*70) = 63, ceil(0.99*70) = ceil(69.3) = 70.
  std::vector<double> samples;
  for (int i = 1; i <= 70; ++i) samples.push_back(i);
  LatencySummary s = Summarize(samples);
  EXPECT_DOUBLE_EQ(s.p90, 63);
  EXPECT_DOUBLE_EQ(s.p50, 35);
  EXPECT_DOUBLE_EQ(s.p99, 70);  // ceil(69.3) = 70
}

TEST(CheckLatencyTest, SummarizeSmallAndEmpty) {
  LatencySummary empty = Summarize({});
  EXPECT_EQ(empty.count, 0);
  EXPECT_EQ(empty.p50, 0);
  EXPECT_EQ(empty.max, 0);
  EXPECT_EQ(empty.mean, 0);

  LatencySummary one = Summarize({7});
  EXPECT_DOUBLE_EQ(one.p50, 7);
  EXPECT_DOUBLE_EQ(one.p99, 7);

  LatencySummary three = Summarize({3, 1, 2});  // ranks ceil(1.5)=2, ceil(2.7)=3, ceil(2.97)=3
  EXPECT_DOUBLE_EQ(three.p50, 2);
  EXPECT_DOUBLE_EQ(three.p90, 3);
  EXPECT_DOUBLE_EQ(three.mean, 2);
}

TEST(CheckLatencyTest, AcquireLatenciesFromAHistory) {
  Script s;
  // Client i waits i ms for the lock; holds are zero-length at distinct times.
  for (int i = 1; i <= 100; ++i) {
    double start = i * 1000.0;
    s.At(start, i, Ev::kAcquireStart).At(start + i, i, Ev::kAcquireOk);
  }
  LatencyResult r = CheckLatency(s.Build(), EndingAt(200'000));
  EXPECT_EQ(r.acquire.count, 100);
  EXPECT_DOUBLE_EQ(r.acquire.p50, 50);
  EXPECT_DOUBLE_EQ(r.acquire.p90, 90);
  EXPECT_DOUBLE_EQ(r.acquire.p99, 99);
  EXPECT_DOUBLE_EQ(r.acquire.max, 100);
  EXPECT_DOUBLE_EQ(r.acquire.mean, 50.5);
}

TEST(CheckLatencyTest, SuccessfulRequestPhases) {
  Script s;
  s.Request(0, 0, 10, 50, 55.5);
  LatencyResult r = CheckLatency(s.Build(), EndingAt(100));
  EXPECT_EQ(r.acquire.count, 1);
  EXPECT_DOUBLE_EQ(r.acquire.max, 10);
  EXPECT_DOUBLE_EQ(r.hold.max, 40);
  EXPECT_DOUBLE_EQ(r.release.max, 5.5);
  EXPECT_EQ(r.request.count, 1);
  EXPECT_DOUBLE_EQ(r.request.max, 55.5);
}

TEST(CheckLatencyTest, FailedRequestEndsWhenItGivesUp) {
  Script s;
  s.At(0, 0, Ev::kAcquireStart).At(300, 0, Ev::kAcquireFail, 5);
  s.At(1000, 1, Ev::kAcquireStart).At(1400, 1, Ev::kAcquireUnknown, 5);
  // A release after an unknown acquire (best-effort cleanup) is a release, not the request.
  s.At(1400, 1, Ev::kReleaseStart).At(1410, 1, Ev::kReleaseOk);
  LatencyResult r = CheckLatency(s.Build(), EndingAt(2000));
  EXPECT_EQ(r.acquire.count, 0);  // only successful acquires
  EXPECT_EQ(r.hold.count, 0);
  EXPECT_EQ(r.release.count, 1);
  EXPECT_DOUBLE_EQ(r.release.max, 10);
  EXPECT_EQ(r.request.count, 2);
  EXPECT_DOUBLE_EQ(r.request.p50, 300);
  EXPECT_DOUBLE_EQ(r.request.max, 400);
}

TEST(CheckLatencyTest, CrashLeavesNoSamples) {
  Script s;
  s.At(0, 0, Ev::kAcquireStart).At(10, 0, Ev::kAcquireOk).At(10, 0, Ev::kEnter);
  s.At(20, 0, Ev::kCrash);
  LatencyResult r = CheckLatency(s.Build(), EndingAt(100));
  EXPECT_EQ(r.acquire.count, 1);
  EXPECT_EQ(r.hold.count, 0);
  EXPECT_EQ(r.request.count, 0);
}

// ---------------------------------------------------------------------------------------------
// All together, at scale

TEST(CheckAllTest, CombinesTheFourCheckers) {
  Script s;
  s.Request(0, 0, 10, 50, 55).Request(1, 20, 40, 80, 81);  // overlap 40..50
  s.At(45, 1, Ev::kWriteOk).At(60, 0, Ev::kAcquireStart).At(95, 0, Ev::kAcquireFail);
  CheckInput in = EndingAt(100);
  in.counter_final = 1;
  CheckResult r = CheckAll(s.Build(), in);
  EXPECT_EQ(r.safety.violations, 1);
  EXPECT_DOUBLE_EQ(r.safety.overlap_ms_total, 10);
  EXPECT_EQ(r.resource.writes_accepted, 1);
  EXPECT_EQ(r.resource.lost_updates, 0);
  EXPECT_EQ(r.liveness.acquired, 2);
  EXPECT_EQ(r.liveness.failed, 1);
  EXPECT_DOUBLE_EQ(r.liveness.stuck_ms_max, 15);  // 80..95: client 0 waits, no one holds
  EXPECT_EQ(r.latency.request.count, 3);
}

// Quadratic checkers would not finish this in a test's time: 8 clients, 2.8M events.
TEST(CheckAllTest, MillionsOfEventsWithKnownAnswers) {
  constexpr int kClients = 8;
  constexpr int kRounds = 50'000;
  History h(10'000'000);
  int64_t t = 0;
  for (int round = 0; round < kRounds; ++round) {
    for (int c = 0; c < kClients; ++c) {
      h.Add(t, c, Ev::kAcquireStart);
      h.Add(t + 1, c, Ev::kAcquireOk);
      h.Add(t + 1, c, Ev::kEnter);
      h.Add(t + 2, c, Ev::kWriteOk);
      h.Add(t + 3, c, Ev::kExit);
      h.Add(t + 3, c, Ev::kReleaseStart);
      h.Add(t + 4, c, Ev::kReleaseOk);
      t += 4;  // the next client starts at the instant this one's release is done
    }
  }
  // Client 0's stale write at the very end: everyone entered after it.
  h.Add(t, 0, Ev::kWriteOk);
  CheckInput in;
  in.end_us = t + 10;
  in.counter_final = int64_t{kClients} * kRounds;
  CheckResult r = CheckAll(h, in);
  EXPECT_EQ(r.safety.violations, 0);
  EXPECT_EQ(r.safety.max_concurrent_holders, 1);
  EXPECT_TRUE(r.safety.overlapping_pairs.empty());
  EXPECT_EQ(r.resource.writes_accepted, int64_t{kClients} * kRounds + 1);
  EXPECT_EQ(r.resource.lost_updates, 1);
  EXPECT_EQ(r.resource.stale_writes_accepted, 1);
  EXPECT_EQ(r.liveness.acquired, int64_t{kClients} * kRounds);
  EXPECT_DOUBLE_EQ(r.liveness.stuck_ms_max, 0.001);  // each acquire waits 1 µs, no holder
  EXPECT_EQ(r.latency.hold.count, int64_t{kClients} * kRounds);
  EXPECT_DOUBLE_EQ(r.latency.hold.p99, 0.002);
  EXPECT_EQ(r.latency.request.count, int64_t{kClients} * kRounds);
  EXPECT_DOUBLE_EQ(r.latency.request.max, 0.004);
}

}  // namespace
}  // namespace locklab
