// The fault plan, as data: the one fault type both runtimes take (the simulator here in sim/,
// the real runtime in harness/real/), its kind names, the one check of a fault against the world
// it is planned for, and what each fault writes into the History (type, value, detail).
//
// A fault is planned at an absolute true time (at_us, µs from the start of the run), or, for
// client pauses and crashes with `on_send`, fires on a client's n-th command of a name.
// Randomly drawn faults (stop-the-world pauses) are FaultActions like the others.
#pragma once

#include <cstdint>
#include <string>

#include "algorithms/status.h"
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
  static constexpr int kKindCount = static_cast<int>(Kind::kDelayMessage) + 1;
  Kind kind = Kind::kPauseClient;
  int64_t at_us = 0;
  // A time window instead of an instant: when > 0, the run draws the fault's time uniformly in
  // [at_us, at_us + jitter_us] from its seed (harness/run PlanWorld), so that seeds meet the fault
  // at every phase of the workload; faults with the same at_us and jitter_us get one draw (they
  // move together). Only for faults planned at a time (not on_send, not delay_message).
  int64_t jitter_us = 0;
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

// "pause_client", ... (the names plans and flags use).
const char* FaultKindName(FaultAction::Kind k);
// "pause_client" -> kPauseClient; false when unknown.
bool ParseFaultKind(const std::string& name, FaultAction::Kind* out);
// True for the kinds whose `target` is a client (the others name a node).
bool TargetsClient(FaultAction::Kind k);

// A command name as Command::Name() gives it, for matching (kDelayMessage, on_send): a script's
// name as is ("compare_and_delete"), a command word upper-cased ("get" -> "GET"), "*" as is.
std::string MatchCommandName(const std::string& name);
// "on its 1st GET", "on its 2nd command" ("*"): how notes and histories name an on_send trigger.
std::string OnSendText(const FaultAction& f);

// What a fault is checked against.
struct FaultWorld {
  int clients = 1;
  int nodes = 1;
  bool with_replica = false;
};
// The one check of a plan entry: targets exist, times are >= 0, a failover is node 0's and has a
// replica, a
// delayed message names a command, on_send only on client pauses and crashes with an occurrence
// >= 1. Invalid("fault KIND: ...") otherwise. What a backend cannot do (a real runtime without
// control of its servers) is the backend's to refuse, after this.
Status ValidateFault(const FaultAction& f, const FaultWorld& world);

// --- What faults write into the History: one function per record, used by both runtimes. ---

struct FaultRecord {
  int client = -1;  // -1: a node fault
  Ev type = Ev::kFault;
  int64_t value = 0;
  std::string detail;
};
// The value a fault records: its duration (pauses, partitions, failover) or, when it has none,
// its clock delta (jumps); 0 for the rest. The label of an on_send fault is OnSendText(f).
int64_t FaultValueUs(const FaultAction& f);
// The record of a fault when it takes effect (kinds kPauseClient .. kFailover; a failover's first
// step). A pause that only extends a running one records nothing (the runtimes check that).
FaultRecord FaultStartRecord(const FaultAction& f);
// The records of the steps that follow some faults.
FaultRecord ResumeClientRecord(int client);
FaultRecord ResumeNodeRecord(int node);
FaultRecord FailoverIgnoredRecord(const FaultAction& f);  // no replica left to promote
FaultRecord PromoteReplicaRecord();
// Real runtime only (the simulator's faults cannot fail and its restarts are instant): a fault
// the servers refused, and a restarted node answering again `after_us` after its restart.
FaultRecord FaultFailedRecord(const FaultAction& f, const std::string& why);
FaultRecord NodeAnswersAgainRecord(int node, int64_t after_us);

}  // namespace locklab
