// `locklab scenario ID|all|FILE.json`: runs the races of harness/scenarios/ by name
// (harness/scenarios/README.md lists them).
//
// One scenario: each of its variants (or --variant), on the simulator by default, a timeline
// table per run, a verdict line per run, a report per backend. `all`: every scenario x
// variant x backend that applies, one matrix. Exit status: 0 every observed verdict is the
// expected one; 1 one differs or a run did not complete; 2 bad input.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace locklab {

struct ScenarioFlags {
  std::string name;  // id, "all" or a path
  std::vector<std::string> variants;
  std::string algorithm;  // replaces the variants' algorithm; nothing is judged then
  std::string backend = "sim";
  uint64_t seed = 1;
  std::string profile = "default";  // the simulator's cost profile (RunSpec::profile)
  std::string trace = "commands";   // what the histories keep (RunSpec::trace)
  std::vector<std::string> params;  // k=v
  std::optional<double> ttl_ms, pause_ms, delay_ms, skew_ms;
  std::string out, out_dir = "results/scenarios", scenario_dir;
  std::vector<std::string> redis;
  bool also = false, quiet = false, no_progress = false, no_timeline = false;
  int jobs = 1;  // simulator runs at the same time (--jobs; default on the command line: the cores)
};

void AddScenarioFlags(CLI::App* app, ScenarioFlags* f);
int ScenarioCommand(const ScenarioFlags& f);

// The lines `locklab list` shows under "Scenarios" ("" when the directory cannot be read).
std::string ScenarioListText(const std::string& dir);

}  // namespace locklab
