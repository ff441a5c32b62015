// The explorer end to end on the simulator: it finds a known race from scratch, shrinks it, and
// the scenario file it writes replays that very run; a lock without that race spends its budget.
#include "harness/explore/explore.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "harness/explore/found.h"
#include "harness/explore/generate.h"
#include "harness/run/write_file.h"
#include "harness/testing/temp_dir_test.h"
#include "harness/testing/test_specs.h"

namespace locklab {
namespace {

using K = FaultAction::Kind;

// A space of one fault kind, finding one class, with `clients` clients and the other defaults
// (not yet checked: CheckSpace).
ExploreSpace OneKindSpace(const std::string& algorithm, K kind, FindingClass find,
                          int clients = ExploreSpace().clients) {
  ExploreSpace s;
  s.algorithm = algorithm;
  s.clients = clients;
  s.kinds = {kind};
  s.find = {find};
  return s;
}

// A token lock released by a plain DEL, under client pauses: a paused holder's late DEL deletes
// its successor's lock and a third client gets in (harness/scenarios/pause-misdelete.json).
ExploreSpace Misdelete(const std::string& algorithm) {
  ExploreSpace s = OneKindSpace(algorithm, K::kPauseClient, FindingClass::kOverlapUnexplained);
  EXPECT_TRUE(CheckSpace(&s).ok());
  return s;
}

ExploreOptions Options(const ExploreSpace& s, int64_t budget_runs, int jobs) {
  ExploreOptions o;
  o.space = s;
  o.seed = 1;
  o.budget_runs = budget_runs;
  o.budget_s = 120;
  o.jobs = jobs;
  return o;
}

class ExploreTest : public TempDirTest {
 protected:
  ExploreTest() : TempDirTest("locklab_explore_test") {}

  // Writes r's found file as `name` and replays it on the simulator: it must run and show what
  // it says it shows.
  FileReplay WriteAndReplay(const std::string& name, const ExploreOptions& o, const ExploreResult& r) {
    const std::string path = Path(name);
    EXPECT_TRUE(WriteFileAtomic(path, FoundScenarioDoc(o, r, "test").dump(2) + "\n").ok());
    FileReplay replay = ReplayFoundFile(path, "sim");
    EXPECT_TRUE(replay.ok) << replay.error;
    EXPECT_TRUE(replay.matches) << replay.verdict.expected << " / " << replay.verdict.observed;
    return replay;
  }
};

// The token lock (compare-and-delete release) has no validity check: a client that freezes
// between sending its SET and reading the reply for longer than the TTL enters after its key
// expired, beside the next holder. Nobody wrote that scenario down; the explorer finds it.
TEST_F(ExploreTest, TokenFreezingBeforeItsReplyIsFound) {
  const ExploreResult r = Explore(Options(Misdelete("token"), 20'000, 2), nullptr);
  ASSERT_TRUE(r.found);
  ASSERT_EQ(r.minimal.faults.size(), 1u);
  EXPECT_EQ(r.minimal.faults[0].on_send, "SET");
  EXPECT_GE(r.minimal.faults[0].duration_us, 900'000);  // about a TTL (1000 ms)
}

TEST_F(ExploreTest, FindsShrinksAndTheFileReplaysTheRun) {
  const ExploreOptions o = Options(Misdelete("token:release=del"), 20'000, 1);
  const ExploreResult r = Explore(o, nullptr);
  ASSERT_TRUE(r.found) << r.runs << " runs";
  EXPECT_EQ(r.stopped_by, "finding");
  ASSERT_TRUE(r.shrunk);
  EXPECT_TRUE(r.minimal_observed.overlap_unexplained);
  EXPECT_LE(r.minimal.faults.size(), 1u);  // the hand-written scenario needs one pause
  EXPECT_LE(r.minimal.faults.size(), r.finding.candidate.faults.size());
  EXPECT_LE(r.minimal.clients.size(), 3u);

  const FileReplay replay = WriteAndReplay("found.json", o, r);
  EXPECT_EQ(replay.faults, r.minimal.faults.size());
  EXPECT_EQ(replay.table, CandidateTable(o.space, r.minimal));
  EXPECT_EQ(replay.table, ReplayFoundFile(Path("found.json"), "sim").table);

  // The run is replayed from its run seed alone, and --jobs does not change what is found.
  const RunOutcome again = ExploreOne(o.space, r.finding.run_seed);
  EXPECT_TRUE(again.candidate == r.finding.candidate);
  EXPECT_EQ(again.findings, r.finding.findings);
  const ExploreResult two = Explore(Options(o.space, 20'000, 2), nullptr);
  EXPECT_EQ(two.found_run, r.found_run);
  EXPECT_TRUE(two.minimal == r.minimal);
}

// gc-pause's race made by two pauses of the holder inside one critical section: the first ends
// while A still has its lease (A would finish in time), the second begins when A resumes, so only
// together do they keep A frozen past its TTL and let B in before A's stale write. One pause from
// the first's start to the second's end does the same: the shrinker merges them and ends at one.
TEST_F(ExploreTest, TwoPausesInOneHoldAreMergedIntoOne) {
  ExploreSpace s = OneKindSpace("token", K::kPauseClient, FindingClass::kDamage, 2);
  ASSERT_TRUE(CheckSpace(&s).ok());
  Candidate c;
  c.clients = {{0, 300, 1}, {200, 300, 1}};
  auto pause = [](int64_t at_ms, int64_t ms) {
    FaultAction f;
    f.kind = K::kPauseClient;
    f.target = 0;
    f.at_us = at_ms * 1000;
    f.duration_us = ms * 1000;
    return f;
  };
  c.faults = {pause(100, 600), pause(700, 600)};
  const StillFails fails = [&](const Candidate& x) {
    const CandidateRun r = RunCandidate(s, x);
    return r.ok && r.observed.damage;
  };
  ASSERT_TRUE(fails(c));
  for (const FaultAction& f : c.faults) {
    Candidate alone = c;
    alone.faults = {f};
    ASSERT_FALSE(fails(alone)) << "one pause alone must not make the race";
  }
  ShrinkStats stats;
  const Candidate out = Shrink(c, fails, ShrinkOptionsFor(s, 0.1), &stats);
  ASSERT_EQ(out.faults.size(), 1u);
  EXPECT_EQ(stats.merged, 1);
  EXPECT_EQ(out.faults[0].at_us, 100'000);
  EXPECT_GT(out.faults[0].duration_us, 600'000);  // longer than either pause was
  EXPECT_TRUE(fails(out));
  ShrinkStats again;
  EXPECT_TRUE(Shrink(c, fails, ShrinkOptionsFor(s, 0.1), &again) == out);  // deterministic
  EXPECT_EQ(again.tries, stats.tries);
}

// A semaphore of 2 permits: A, frozen while acquiring, gets in late beside B and C; the checker
// flags A+B and B+C (three holders at once), while A+C alone is two holders, which 2 permits allow.
// The unexplained pairs are the checker's pairs that no pause explains: not A+C, so the found
// file's `expect` is the verdict its replay gives.
TEST_F(ExploreTest, UnexplainedPairsAreTheCheckersPairs) {
  ExploreSpace s = OneKindSpace("semaphore:permits=2", K::kPauseClient, FindingClass::kOverlapUnexplained);
  ASSERT_TRUE(CheckSpace(&s).ok());
  Candidate c;
  c.clients = {{126, 467, 1}, {363, 395, 1}, {209, 500, 2}};
  FaultAction f;
  f.kind = K::kPauseClient;
  f.target = 0;
  f.on_send = "semaphore_acquire";
  f.occurrence = 1;
  f.duration_us = 629'000;
  c.faults = {f};
  const CandidateRun r = RunCandidate(s, c);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_TRUE(r.observed.overlap);
  const auto all = UnexplainedOverlaps(r.result.events, r.result.duration_us);
  EXPECT_NE(std::find(all.begin(), all.end(), std::make_pair(0, 2)), all.end());  // A+C held together
  EXPECT_EQ(std::find(r.observed.pairs.begin(), r.observed.pairs.end(), std::make_pair(0, 2)), r.observed.pairs.end());
  ASSERT_TRUE(r.observed.overlap_unexplained);
  for (const auto& p : r.observed.unexplained_pairs)
    EXPECT_NE(std::find(r.observed.pairs.begin(), r.observed.pairs.end(), p), r.observed.pairs.end());
  ExploreOptions o = Options(s, 1, 1);
  ExploreResult found;
  found.found = found.shrunk = true;
  found.finding.candidate = found.minimal = c;
  found.minimal_observed = r.observed;
  WriteAndReplay("semaphore.json", o, found);
}

// SETNX/DEL with no expiry: a holder that crashes leaves the lock held for ever. The found file
// judges `stuck`, so it carries the liveness bound.
TEST_F(ExploreTest, AStuckLockIsFoundAndItsFileReplays) {
  ExploreSpace s = OneKindSpace("naive", K::kCrashClient, FindingClass::kStuckUnexplained);
  ASSERT_TRUE(CheckSpace(&s).ok());
  const ExploreOptions o = Options(s, 5'000, 2);
  const ExploreResult r = Explore(o, nullptr);
  ASSERT_TRUE(r.found);
  EXPECT_EQ(r.minimal.faults.size(), 1u);
  const FileReplay replay = WriteAndReplay("stuck.json", o, r);
  EXPECT_NE(replay.verdict.expected.find("stuck"), std::string::npos);
}

// getset-nil's broken timestamp lock (harness/scenarios/getset-nil.json) with explore seed 10:
// its finding shrinks to two pauses (one to make the holder's value stale, one to put a release
// inside the window); the search with one fault a run finds the race with one pause, which the
// result keeps, and its file replays.
TEST_F(ExploreTest, ASearchWithFewerFaultsReplacesATwoFaultSchedule) {
  ExploreSpace s = OneKindSpace("timestamp:getset-nil=fail", K::kPauseClient, FindingClass::kStuckUnexplained, 2);
  s.liveness_bound_ms = 500;
  s.run["acquire_timeout_ms"] = 10'000;
  s.run["profile"] = SeedsChosenProfile();  // seed 10 must keep finding a two-fault schedule first
  ASSERT_TRUE(CheckSpace(&s).ok());
  ExploreOptions o = Options(s, 20'000, 2);
  o.seed = 10;
  const ExploreResult r = Explore(o, nullptr);
  ASSERT_TRUE(r.found);
  EXPECT_EQ(r.fewer_searches, 1);
  EXPECT_NE(r.fewer_run_seed, 0u);
  EXPECT_EQ(r.minimal.faults.size(), 1u);
  EXPECT_TRUE(r.minimal_observed.Has(FindingClass::kStuckUnexplained));
  EXPECT_TRUE(WriteAndReplay("fewer.json", o, r).matches);
}

// Fencing under client pauses: holders overlap, but the resource refuses every stale access, so
// damage is never found and the budget runs out.
TEST_F(ExploreTest, ALockWithoutTheRaceSpendsItsBudget) {
  ExploreSpace s = OneKindSpace("fencing", K::kPauseClient, FindingClass::kDamage);
  ASSERT_TRUE(CheckSpace(&s).ok());
  const ExploreResult r = Explore(Options(s, 2'000, 2), nullptr);
  EXPECT_FALSE(r.found);
  EXPECT_EQ(r.stopped_by, "runs");
  EXPECT_EQ(r.runs, 2'000);
  EXPECT_EQ(r.incomplete, 0);
  EXPECT_GT(r.sim_runs, r.runs);  // targeted runs add their dry runs
}

TEST(UnexplainedOverlaps, APauseExplainsItsHoldersOverlapOnly) {
  std::vector<Event> ev;
  auto add = [&](int64_t ms, int client, Ev type) { ev.push_back({ms * 1000, client, type, 0, ""}); };
  add(0, 0, Ev::kAcquireStart);
  add(10, 0, Ev::kEnter);
  add(20, 0, Ev::kPauseStart);
  add(100, 1, Ev::kAcquireStart);
  add(1100, 1, Ev::kEnter);
  add(1200, 2, Ev::kAcquireStart);
  add(1210, 2, Ev::kEnter);
  add(1250, 2, Ev::kExit);
  add(1300, 1, Ev::kExit);
  add(2000, 0, Ev::kPauseEnd);
  add(2100, 0, Ev::kExit);
  const auto pairs = UnexplainedOverlaps(ev, 3'000'000);
  ASSERT_EQ(pairs.size(), 1u);  // A+B and A+C are A's pause; B+C is not
  EXPECT_EQ(pairs[0], std::make_pair(1, 2));
  // A pause before the hold (between sending SET and reading its reply) explains nothing.
  std::vector<Event> acquire;
  auto at = [&](int64_t ms, int client, Ev type) { acquire.push_back({ms * 1000, client, type, 0, ""}); };
  at(0, 0, Ev::kAcquireStart);
  at(1, 0, Ev::kPauseStart);
  at(1500, 0, Ev::kPauseEnd);
  at(1500, 0, Ev::kEnter);
  at(1100, 1, Ev::kEnter);
  std::stable_sort(acquire.begin(), acquire.end(), [](const Event& a, const Event& b) { return a.t_us < b.t_us; });
  at(1600, 0, Ev::kExit);
  at(1700, 1, Ev::kExit);
  EXPECT_EQ(UnexplainedOverlaps(acquire, 2'000'000), (std::vector<std::pair<int, int>>{{0, 1}}));
}

// Readers of a read-write lock may share: two read holds are never a pair, a reader and a writer
// are. A second enter without an exit (a reentrant lock) keeps the hold's first enter, as the
// checkers count it: the overlap before the re-entry is still one.
TEST(UnexplainedOverlaps, ReadersShareAndAReentryKeepsItsHold) {
  std::vector<Event> ev;
  auto add = [&](int64_t ms, int client, Ev type, const char* detail = "") {
    ev.push_back({ms * 1000, client, type, 0, detail});
  };
  add(0, 0, Ev::kEnter, kReadHold);
  add(10, 1, Ev::kEnter, kReadHold);
  add(50, 0, Ev::kExit);
  add(60, 1, Ev::kExit);
  EXPECT_TRUE(UnexplainedOverlaps(ev, 100'000).empty());
  add(70, 1, Ev::kEnter, kReadHold);
  add(80, 2, Ev::kEnter);  // a writer inside with a reader
  add(90, 1, Ev::kExit);
  add(95, 2, Ev::kExit);
  EXPECT_EQ(UnexplainedOverlaps(ev, 100'000), (std::vector<std::pair<int, int>>{{1, 2}}));

  std::vector<Event> re;
  auto at = [&](int64_t ms, int client, Ev type) { re.push_back({ms * 1000, client, type, 0, ""}); };
  at(0, 0, Ev::kEnter);
  at(10, 1, Ev::kEnter);
  at(20, 1, Ev::kExit);
  at(30, 0, Ev::kEnter);  // client 0 enters again, still inside: its hold began at 0
  at(40, 0, Ev::kExit);
  EXPECT_EQ(UnexplainedOverlaps(re, 100'000), (std::vector<std::pair<int, int>>{{0, 1}}));
}

TEST(UnexplainedStuck, PausesAndRecentCrashesExplainWaiting) {
  std::vector<Event> ev;
  auto add = [&](int64_t ms, int client, Ev type) { ev.push_back({ms * 1000, client, type, 0, ""}); };
  add(0, 0, Ev::kAcquireStart);  // A acquires at once, then crashes holding: its key lives a TTL (1000)
  add(0, 0, Ev::kAcquireOk);
  add(0, 0, Ev::kEnter);
  add(100, 1, Ev::kAcquireStart);  // B waits from 100
  add(200, 0, Ev::kCrash);         // explained until 1200
  add(3000, 2, Ev::kPauseStart);   // C freezes (it was not waiting): explains 3000..3500
  add(3500, 2, Ev::kPauseEnd);
  add(4000, 1, Ev::kAcquireOk);
  add(4000, 1, Ev::kEnter);
  add(4100, 1, Ev::kExit);
  // Waiting with no holder from 200 to 4000: unexplained 1200..3000 (1800 ms) and 3500..4000.
  EXPECT_DOUBLE_EQ(UnexplainedStuckMs(ev, 5'000'000, 1000), 1800);
  EXPECT_DOUBLE_EQ(UnexplainedStuckMs(ev, 5'000'000, 3000), 500);  // a longer TTL explains more
}

TEST(UnexplainedReleaseFailures, APauseInTheHoldExplainsAFailedRelease) {
  std::vector<Event> ev;
  auto add = [&](int64_t ms, int client, Ev type) { ev.push_back({ms * 1000, client, type, 0, ""}); };
  add(0, 0, Ev::kEnter);
  add(10, 0, Ev::kPauseStart);
  add(2000, 0, Ev::kPauseEnd);
  add(2010, 0, Ev::kExit);
  add(2020, 0, Ev::kReleaseFail);  // explained: A was frozen in that hold
  add(3000, 1, Ev::kEnter);
  add(3100, 1, Ev::kExit);
  add(3110, 1, Ev::kReleaseFail);  // not explained
  EXPECT_EQ(UnexplainedReleaseFailures(ev, 4'000'000), 1);
}

TEST(ProtocolPoints, CountsEachClientsCommandsByName) {
  std::vector<Event> ev = {{1000, 0, Ev::kCommand, 0, "set lock a NX PX 1000 -> OK"},
                           {2000, 1, Ev::kCommand, 0, "set lock b NX PX 1000 -> (nil)"},
                           {3000, 0, Ev::kCommand, 0, "compare_and_delete lock | a -> 1"},
                           {4000, 1, Ev::kCommand, 0, "set lock b NX PX 1000 -> OK"}};
  const auto p = ProtocolPoints(ev);
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0].command, "SET");
  EXPECT_EQ(p[2].command, "compare_and_delete");
  EXPECT_EQ(p[3].occurrence, 2);
  EXPECT_EQ(p[3].t_ms(), 4);
}

TEST(ExploreSpace, BadInputNamesTheProblem) {
  EXPECT_FALSE(ParseMagnitudeRange("3-1ttl", "--range pause").ok());
  EXPECT_FALSE(ParseMagnitudeRange("1-3", "--range pause").ok());
  EXPECT_FALSE(ParseMagnitudeRange("a-3ms", "--range pause").ok());
  EXPECT_FALSE(ParseMagnitudeRange("-1-3ms", "--range pause").ok());
  EXPECT_TRUE(ParseMagnitudeRange("0.1-3ttl", "--range pause").ok());
  EXPECT_EQ(ParseMagnitudeRange("100-3000ms", "x")->HiMs(1000), 3000);
  EXPECT_EQ(ParseMagnitudeRange("0.5-2ttl", "x")->HiMs(1000), 2000);
  EXPECT_FALSE(ParseKinds("pause_client,nope").ok());
  EXPECT_TRUE(ParseKinds("none")->empty());
  EXPECT_FALSE(ParseFindingClasses("overlap,nope").ok());
  EXPECT_FALSE(ParseStrategy("random").ok());
  ExploreSpace s;
  s.kinds = {K::kFailover};
  EXPECT_NE(CheckSpace(&s).message().find("replica"), std::string::npos);
  s.kinds = {};
  s.algorithm = "nope";
  EXPECT_FALSE(CheckSpace(&s).ok());
  s.algorithm = "redlock";
  ASSERT_TRUE(CheckSpace(&s).ok());
  EXPECT_EQ(s.nodes, 5);
}

}  // namespace
}  // namespace locklab
