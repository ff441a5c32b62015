// What `locklab explore` hands back for a finding: the shrunk schedule as a scenario file (the
// format of harness/scenarios/, one variant "found" with the algorithm and an `expect` saying
// what it showed), and its replays from that file, on the simulator and on real Redis, judged
// the way `locklab scenario FILE` judges them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "algorithms/status.h"
#include "harness/explore/explore.h"
#include "harness/scenario/scenario.h"

namespace locklab {

// The scenario document of the minimal schedule. `command`: the explore command line (kept in
// the story so the file says where it came from).
nlohmann::json FoundScenarioDoc(const ExploreOptions& o, const ExploreResult& r, const std::string& command);

// The file's variant "found" run on `backend` (seed 1, as `locklab scenario FILE` runs it),
// judged against its expect.
struct FileReplay {
  bool ok = false;     // compiled and completed
  std::string error;
  bool matches = false;  // the verdict is the expected one
  Verdict verdict;
  std::string table;   // ScenarioTimelineTable, as `locklab scenario` prints it
  std::string replay;  // the command that replays it
  std::vector<std::string> notes;
  size_t faults = 0;   // steps in the file
};
FileReplay ReplayFoundFile(const std::string& path, const std::string& backend);

// The timeline table of a candidate's simulator run (what the explorer saw).
std::string CandidateTable(const ExploreSpace& space, const Candidate& c);

}  // namespace locklab
