// `locklab bench-peers`: locklab's `token` and `redlock` side by side with the Redis lock
// libraries people run (node-redlock, redis-semaphore's Mutex and RedlockMutex with ioredis,
// redis-py's Lock), on the same redis-server processes, in one run.
//
// The peers run as small driver scripts (harness/bench/peers/node_peer.js, py_peer.py) that write one
// JSON line per event (t_us on CLOCK_MONOTONIC, client, ev, key, read/wrote) to a file; that log
// becomes a locklab History and the same checkers judge peers and locklab. locklab's rows go
// through RunOne with backend "redis" on the started servers' addresses.
//
// Rows: uncontended (1 client for a fixed time; N clients on N keys), contended (N clients on one
// key, a fixed number of acquisitions, each incrementing a shared counter inside the lock), on 1
// node and, for the Redlock implementations, on 5. Per row: acquisitions/s, acquire latency and
// wait, failures, Redis commands per acquisition (INFO commandstats deltas, and what the clients
// sent), mutual exclusion and the counter check. Next to them, redis-benchmark's rate for SET NX
// PX + the release script (the physical limit), and a pause test per implementation (the holder
// is stopped with SIGSTOP for longer than the TTL while a second process acquires).
//
// Every child process (drivers, redis-benchmark) dies with locklab (PR_SET_PDEATHSIG), is killed
// when its time limit passes and when the bench stops on an error; the servers are RedisServers.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "harness/check/checkers.h"
#include "sim/history.h"

namespace locklab {

// ---------------------------------------------------------------------------------------------
// Pieces (tested in bench_peers_test.cc).

// A driver's event log: one JSON object a line, {"t_us": N, "client": N, "ev": NAME, ...} with
// NAME one of acquire_start, acquire_ok, acquire_fail, enter, exit, release_ok, release_fail,
// crash (and pause_start / pause_end, which the bench adds itself). Optional fields: "key" (on
// acquire_start: the lock's key), "read" (on enter: the counter value read), "wrote" (on exit: the
// value written), "error". Mapping to History events: enter -> kEnter then kRead; exit -> kWriteOk,
// kExit, kReleaseStart (the drivers release right after leaving); crash -> kCrash.
struct PeerLog {
  std::vector<Event> events;                 // in the log's clock (raw CLOCK_MONOTONIC µs), log order
  std::map<int, std::string> key_of_client;  // the last "key" each client named
};
// Appends the log in `text` to *out. Blank lines are skipped. false + *error naming the line on a
// malformed line, an unknown event name or a missing field.
bool ParsePeerEventLog(const std::string& text, PeerLog* out, std::string* error);

// Events in time order (stable: same-time events keep their order), every time shifted so that
// the earliest event is at 0. Returns the shift (the earliest t_us; 0 for no events).
int64_t ShiftToEarliest(std::vector<Event>* events);

// What one row's history says.
struct RowCheck {
  CheckResult check;  // CheckAll over the whole history (latency, liveness; safety and resource
                      // are replaced below when the clients use several keys)
  SafetyResult safety;        // mutual exclusion, judged per key and summed over keys
  bool counter_judged = false;
  int64_t lost_updates = 0;   // counter_judged only
  int64_t acquired = 0, failed = 0, releases_failed = 0;
  double span_s = 0;          // first acquire_start to last event
  double rate_per_s = 0;      // acquired / span_s
  LatencySummary acquire;     // successful acquisitions: acquire_start -> acquire_ok
  LatencySummary wait;        // every request: acquire_start -> acquire_ok or acquire_fail
};
struct JudgeInput {
  // Which key each client locks; clients missing here share one key. Mutual exclusion is judged
  // among the clients of each key.
  std::map<int, std::string> key_of_client;
  // The counter check needs the counter's final value and one counter behind one lock: set only
  // when every client used the same key.
  bool counter_known = false;
  int64_t counter_initial = 0, counter_final = 0;
};
// `events` must be in time order (ShiftToEarliest).
RowCheck JudgeEvents(const std::vector<Event>& events, const JudgeInput& in);

// (INFO commandstats text is parsed by ParseCommandStats, harness/real/redis_server.h.)
struct CommandDelta {
  int64_t total = 0;
  std::map<std::string, int64_t> by_name;
  bool counter_went_back = false;  // a server's count fell (restarted): its after-value is used
};
// Sum over servers of after - before per command name, leaving out `exclude` (upper case names,
// e.g. INFO: the bench's own snapshots). before[i] and after[i] are server i's.
CommandDelta CommandStatsDelta(const std::vector<std::map<std::string, int64_t>>& before,
                               const std::vector<std::map<std::string, int64_t>>& after,
                               const std::vector<std::string>& exclude);

// (redis-benchmark's output is parsed by ParseRedisBenchmarkRps, harness/bench/redis_benchmark.h.)

// ---------------------------------------------------------------------------------------------
// Running a driver.

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

// Where the drivers and the node modules are, by default: the source tree's harness/bench/peers and
// the build directory's peers/ (make bench-peers installs node_modules there).
std::string DefaultPeerDriversDir();
std::string DefaultPeerModulesDir();

// ---------------------------------------------------------------------------------------------
// The benchmark.

struct BenchPeersOptions {
  std::string out = "results/bench/peers.json";
  std::string drivers_dir;  // "" = DefaultPeerDriversDir()
  std::string peers_dir;    // holds node_modules; "" = DefaultPeerModulesDir()
  std::string node = "node";
  std::string python = "/usr/bin/python3";  // Debian's Python: python3-redis lives there
  std::string retry = "queue";              // locklab's retry policy in extra contended rows (the rows
                                            // "default" use `locklab run`'s): the retry study's best
                                            // waiting policy for the token lock (FIFO wake-up on release)
  std::vector<std::string> retry_opts;      // k=v
  std::vector<std::string> only;            // implementations to run (empty: all)
  int clients = 50;
  int64_t duration_ms = 2000;   // uncontended rows
  int64_t count = 2000;         // contended rows: acquisitions in total
  int rounds = 5;               // uncontended locklab token rows and the limit, measured alternately
  int64_t ttl_ms = 10'000;      // the lock's TTL in the speed rows
  int64_t acquire_timeout_ms = 10'000;
  int64_t tuned_retry_ms = 10;  // the peers' "tuned" retry delay
  int64_t pause_ttl_ms = 1000, pause_ms = 2000, pause_hold_ms = 300, pause_at_ms = 100;
  bool pause = true;   // the pause test
  bool limit = true;   // redis-benchmark
  // With 2+ CPUs: the redis-servers run on CPU 0, every client (locklab itself, the drivers,
  // redis-benchmark) on CPU 1, the same placement for every row; otherwise the scheduler's choice
  // (same core or not) moves a one-client ping-pong by 2x from run to run.
  bool pin = true;
  // As root: idle CPUs poll instead of halting while the benchmark runs (IdlePollHold), so that a
  // one-client ping-pong measures the clients and the server, not a VM's vCPU wake-ups.
  bool idle_poll = true;
  bool quiet = false;  // no table
  bool progress = true;
  uint64_t seed = 1;
};

// Runs everything, prints the table to `out` (unless quiet), writes the JSON report. Returns the
// exit status: 0 every row ran, 1 some row could not run (the report says which) or the report
// could not be written, 2 bad options (*error).
int RunBenchPeers(const BenchPeersOptions& o, std::ostream& out, std::string* error);

// The subcommand's flags, and the command itself (exit status as above, one line on stderr).
void AddBenchPeersFlags(CLI::App* app, BenchPeersOptions* o);
int BenchPeersCommand(const BenchPeersOptions& o);

}  // namespace locklab
