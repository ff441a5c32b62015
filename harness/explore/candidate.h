// A candidate: one concrete schedule in an explore space (each client's program and the planned
// faults), written as a scenario file (the format of harness/scenarios/) and run through the
// same path `locklab scenario FILE` takes, so that what the explorer ran is what the file
// replays. Times and magnitudes are whole milliseconds.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/status.h"
#include "harness/explore/space.h"
#include "harness/run/run_spec.h"
#include "harness/scenario/scenario.h"
#include "sim/fault.h"

namespace locklab {

struct ExploreClient {
  int64_t start_ms = 0;
  int64_t hold_ms = 0;
  int64_t requests = 1;
  bool operator==(const ExploreClient&) const = default;
};

struct Candidate {
  std::vector<ExploreClient> clients;
  std::vector<FaultAction> faults;  // at_us, duration_us, delta_us: whole ms
  bool operator==(const Candidate& o) const;
};

// "A", "B", ... "Z", then "c26", "c27", ...
std::string ExploreClientName(int client);

// The scenario file of a candidate: its clients, its faults as steps, one variant "found" with
// the space's algorithm and `expect` (an object as scenario files take it; {} judges nothing).
struct ScenarioText {
  std::string id = "explored";
  std::string title = "a schedule found by locklab explore";
  std::string story;
  std::string source = "locklab explore";
  std::string note;
};
nlohmann::json CandidateScenario(const ExploreSpace& space, const Candidate& c, const nlohmann::json& expect,
                                 const ScenarioText& text);

// The candidate's run on a backend (seed 1, the seed `locklab scenario` uses by default).
Result<ScenarioRun> CompileCandidate(const ExploreSpace& space, const Candidate& c, const std::string& backend);

// What a run showed, by class.
struct Observed {
  bool completed = false;
  bool overlap = false, overlap_unexplained = false, damage = false, stuck = false, stuck_unexplained = false;
  bool releases_failed = false, releases_failed_unexplained = false;
  std::vector<std::pair<int, int>> pairs;           // overlapping pairs
  std::vector<std::pair<int, int>> unexplained_pairs;  // of `pairs`, those with an overlap no pause explains
  bool Has(FindingClass c) const;
  // The classes of `find` this run shows (empty: not a finding).
  std::vector<FindingClass> Findings(const std::vector<FindingClass>& find) const;
};
// `events`: the run's history (RunOne with keep_events).
Observed Classify(const RunResult& r, const std::vector<Event>& events, double liveness_bound_ms, int64_t ttl_ms);
// The pairs whose holds overlapped while neither holder had been frozen by a client pause during
// that hold (from its kEnter to its kExit): sorted, unique. A pause inside a critical section
// explains the overlap every lock with a TTL has (only fencing protects the resource then); a
// pause before the hold does not: a lock can measure how long acquiring took (Redlock's validity
// check does). Two readers' holds (a read-write lock) may share and are never a pair. The holds
// are the checkers' (harness/check/holds.h).
std::vector<std::pair<int, int>> UnexplainedOverlaps(const std::vector<Event>& events, int64_t end_us);

// The longest stretch (ms) with a waiter and no holder while no client was paused and no client
// had crashed within the last `ttl_ms`.
double UnexplainedStuckMs(const std::vector<Event>& events, int64_t end_us, int64_t ttl_ms);
// Failed releases by a client that no pause froze during the hold it released.
int64_t UnexplainedReleaseFailures(const std::vector<Event>& events, int64_t end_us);

// The scenario `expect` object for what a run showed of `classes`.
nlohmann::json ExpectFor(const Observed& o, const std::vector<FindingClass>& classes);
// "overlap A+B, damage"
std::string FindingsText(const Observed& o, const std::vector<FindingClass>& classes);

}  // namespace locklab
