// The findability table: can `locklab explore` find, from scratch, the races the hand-written
// scenarios show? For each scenario (the retry study aside) its variants are sorted into broken
// and fixed by what they expect (below); each broken variant is explored from its algorithm, its
// run settings and clients count, and only the fault KINDS its file uses (not its timeline), with
// the generic ranges of ExploreSpace, over several explore seeds; each fixed variant under the
// same space and budget must show nothing.
//
// What counts as a finding for a scenario (its target classes): each of overlap, damage, stuck
// and releases-failed that some variant expects and another expects not to see; when none
// differs that way but a variant expects some pair apart (pause-misdelete), overlap-unexplained.
// When the scenario's faults include client pauses or crashes, each class becomes its
// -unexplained form where those faults explain it in every lock (space.h): a holder frozen inside
// its critical section overlaps its successor whatever the lock; a crashed holder's key outlives
// it by up to a TTL. The race that tells the variants apart is what those faults do not explain.
// A variant is broken when it expects a target class, fixed when it expects every target class
// absent.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "algorithms/status.h"
#include "harness/explore/explore.h"
#include "harness/scenario/scenario.h"

namespace locklab {

struct FindabilityOptions {
  std::string scenario_dir;
  std::vector<std::string> only;  // scenario ids (empty: all)
  int seeds = 10;                 // explore seeds 1..seeds per broken variant
  int fixed_seeds = 1;            // explore seeds per fixed variant
  int64_t budget_runs = 100'000;
  double budget_s = 60;
  int jobs = 1;
  bool confirm_real = false;      // replay the seed-1 shrunk scenario (in found_dir) on real Redis
  int confirm_tries = 3;          // that many times (real timing varies from run to run)
  std::string found_dir;          // where each variant's seed-1 shrunk scenario is written ("" = none)
};

// A scenario's target classes and its broken and fixed variants (names).
struct ScenarioRoles {
  std::vector<FindingClass> targets;
  std::vector<std::string> broken, fixed;
};
Result<ScenarioRoles> RolesOf(const Scenario& sc);

// The space a variant is explored in (see above), finding roles.targets. The scenario's whole
// fault list decides the kinds, so a fixed variant gets the same kinds as its broken one. A
// variant whose TTL is not the first broken variant's (a fix that lengthens the TTL) is searched
// with the broken variant's ranges turned into ms: the same timeline and faults that broke it.
Result<ExploreSpace> SpaceOf(const Scenario& sc, const std::string& variant, const ScenarioRoles& roles);

// Runs the table; `progress` gets a line per explore (may be empty). The JSON: schema
// "locklab.findability/1", the options, and a row per variant (see the README).
Result<nlohmann::json> RunFindability(const FindabilityOptions& o,
                                      const std::function<void(const std::string&)>& progress);
// The README's table from that JSON.
std::string FindabilityTable(const nlohmann::json& doc);

}  // namespace locklab
