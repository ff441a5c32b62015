// Shrinking on predicates whose minimum is known: what survives, in what order, and that the
// same input always gives the same result.
#include "harness/explore/shrink.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

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

// Client 0 frozen throughout [100, 900] ms by its timed pauses, taken together.
bool FrozenThrough100To900(const Candidate& c) {
  int64_t covered_to_us = 100'000;  // the union of the pauses, swept from 100 ms
  for (int pass = 0; pass < 8; ++pass)
    for (const FaultAction& f : c.faults)
      if (f.kind == K::kPauseClient && f.target == 0 && f.on_send.empty() && f.at_us <= covered_to_us)
        covered_to_us = std::max(covered_to_us, f.at_us + f.duration_us);
  return covered_to_us >= 900'000;
}

// Two pauses that together make the race (neither alone does); one pause from the earlier start
// to the later end makes it too: the shrinker ends at that one pause, shortened to the need.
TEST(Shrink, TwoPausesThatTogetherMakeTheRaceMergeIntoOne) {
  Candidate c;
  c.clients = {{0, 300, 1}, {200, 300, 1}};
  c.faults = {Pause(0, 50, 450), Pause(0, 400, 600)};
  ASSERT_TRUE(FrozenThrough100To900(c));
  for (const FaultAction& f : c.faults) {
    Candidate alone = c;
    alone.faults = {f};
    ASSERT_FALSE(FrozenThrough100To900(alone));
  }
  ShrinkStats stats;
  const Candidate out = Shrink(c, FrozenThrough100To900, 0, &stats);
  ASSERT_EQ(out.faults.size(), 1u);
  EXPECT_EQ(stats.merged, 1);
  EXPECT_EQ(out.faults[0].at_us, 50'000);         // the earlier start
  EXPECT_EQ(out.faults[0].duration_us, 850'000);  // to 900 ms, no longer
  EXPECT_TRUE(FrozenThrough100To900(out));
}

// Client 1 paused for >= 1 s right after its 2nd GET: that alone fails, and so does the start's
// pair of timed pauses (a stand-in for a race two faults make by luck of timing). Dropping either
// timed pause while the other moves onto that protocol point ends at one fault.
TEST(Shrink, AFaultDroppedWhileAnotherMovesOntoAProtocolPoint) {
  const auto on_get2 = [](const FaultAction& f) {
    return f.kind == K::kPauseClient && f.target == 1 && f.on_send == "GET" && f.occurrence == 2 &&
           f.duration_us >= 1'000'000;
  };
  const StillFails fails = [&](const Candidate& c) {
    bool a = false, b = false;
    for (const FaultAction& f : c.faults) {
      if (on_get2(f)) return true;
      a = a || (f.target == 0 && f.at_us == 300'000 && f.on_send.empty());
      b = b || (f.target == 1 && f.at_us == 500'000 && f.on_send.empty());
    }
    return a && b;
  };
  Candidate c;
  c.clients = {{0, 300, 2}, {100, 300, 2}};
  c.faults = {Pause(0, 300, 400), Pause(1, 500, 700)};
  ShrinkOptions o;
  int point_runs = 0;
  o.points = [&](const Candidate&) {
    ++point_runs;
    std::vector<ProtocolPoint> p;
    for (int occurrence = 1; occurrence <= 3; ++occurrence)
      for (const char* command : {"SET", "GET"}) p.push_back({1, 0, command, occurrence, 100 * occurrence});
    return p;
  };
  o.limits.max_magnitude_ms = [](K) -> int64_t { return 3000; };
  ShrinkStats stats;
  const Candidate out = Shrink(c, fails, o, &stats);
  ASSERT_EQ(out.faults.size(), 1u);
  EXPECT_TRUE(on_get2(out.faults[0]));
  EXPECT_EQ(out.faults[0].duration_us, 1'000'000);  // the magnitude search brings it down again
  EXPECT_EQ(stats.moved, 1);
  EXPECT_EQ(stats.point_runs, point_runs);
  // Without protocol points the move has nowhere to go: both pauses stay.
  ShrinkStats none;
  EXPECT_EQ(Shrink(c, fails, 0, &none).faults.size(), 2u);
}

TEST(Shrink, APauseBeforeItsClientStartsBecomesALaterStart) {
  Candidate c;
  c.clients = {{0, 100, 1}, {500, 100, 1}};
  c.faults = {Pause(1, 200, 1000), Pause(0, 50, 100)};
  // Fails while client 1 does nothing before 1200 ms and client 0 is paused at 50.
  const StillFails fails = [](const Candidate& x) {
    bool late = x.clients.size() == 2 && x.clients[1].start_ms >= 1200;
    for (const FaultAction& f : x.faults)
      late = late || (f.target == 1 && f.at_us <= 500'000 && f.at_us + f.duration_us >= 1'200'000);
    bool paused0 = false;
    for (const FaultAction& f : x.faults) paused0 = paused0 || (f.target == 0 && f.at_us == 50'000);
    return late && paused0;
  };
  ShrinkStats stats;
  const Candidate out = Shrink(c, fails, 0, &stats);
  ASSERT_EQ(out.faults.size(), 1u);
  EXPECT_EQ(out.faults[0].target, 0);
  EXPECT_EQ(out.clients[1].start_ms, 1200);
  EXPECT_EQ(stats.started_later, 1);
}

// A pause that begins 0.5 ms after its client's last command (the simulator finished a release
// and a new acquisition just before it), or 0.7 ms before its next one, moves into the quiet time
// between the two.
TEST(Shrink, APausePoisedNextToItsClientsCommandMovesIntoTheQuietTime) {
  Candidate c;
  c.clients = {{224, 247, 1}};
  c.faults = {Pause(0, 472, 1100)};
  ShrinkOptions o;
  o.points = [](const Candidate&) {
    return std::vector<ProtocolPoint>{{0, 0, "SET", 1, 471'500}, {0, 0, "compare_and_delete", 1, 718'500}};
  };
  auto fails_in = [](int64_t lo_us, int64_t hi_us) {
    return [=](const Candidate& x) {
      return x.faults.size() == 1 && x.faults[0].duration_us >= 1'000'000 && x.faults[0].at_us >= lo_us &&
             x.faults[0].at_us <= hi_us;
    };
  };
  struct Case {
    int64_t at_us, lo_us, hi_us;  // the pause's start; where the schedule fails
    int64_t want_us;              // where the shrinker leaves it
    const char* why;
  };
  for (const Case& k : {Case{472'000, 471'000, 720'000, 595'000, "the middle of 471.5 .. 718.5 ms"},
                        Case{472'000, 471'000, 482'000, 481'500, "10 ms of room: the first offset that fails"},
                        Case{717'800, 700'000, 718'400, 708'500, "0.7 ms before the next command: 10 ms before"},
                        Case{472'000, 471'000, 473'000, 472'000, "a window of 1 ms: nowhere to go"},
                        Case{571'500, 471'000, 720'000, 571'500, "not poised: 100 ms from both commands"}}) {
    c.faults[0].at_us = k.at_us;
    ShrinkStats stats;
    const Candidate out = Shrink(c, fails_in(k.lo_us, k.hi_us), o, &stats);
    ASSERT_EQ(out.faults.size(), 1u) << k.why;
    EXPECT_EQ(out.faults[0].at_us, k.want_us) << k.why;
    EXPECT_EQ(stats.centered, k.want_us != k.at_us ? 1 : 0) << k.why;
  }
  c.faults[0].at_us = 472'000;  // without protocol points nothing moves
  ShrinkStats no_points;
  EXPECT_EQ(Shrink(c, fails_in(471'000, 720'000), 0, &no_points).faults[0].at_us, 472'000);
}

TEST(Shrink, StopsWhenItsRunsAreSpent) {
  ShrinkOptions o;
  o.max_tries = 5;
  ShrinkStats stats;
  const Candidate out = Shrink(Start(), PauseOf700, o, &stats);
  EXPECT_EQ(stats.tries, 5);
  EXPECT_TRUE(stats.out_of_tries);
  EXPECT_TRUE(PauseOf700(out));  // what it reached still fails
  ShrinkStats full;
  Shrink(Start(), PauseOf700, ShrinkOptions(), &full);
  EXPECT_FALSE(full.out_of_tries);
}

TEST(ShrinkMoves, MergesAndMovesAreBoundedAndKeepTheKind) {
  MoveLimits l;
  l.clients = 3;
  l.max_magnitude_ms = [](K) -> int64_t { return 3000; };
  const auto merged = Merges(Pause(0, 100, 200), Pause(0, 250, 300), l);
  ASSERT_FALSE(merged.empty());
  EXPECT_EQ(merged[0].at_us, 100'000);
  EXPECT_EQ(merged[0].duration_us, 450'000);  // 100 to 550
  EXPECT_TRUE(Merges(Pause(0, 100, 200), Pause(1, 250, 300), l).empty());  // another client
  EXPECT_TRUE(Merges(Pause(0, 100, 200), CrashNode(0, 250), l).empty());   // another kind
  std::vector<ProtocolPoint> many;
  for (int i = 1; i <= 500; ++i) many.push_back({0, 0, "SET", i, i * 1000});
  const auto moves = Moves(Pause(0, 100, 200), Pause(1, 900, 50), many, l);
  EXPECT_LE(moves.size(), kMaxMovesPerFault);
  for (const FaultAction& g : moves) EXPECT_EQ(g.kind, K::kPauseClient);
  l.kinds = {K::kPauseClient, K::kCrashClient};
  ASSERT_EQ(Simpler(Pause(0, 100, 200), l).size(), 1u);
  EXPECT_EQ(Simpler(Pause(0, 100, 200), l)[0].kind, K::kCrashClient);
  l.kinds = {K::kPauseClient};
  EXPECT_TRUE(Simpler(Pause(0, 100, 200), l).empty());  // not a kind of the space
}

// A pause lengthened by the dropped fault's magnitude and to the longest the space allows (each
// once, only longer), for the shrinker to align on the longer pause's own run.
TEST(ShrinkMoves, StretchesLengthenAClientPauseOnly) {
  MoveLimits l;
  l.max_magnitude_ms = [](K) -> int64_t { return 3000; };
  const auto longer = Stretches(Pause(0, 100, 400), Pause(1, 900, 300), l);
  ASSERT_EQ(longer.size(), 2u);
  EXPECT_EQ(longer[0].duration_us, 700'000);
  EXPECT_EQ(longer[1].duration_us, 3'000'000);
  EXPECT_EQ(longer[0].at_us, 100'000);
  ASSERT_EQ(Stretches(Pause(0, 100, 2900), Pause(1, 900, 300), l).size(), 1u);  // the sum is past the longest
  EXPECT_TRUE(Stretches(Pause(0, 100, 3000), Pause(1, 900, 300), l).empty());  // already the longest
  EXPECT_TRUE(Stretches(CrashNode(0, 100), Pause(1, 900, 300), l).empty());
}

// A release that must land between another client's GET and GETSET: the pause's end moves so
// that its client's command after it (200 µs after the end) lands within 20 µs of the other
// client's command at 400 ms; an on_send pause counts from its trigger command's time.
TEST(ShrinkMoves, AlignmentsPutAPausedClientsNextCommandNextToAnothersCommand) {
  MoveLimits l;
  l.clients = 2;
  l.max_magnitude_ms = [](K) -> int64_t { return 3000; };
  auto point = [](int client, const char* command, int64_t t_us) {
    ProtocolPoint p;
    p.client = client;
    p.command = command;
    p.t_us = t_us;
    return p;
  };
  const std::vector<ProtocolPoint> points = {point(0, "GET", 50'000), point(0, "DEL", 150'200),
                                             point(1, "GET", 400'000)};
  auto ends_near = [](const std::vector<FaultAction>& gs, int64_t begin_us, int64_t target_us) {
    for (const FaultAction& g : gs)
      if (std::llabs(begin_us + g.duration_us - target_us) <= 20) return true;
    return false;
  };
  const auto timed = Alignments(Pause(0, 100, 50), points, l);
  ASSERT_FALSE(timed.empty());
  EXPECT_LE(timed.size(), kMaxAlignments);
  EXPECT_TRUE(ends_near(timed, 100'000, 400'000 - 200));  // its DEL, 200 µs after the end, at 400 ms
  EXPECT_TRUE(ends_near(timed, 100'000, 400'000));        // the end itself there
  for (const FaultAction& g : timed) EXPECT_EQ(g.at_us, 100'000);
  FaultAction on_get = Pause(0, 0, 100);
  on_get.on_send = "GET";
  on_get.occurrence = 1;
  on_get.at_us = 0;
  EXPECT_TRUE(ends_near(Alignments(on_get, points, l), 50'000, 400'000));  // from the GET at 50 ms
  on_get.occurrence = 2;  // never sent: nothing to align
  EXPECT_TRUE(Alignments(on_get, points, l).empty());
  EXPECT_TRUE(Alignments(CrashNode(0, 100), points, l).empty());
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
