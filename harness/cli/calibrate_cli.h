// `locklab calibrate`: measures this machine's costs on redis-server processes it starts
// itself (harness/real/calibrate.h says what and how) and writes them as a cost profile for the
// simulator (harness/run/profile.h). Progress lines on stderr, a table of the figures (mean,
// p50, p99) on stdout. Exit status: 0 profile written; 1 a measurement failed or the file
// could not be written; 2 bad input. `--check FILE` measures nothing: it loads a profile and
// prints its table (exit 0), or names the bad key (exit 2). `--machine-only FILE` measures only
// the machine's stalls (seconds) and writes FILE's profile with them to --out; `--held-only
// FILE` measures only a held command's CPU per step of the client loop, the same way.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "algorithms/status.h"
#include "harness/real/calibrate.h"
#include "sim/cost_model.h"

namespace locklab {

// The subcommand, its flags, and what it does when parsed.
class CalibrateCli {
 public:
  // Adds `calibrate` to `app`.
  explicit CalibrateCli(CLI::App& app);
  bool parsed() const { return sub_->parsed(); }
  int Run() const;

 private:
  CLI::App* sub_ = nullptr;
  CLI::Option* rounds_o_ = nullptr;
  // What --machine-only and --held-only do to the profile they read: measure, and return it changed.
  using ProfileStep = std::function<Result<sim::CostModel>(const CalibrateOptions&, sim::CostModel,
                                                           nlohmann::ordered_json* measurements)>;
  // Reads `in` (exit 2 naming the problem), runs `step`, prints the table and writes `path`.
  int RunOnProfile(const std::string& flag, const std::string& in, const std::string& path, int rounds,
                   const ProfileStep& step, const char* what) const;
  int RunMachineOnly(const std::string& path, int rounds) const;
  int RunHeldOnly(const std::string& path, int rounds) const;
  std::string out_, check_, machine_only_, held_only_;
  int rounds_ = 5;
  bool quick_ = false;
  int fewer_connections_ = 0;
  bool no_progress_ = false;
};

// results/calibration/profile-<host>.json
std::string DefaultProfilePath();

}  // namespace locklab
