// `locklab explore`: searches fault schedules on the simulator for a race nobody wrote down,
// shrinks the first one found to a minimal scenario file (harness/explore/), replays that file
// as `locklab scenario FILE` does, and with --confirm-real on real redis-server processes.
// `locklab explore --findability`: the findability table of the hand-written scenarios.
//
// Exit status: 0 the search ended (a finding, or the budget spent: both are results); 1 a file
// could not be written or the written scenario did not replay what the explorer saw; 2 bad
// input, one line naming it, before any run.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace locklab {

struct ExploreFlags {
  std::string algorithm = "token";
  std::string workload;
  int clients = 3;
  int64_t requests = 2;
  int64_t ttl_ms = 1000;
  std::string faults = "pause_client";
  std::vector<std::string> ranges;  // NAME=LO-HI{ttl|ms}
  int max_faults = 4;
  std::string strategy = "both";
  std::string find = "overlap,damage,stuck";
  double liveness_bound_ms = 0;
  std::string retry = "fixed:sleep-ms=50";
  int64_t command_timeout_ms = -1, acquire_timeout_ms = -1, stock = -1;
  int app_servers = -1;
  bool replica = false;
  int64_t node_min_down_ms = 0;
  int64_t budget_runs = 1'000'000;
  double budget_s = 60;
  uint64_t seed = 1;
  int jobs = 1;
  int64_t run_seed = -1;  // replay one run
  std::string out;
  bool no_shrink = false;
  double shrink_margin = 0.1;
  bool confirm_real = false;
  int confirm_tries = 3;
  bool no_progress = false;
  // --findability
  bool findability = false;
  int seeds = 10, fixed_seeds = 1;
  std::vector<std::string> only;
  std::string found_dir, scenario_dir;
};

void AddExploreFlags(CLI::App* app, ExploreFlags* f);
// `command`: the command line, kept in the found scenario's story.
int ExploreCommand(const ExploreFlags& f, const std::string& command);

// The `explore` subcommand of `app`, with its flags.
class ExploreCli {
 public:
  explicit ExploreCli(CLI::App& app);
  bool parsed() const { return sub_->parsed(); }
  int Run(const std::string& command) const { return ExploreCommand(flags_, command); }

 private:
  CLI::App* sub_ = nullptr;
  ExploreFlags flags_;
};

}  // namespace locklab
