// `locklab calibrate`: measures this machine's costs on redis-server processes it starts
// itself (harness/real/calibrate.h says what and how) and writes them as a cost profile for the
// simulator (harness/run/profile.h). Progress lines on stderr, a table of the figures (mean,
// p50, p99) on stdout. Exit status: 0 profile written; 1 a measurement failed or the file
// could not be written; 2 bad input. `--check FILE` measures nothing: it loads a profile and
// prints its table (exit 0), or names the bad key (exit 2). `--machine-only FILE` measures only
// the machine's stalls (seconds) and writes FILE's profile with them to --out.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

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
