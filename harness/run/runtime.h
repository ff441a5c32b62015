// Runtime: what the harness needs from a backend to run clients and collect a history.
// Two implementations: SimRuntime (sim_runtime.h, the deterministic simulator) and
// RedisRuntime (redis_runtime.h, real redis-server processes driven by hiredis + libevent).
//
// Faults are planned before Run() as absolute true times (µs from the start of the run), or, for
// client pauses and crashes with FaultAction::on_send, as triggers on a client's n-th command.
// A runtime that cannot apply a fault exactly says so in Notes() (never silently).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "algorithms/env.h"
#include "algorithms/task.h"
#include "sim/history.h"

namespace locklab {

// A plan entry. Times are true time in µs from the start of the run.
struct FaultAction {
  enum class Kind : uint8_t {
    kPauseClient,      // target client, duration_us
    kCrashClient,      // target client
    kClientClockJump,  // target client, delta_us (wall clock only)
    kCrashNode,        // target node (endpoint index)
    kRestartNode,      // target node: comes back empty (no persistence)
    kPauseNode,        // target node, duration_us (SIGSTOP for real)
    kNodeClockJump,    // target node, delta_us
    kPartition,        // target client cannot reach node `node` for duration_us
    kFailover,         // target node 0: at at_us its replica is cut off; at at_us + duration_us the
                       // master dies and the replica is promoted (writes in between are lost)
    kDelayMessage,     // the `occurrence`-th command named `command` ("*" = any) sent by target client
                       // gets duration_us of extra one-way delay (at_us ignored: matched when sent)
  };
  Kind kind = Kind::kPauseClient;
  int64_t at_us = 0;
  int target = 0;
  int node = 0;
  int64_t duration_us = 0;
  int64_t delta_us = 0;
  std::string command;  // kDelayMessage
  int occurrence = 1;   // kDelayMessage and on_send, 1-based
  std::string on_send;  // when non-empty: the fault is not timed (at_us is ignored); it fires when client
                        // `target` sends its `occurrence`-th command named `on_send` ("*" = any command),
                        // right after that command is handed to the network: the command still reaches Redis;
                        // a pause then holds its reply (and everything else of the client) until the pause ends,
                        // a crash means the reply is never seen. Only kPauseClient and kCrashClient take it.
                        // Names match as for kDelayMessage (Command::Name()). Each trigger fires at most once.
};
// A command name as Command::Name() gives it, for matching (kDelayMessage, on_send): a script's
// name as is ("compare_and_delete"), a command word upper-cased ("get" -> "GET"), "*" as is.
inline std::string MatchCommandName(const std::string& name) {
  for (int s = 1; s < static_cast<int>(Script::kCount); ++s)
    if (ScriptName(static_cast<Script>(s)) == name) return name;
  std::string upper = name;
  for (char& ch : upper)
    if (ch >= 'a' && ch <= 'z') ch = static_cast<char>(ch - 'a' + 'A');
  return upper;
}
// "on its 1st GET", "on its 2nd command" ("*"): how notes and histories name an on_send trigger.
inline std::string OnSendText(const FaultAction& f) {
  const int n = f.occurrence;
  const int tens = n % 100, ones = n % 10;
  const char* suffix = (tens >= 11 && tens <= 13) ? "th" : ones == 1 ? "st" : ones == 2 ? "nd" : ones == 3 ? "rd" : "th";
  return "on its " + std::to_string(n) + suffix + " " +
         (f.on_send == "*" ? std::string("command") : MatchCommandName(f.on_send));
}
const char* FaultKindName(FaultAction::Kind k);
// "pause_client" -> kPauseClient; false when unknown.
bool ParseFaultKind(const std::string& name, FaultAction::Kind* out);

struct ClockSetting {
  int64_t offset_us = 0;    // wall clock offset from true time
  double drift_ppm = 0;     // both clocks run (1 + drift_ppm/1e6) times as fast as true time
};

// One-way network delay added to every message (each direction), and loss.
struct NetSetting {
  enum class Dist : uint8_t { kConstant, kUniform, kLongTail };
  Dist dist = Dist::kConstant;
  int64_t mean_us = 0;  // constant: exactly this; uniform: [0, 2*mean]; long tail: lognormal-ish
                        // with this mean and a tail to ~20x (see the implementation for the shape)
  double loss = 0;      // probability that one message (request or reply) is lost -> timeout
};
const char* NetDistName(NetSetting::Dist d);
bool ParseNetDist(const std::string& name, NetSetting::Dist* out);

// What both backends are built from.
struct BackendConfig {
  int clients = 1;
  int nodes = 1;              // Redis endpoints the algorithm addresses
  bool with_replica = false;  // endpoint 0 is a master with one asynchronous replica
  uint64_t seed = 1;
  int64_t command_timeout_us = 1'000'000;  // a command with no reply by then is kTimeout
  NetSetting net;
  bool trace_commands = true;  // record every executed command in the history (timelines); benchmarks
                               // that compare with libraries logging only lock events turn it off
};

struct RuntimeLimits {
  int64_t max_duration_us = 600'000'000;  // stop (with an error) past this much true time
  int64_t max_events = 2'000'000'000;     // simulator only: event budget
};

struct CommandStats {
  int64_t total = 0;
  std::map<std::string, int64_t> by_name;  // "SET", "compare_and_delete", ...
  std::vector<int64_t> by_client;
};

class Runtime {
 public:
  virtual ~Runtime() = default;

  virtual int client_count() const = 0;
  virtual int node_count() const = 0;
  virtual Env& env(int client) = 0;
  // True time now, µs since the run started.
  virtual int64_t TrueNowUs() = 0;
  // The history the runtime appends faults and executed commands to.
  virtual void set_history(History* h) = 0;

  virtual void SetClientClock(int client, const ClockSetting& c) = 0;
  virtual void SetNodeClock(int node, const ClockSetting& c) = 0;
  // false + *error when the runtime cannot do this fault at all.
  virtual bool PlanFault(const FaultAction& f, std::string* error) = 0;

  // Starts `main` as client `client`'s main task when Run() begins.
  virtual void StartClient(int client, Task<void> main) = 0;
  // Runs until every client's main task finished (or crashed). false + *error when a limit was
  // hit or the backend failed.
  virtual bool Run(const RuntimeLimits& limits, std::string* error) = 0;

  virtual CommandStats Commands() const = 0;
  // What the runtime wants the report to say about how faults were applied (real backends:
  // measured delays, refusals). Empty for the simulator.
  virtual std::vector<std::string> Notes() const { return {}; }
};

}  // namespace locklab
