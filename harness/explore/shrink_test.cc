// Shrinking on predicates whose minimum is known: what survives, in what order, and that the
// same input always gives the same result.
#include "harness/explore/shrink.h"

#include <gtest/gtest.h>

namespace locklab {
namespace {

using K = FaultAction::Kind;

FaultAction Pause(int client, int64_t at_ms, int64_t ms) {
  FaultAction f;
  f.kind = K::kPauseClient;
  f.target = client;
  f.at_us = at_ms * 1000;
  f.duration_us = ms * 1000;
  return f;
}

FaultAction CrashNode(int node, int64_t at_ms) {
  FaultAction f;
  f.kind = K::kCrashNode;
  f.target = node;
  f.at_us = at_ms * 1000;
  return f;
}

Candidate Start() {
  Candidate c;
  for (int i = 0; i < 5; ++i) c.clients.push_back({i * 100, 50, 4});
  c.faults = {CrashNode(0, 10), Pause(0, 5, 300), Pause(3, 100, 2500), Pause(1, 7, 900), CrashNode(2, 30)};
  return c;
}

// Fails while client 3 (of the start's numbering, wherever it moved) has a pause of >= 700 ms,
// and its own program has at least 2 requests.
bool PauseOf700(const Candidate& c) {
  for (const FaultAction& f : c.faults) {
    if (f.kind != K::kPauseClient || f.duration_us < 700'000) continue;
    const int t = f.target;
    if (t >= 0 && t < static_cast<int>(c.clients.size()) && c.clients[static_cast<size_t>(t)].start_ms == 300 &&
        c.clients[static_cast<size_t>(t)].requests >= 2)
      return true;
  }
  return false;
}

TEST(Shrink, KeepsOnlyWhatTheFailureNeeds) {
  ShrinkStats stats;
  const Candidate out = Shrink(Start(), PauseOf700, 0, &stats);
  ASSERT_EQ(out.faults.size(), 1u);
  EXPECT_EQ(out.faults[0].kind, K::kPauseClient);
  EXPECT_EQ(out.faults[0].duration_us, 700'000);  // binary search to the exact threshold
  ASSERT_EQ(out.clients.size(), 1u);                // every other client dropped, the pause renumbered
  EXPECT_EQ(out.faults[0].target, 0);
  EXPECT_EQ(out.clients[0].start_ms, 300);
  EXPECT_EQ(out.clients[0].requests, 2);  // 4 -> 2, no lower
  EXPECT_TRUE(PauseOf700(out));
  EXPECT_GT(stats.tries, 0);
  EXPECT_LE(stats.kept, stats.tries);
}

TEST(Shrink, IsDeterministic) {
  ShrinkStats a, b;
  EXPECT_TRUE(Shrink(Start(), PauseOf700, 0.1, &a) == Shrink(Start(), PauseOf700, 0.1, &b));
  EXPECT_EQ(a.tries, b.tries);
}

TEST(Shrink, MarginIsAddedWhenItStillFails) {
  ShrinkStats stats;
  const Candidate out = Shrink(Start(), PauseOf700, 0.1, &stats);
  ASSERT_EQ(out.faults.size(), 1u);
  EXPECT_EQ(out.faults[0].duration_us, 770'000);  // 700 + max(10% of 700, 20)
  // A failure only between 700 and 750 ms: the margin would lose it, so it is not added.
  const auto window = [](const Candidate& c) {
    return PauseOf700(c) && c.faults.size() == 1 && c.faults[0].duration_us <= 750'000;
  };
  Candidate one = Start();
  one.faults = {Pause(3, 100, 740)};
  const Candidate kept = Shrink(one, window, 0.1, &stats);
  ASSERT_EQ(kept.faults.size(), 1u);
  EXPECT_EQ(kept.faults[0].duration_us, 700'000);
}

TEST(Shrink, NothingToDropLeavesTheCandidate) {
  Candidate c;
  c.clients.push_back({0, 10, 1});
  c.faults.push_back(CrashNode(0, 5));
  ShrinkStats stats;
  const Candidate out = Shrink(c, [](const Candidate& x) { return x.faults.size() == 1 && x.clients.size() == 1; },
                               0.1, &stats);
  EXPECT_TRUE(out == c);
}

TEST(Shrink, WithoutClientRenumbersFaults) {
  const Candidate out = WithoutClient(Start(), 1);
  EXPECT_EQ(out.clients.size(), 4u);
  ASSERT_EQ(out.faults.size(), 4u);  // the pause on client 1 goes with it
  EXPECT_EQ(out.faults[1].target, 0);   // client 0 stays
  EXPECT_EQ(out.faults[2].target, 2);   // client 3 becomes 2
  EXPECT_EQ(out.faults[3].target, 2);   // node faults keep their node
}

TEST(Shrink, MagnitudeOfClockJumpsKeepsTheSign) {
  FaultAction j;
  j.kind = K::kNodeClockJump;
  j.delta_us = -5'000'000;
  EXPECT_EQ(MagnitudeMs(j), 5000);
  SetMagnitudeMs(&j, 1200);
  EXPECT_EQ(j.delta_us, -1'200'000);
  EXPECT_EQ(MagnitudeMs(CrashNode(0, 1)), -1);
}

}  // namespace
}  // namespace locklab
