// Running a peer driver (harness/bench/peers/node_peer.js, py_peer.py) as a child process
// (ChildProcess: it dies with locklab and is killed at its time limit) and reading what it leaves:
// its summary line on stdout and its event log (peer_log.h).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "algorithms/status.h"
#include "harness/bench/peer_log.h"

namespace locklab {

struct DriverCall {
  std::vector<std::string> argv;       // program (found on PATH) and arguments
  std::vector<std::string> extra_env;  // NAME=VALUE added to this process's environment
  std::string events_path;             // the --events file the arguments name
  int64_t timeout_ms = 60'000;         // SIGTERM after this, SIGKILL 2 s later
};
struct DriverResult {
  bool ok = false;          // exited 0 with a summary line and a readable log
  int exit_status = -1;     // as from waitpid's WEXITSTATUS, 128+signal when killed
  std::string error;        // why not ok
  nlohmann::json summary;   // the driver's summary line ({"summary": true, ...}) or null
  std::vector<nlohmann::json> other_lines;  // other JSON lines on stdout (e.g. {"holding": ...})
  PeerLog log;
};
// Runs the driver to its end (or its time limit) and reads its summary and event log.
DriverResult RunDriver(const DriverCall& call);

// The verdict on a driver the caller started and waited for itself (the pause test): `in_time`
// and `status` as from ChildProcess::Finish, `out` its stdout, `stderr_path` its stderr file.
DriverResult CompleteDriver(const DriverCall& call, bool in_time, int status, const std::string& out,
                            const std::string& stderr_path);

// A probe command's stdout, trimmed (a version string), within 20 s; Failed saying why when it
// cannot start, fails or prints nothing. Its stderr goes to tmp_dir/probe.stderr.
Result<std::string> Probe(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
                          const std::string& tmp_dir);

// Where the drivers and the node modules are, by default: the source tree's harness/bench/peers and
// the build directory's peers/ (make bench-peers installs node_modules there).
std::string DefaultPeerDriversDir();
std::string DefaultPeerModulesDir();

// Sleeps until t_us on CLOCK_MONOTONIC (MonotonicNowUs, harness/real/real_clock.h), at most 5000 s.
void SleepUntilUs(int64_t t_us);

}  // namespace locklab
