// RunSpec: one fully resolved run (algorithm x retry x workload x faults x seed x backend),
// and RunResult: what came out of it. A report's `config` is the RunSpec as JSON, so any
// run can be replayed from its report.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/options.h"
#include "algorithms/status.h"
#include "harness/check/checkers.h"
#include "harness/run/runtime.h"

namespace locklab {

// Faults drawn from the seed (rates) plus an explicit timed plan. All off by default.
struct FaultSpec {
  int64_t gc_pause_ms = 0;        // length of each stop-the-world pause
  double gc_pause_rate = 0;       // pauses per client per second (Poisson)
  double net_delay_ms = 0;        // mean one-way network delay (simulator: added to nothing
                                  // else; real Redis: held in the runtime on top of loopback)
  std::string net_dist = "constant";  // constant | uniform | long-tail
  double net_loss = 0;            // probability a message is lost (-> timeout)
  int64_t clock_skew_ms = 0;      // each client's wall clock offset, uniform in [-skew, +skew]
  double clock_drift_ppm = 0;     // each client's clock rate error, uniform in [-drift, +drift]
  std::vector<FaultAction> plan;  // explicit faults at given true times
};

// One client's own program in a scripted run (the scenarios): when it starts, how many requests
// it makes, how long it works inside each critical section. Times are ms of the client's
// monotonic clock from the start of the run.
struct ClientPlan {
  int64_t start_ms = 0;
  int64_t requests = 1;
  int64_t hold_ms = 0;
  int64_t acquire_timeout_ms = -1;  // -1: the run's acquire_timeout_ms
  bool read = false;                 // its requests take the lock for reading (rwlock)
  bool operator==(const ClientPlan&) const = default;
};

struct RunSpec {
  std::string backend = "sim";  // sim | redis
  std::string algorithm = "token";
  Options algorithm_options;    // resolved (defaults filled in) before the run
  std::string retry = "auto";
  Options retry_options;
  std::string workload = "counter";  // counter | seckill
  int clients = 10;
  int app_servers = 1;                // clients are spread over this many application servers:
                                      // client c runs on server c % app_servers; only the `local`
                                      // algorithm looks at it
  int64_t requests = 200;             // acquisitions attempted, in total over all clients
  int64_t ttl_ms = 1000;
  int64_t hold_ms = 10;               // think time inside the critical section
  // Holds of random length: each request's hold is uniform in [hold_ms - hold_spread_ms,
  // hold_ms + hold_spread_ms] ms, drawn from the client's seed; at most hold_ms. 0 (the default):
  // every hold is hold_ms and nothing is drawn (runs without it keep their bytes). Random holds
  // break the in-step cycle a fixed hold gives a run (README "Plateaus that did not rise, and
  // why"). In a report's config only when it is not 0. Scripted runs' plans keep their own holds.
  int64_t hold_spread_ms = 0;
  int64_t acquire_timeout_ms = 10000; // a request gives up after this long
  int64_t command_timeout_ms = 1000;  // a command with no reply by then has an unknown outcome
  int nodes = 0;                      // Redis endpoints; 0 = what the algorithm needs
  bool replica = false;               // endpoint 0 has an asynchronous replica (failover)
  // Who promotes the replica in a failover fault: "script" (locklab, at the planned time) or
  // "sentinel" (three real redis-sentinel; real backend only; implies replica). In a report's
  // config only when it is not "script".
  std::string failover_by = "script";
  // Redlock's delayed restart: a node that went down stays down at least this long; a restart_node
  // planned sooner waits (harness/run/delayed_restart.h). 0 (the default): restarts come when
  // planned. In a report's config only when it is not 0.
  int64_t node_min_down_ms = 0;
  int64_t stock = 100;                // seckill: initial stock
  double read_ratio = 0;              // share of requests that only read the resource under a read
                                      // lock (rwlock; other locks take their one lock either way)
  uint64_t seed = 1;
  // The simulator's cost profile (harness/run/profile.h): "default" (the committed
  // harness/profiles/default.json), "legacy" (the old fixed costs, sim::LegacyCostModel) or a
  // profile file's path. The real backend ignores it.
  std::string profile = "default";
  std::string profile_name;           // the profile's own name, filled in by ResolveSpec (sim);
                                      // in reports' config for the reader (ResolveSpec derives it
                                      // again from `profile`)
  FaultSpec faults;
  std::vector<std::string> redis;     // real backend: existing HOST:PORT servers (empty: start ours)
  // Each client locks a key of its own (the lock key + ":" + client number) instead of all sharing
  // one: uncontended benchmarks (locklab bench-peers). Not a flag and not in reports. The checkers
  // judge each key's clients apart (CheckInput::lock_of_client); the one counter, behind no single
  // lock, is not judged.
  bool key_per_client = false;
  // What the history records (TraceMode below, by its name): "commands" (every executed Redis
  // command too: the timelines of examples and scenarios show them), "locks" (lock, workload and
  // fault events; no commands) or "none" (only the events the checkers read). The checkers'
  // figures are the same in every mode; only timelines and the history's size differ. In a
  // report's config only when it is not "commands" (older reports stay as they were).
  std::string trace = "commands";
  int64_t max_duration_ms = 600'000;  // hard cap on one run's true time
  // Scripted runs: one plan per client (then `requests` and `hold_ms` are not used). Empty:
  // every client takes requests from the shared pool of `requests`.
  std::vector<ClientPlan> client_plans;
};

// The trace field's values, most first.
enum class TraceMode { kCommands, kLocks, kNone };
inline constexpr char kDefaultTrace[] = "commands";
// "commands" | "locks" | "none" -> true and *out; anything else -> false.
bool ParseTraceMode(const std::string& name, TraceMode* out);

struct RunResult {
  RunSpec spec;
  bool completed = false;  // false: the run stopped early (error says why); figures are partial
  std::string error;
  CheckResult check;
  CommandStats commands;
  int64_t duration_us = 0;             // true time from start to the last client finishing
  std::vector<std::string> notes;      // how faults were applied (real backend), warnings
  int64_t faults_unfired = 0;          // planned faults whose n-th command never came (a note each)
  int64_t history_events = 0;
  int64_t commands_dropped = 0;        // kCommand events not kept (history cap)
  int64_t counter_final = 0;           // counter workload
  int64_t stock_final = 0;             // seckill workload
  std::string replay;                  // the command that replays this run ("": `locklab run` + the spec's flags)
  double client_cpu_us = -1;           // Runtime::ClientCpuUs (< 0: not known); in no report or results line
  std::vector<Event> events;           // the history, when RunOne was asked to keep it
};

// Fills in defaults (algorithm and retry options, nodes) and checks every field, before anything
// runs: kInvalid with a one-line message naming the field when the spec cannot be run. Touches no
// server, except that a --redis host name that is not an IP literal is looked up (DNS).
Status ResolveSpec(RunSpec* spec);

// Sets the simulator's profile on a spec built for `spec->backend`: a real run ignores it, so a
// real spec (and its replay) leaves it out. For commands that build specs for either backend.
inline void SetSimProfile(RunSpec* spec, const std::string& profile) {
  if (spec->backend == "sim") spec->profile = profile;
}

// One --redis entry: HOST:PORT with a port in [1, 65535] and a host that is an IPv4 or IPv6
// literal, localhost, or a name that resolves. kInvalid "--redis ADDRESS: ..." otherwise.
Status CheckRedisAddress(const std::string& address);

// How many clients may hold the lock at once (CheckInput::holders_allowed): the algorithm's
// holders option (a semaphore's permits), 1 for every other lock.
int HoldersAllowed(const RunSpec& spec);

// A traced simulator run (not keep_events) keeps the text of this many commands; past it,
// commands are counted and a run with an overlap example runs again in full (RunOne).
inline constexpr size_t kFirstRunCommands = 1 << 16;

// Runs one spec on its backend. Progress lines go to stderr when `progress` is true;
// `keep_events`: RunResult::events gets the whole history (scenario timelines).
// `first_run_commands`: kFirstRunCommands but in tests (the same result whatever it is).
RunResult RunOne(const RunSpec& spec, bool progress, bool keep_events = false,
                 size_t first_run_commands = kFirstRunCommands);

}  // namespace locklab
