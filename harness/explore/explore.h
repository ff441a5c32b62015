// The search: candidates drawn from an explore space, one simulator run each, until a run shows
// a finding or the budget (runs, seconds) is spent; then the finding is shrunk (shrink.h) and
// written as a scenario file.
//
// Run i of an exploration with seed S draws everything from RunSeed(S, i), so a run is replayed
// from that one number (ExploreOne). With jobs > 1 runs go on several threads in batches; the
// finding reported is the first in run order, so the result does not depend on jobs (only the
// run count at which a time budget stops may).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/explore/candidate.h"
#include "harness/explore/shrink.h"
#include "harness/explore/space.h"

namespace locklab {

constexpr int64_t kMaxExploreRuns = 100'000'000;

struct ExploreOptions {
  ExploreSpace space;  // checked (CheckSpace)
  uint64_t seed = 1;
  int64_t budget_runs = 1'000'000;
  double budget_s = 60;
  int jobs = 1;
  bool shrink = true;
  double shrink_margin = 0.1;
};

uint64_t RunSeed(uint64_t explore_seed, int64_t run);

// One run: the candidate drawn from `run_seed`, run on the simulator, classified.
struct RunOutcome {
  uint64_t run_seed = 0;
  Strategy strategy = Strategy::kSwarm;  // the one this run used
  Candidate candidate;
  Observed observed;
  std::vector<FindingClass> findings;
  std::string error;    // compile error or a run that did not complete
  int sim_runs = 0;     // 2 for targeted runs (the dry run)
};
RunOutcome ExploreOne(const ExploreSpace& space, uint64_t run_seed);

// Runs a candidate on the simulator and classifies it (the shrinker's predicate, the replays).
struct CandidateRun {
  bool ok = false;
  std::string error;
  ScenarioRun run;
  RunResult result;  // with its events
  Observed observed;
};
CandidateRun RunCandidate(const ExploreSpace& space, const Candidate& c, const std::string& backend = "sim");

struct ExploreResult {
  int64_t runs = 0;       // candidates tried
  int64_t sim_runs = 0;   // simulator runs, dry runs included
  int64_t incomplete = 0; // runs that did not compile or complete (not findings)
  std::string first_error;
  double seconds = 0;     // searching, before shrinking
  bool found = false;
  std::string stopped_by;  // "finding", "runs" or "seconds"
  int64_t found_run = 0;   // 1-based
  RunOutcome finding;
  FindingClass primary = FindingClass::kOverlap;  // what the shrinker keeps
  // Shrinking (found && shrink):
  bool shrunk = false;
  Candidate minimal;
  Observed minimal_observed;
  ShrinkStats shrink_stats;   // of the schedule kept as minimal; tries counts every shrink
  double shrink_seconds = 0;  // shrinking and the searches for fewer faults
  // Fewer faults, shrinking's last step: when the minimal schedule has k >= 2 faults, the space
  // is searched again with at most k - 1 faults a run (finding the primary class only, at most
  // kFewerFaultsRuns runs), and what it finds, shrunk, replaces the minimal schedule if it has
  // fewer faults; again, down to one fault.
  int64_t fewer_searches = 0;     // searches run (0: the schedule shrank to one fault, or none)
  int64_t fewer_runs = 0;         // their runs
  uint64_t fewer_run_seed = 0;    // the run seed of the last schedule they replaced minimal with (0: none)
};
constexpr int64_t kFewerFaultsRuns = 20'000;
// " (and N runs of M searches with fewer faults, the last kept from run seed S)", or "" when
// none ran: for the lines and files that say how a finding was shrunk.
std::string FewerFaultsText(const ExploreResult& r);

// How Explore shrinks a finding in `space` (which must outlive the options): moves onto the
// protocol points of the candidate's own simulator runs, replacements of the space's kinds only,
// merged and moved magnitudes up to the space's range maxima.
ShrinkOptions ShrinkOptionsFor(const ExploreSpace& space, double margin);

// `progress`: called with a line about once a second while searching and when shrinking starts
// (may be empty).
ExploreResult Explore(const ExploreOptions& o, const std::function<void(const std::string&)>& progress);

// The whole explore space as replay flags ("--algorithm token --faults pause_client ..."),
// for the replay commands the explorer prints.
std::string SpaceFlags(const ExploreSpace& s);

}  // namespace locklab
