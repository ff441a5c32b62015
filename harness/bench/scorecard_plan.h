// The scorecard's plan (internal to harness/bench): which implementations, which faults, which
// fault applies to which implementation, and the one scripted timeline of each fault that every
// implementation goes through (locklab scorecard, scorecard.h).
//
// A trial: two clients on one key. A acquires (time 0 = when A holds); the fault hits A or A's
// node(s) at fault_at_ms; B starts asking at b_go_ms and keeps asking until b_timeout_ms; each
// client holds its critical section (reads and writes a counter they share) for its hold. The
// checkers then judge the merged history: two holders at once, lost updates, and what A heard.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace locklab::scorecard {

enum class Fault {
  kPause,         // A's process stopped (SIGSTOP) for 2 x TTL while in its critical section
  kReleaseDelay,  // A's release reaches the server(s) 2 x TTL late (proxy delay_message)
  kClockJump,     // the node's wall clock jumps forward 2 x TTL while A holds (clock shim)
  kRestart,       // a node A holds restarts empty (Redlock: A holds a bare majority)
  kPartition,     // A cut off from its node(s) for 2 x TTL while it keeps working (proxy partition)
  kExtendRace,    // A releases right when its watchdog extends (an extension after the release)
  kSentinel,      // the master dies before A's lock reached its replica; Redis Sentinel promotes it
};
struct FaultInfo {
  Fault fault;
  std::string id;     // what --faults takes
  std::string label;  // the table's row
};
const std::vector<FaultInfo>& Faults();
const FaultInfo* FindFault(const std::string& id);  // nullptr when unknown
std::string FaultId(Fault f);
// True for the faults that touch only a trial's own processes and proxies (several trials can
// run at once); false for the clock jump and the restart, which hit a shared node.
bool OwnProcessesOnly(Fault f);

enum class Runner { kLocklab, kNode, kPython };

struct ScImpl {
  std::string id;    // what --impls takes
  std::string name;  // the table's column
  Runner runner;
  std::string lib;   // node_peer.js --lib, or locklab's algorithm
  int nodes = 1;     // Redis masters the lock uses (5: Redlock)
  bool extends = false;  // extends the lock by itself while it is held (a watchdog)
  // When the watchdog first extends, as a fraction of the TTL after the acquisition.
  double extend_at = 0;
  std::string how;   // how the trial uses it, one line
  std::string key_prefix;  // what the library puts before the key in Redis (redis-semaphore: "mutex:")
};
const std::vector<ScImpl>& ScImpls();
const ScImpl* FindScImpl(const std::string& id);

// Why `fault` does not apply to `impl` ("" when it does): a restart only breaks a Redlock (a
// single-node lock loses its only copy by design), the extension race needs a watchdog, a
// Sentinel failover needs a master with a replica (Redlock's masters are independent).
std::string NotApplicable(const ScImpl& impl, Fault fault);

struct Timeline {
  int64_t ttl_ms = 0;
  int64_t a_hold_ms = 0;     // A's critical section
  int64_t fault_at_ms = 0;   // after A holds
  int64_t fault_ms = 0;      // the fault's length (pause, delay, partition) or the clock's jump
  int64_t b_go_ms = 0;       // B starts asking
  int64_t b_hold_ms = 0;
  int64_t b_timeout_ms = 0;  // B gives up this long after it started asking
  bool stale_minority = false;  // Redlock: nodes 3 and 4 hold a crashed client's key when A
                                // asks (A wins 0-2 only); it expires at stale_px_ms
  int64_t stale_px_ms = 0;
  int target_node = 0;       // the node a clock jump or restart hits
};
// The timeline of `fault` for `impl` with the TTL the caller chose for the short rows (pause,
// release delay, partition; clock jump, restart and the extension race use 2.5 x it so that A's
// hold and B's retries fit inside one TTL). `trial` moves the extension race's release across
// the watchdog's tick (-10 .. +10 ms).
Timeline TimelineFor(const ScImpl& impl, Fault fault, int64_t ttl_ms, int trial);

}  // namespace locklab::scorecard
