// The scorecard's plan: see scorecard_plan.h.
#include "harness/bench/scorecard_plan.h"

#include <algorithm>
#include <cmath>

namespace locklab::scorecard {

const std::vector<FaultInfo>& Faults() {
  static const std::vector<FaultInfo> all = {
      {Fault::kPause, "pause", "holder paused > TTL (SIGSTOP)"},
      {Fault::kReleaseDelay, "release-delay", "release delayed > TTL (proxy)"},
      {Fault::kClockJump, "clock-jump", "node clock jumps > TTL (shim)"},
      {Fault::kRestart, "restart", "node restarts empty (Redlock)"},
      {Fault::kPartition, "partition", "holder partitioned, keeps working"},
      {Fault::kExtendRace, "extend-race", "extension vs release race"},
      {Fault::kSentinel, "sentinel-failover", "Sentinel failover, lock not replicated"},
  };
  return all;
}

const FaultInfo* FindFault(const std::string& id) {
  for (const FaultInfo& f : Faults())
    if (f.id == id) return &f;
  return nullptr;
}

std::string FaultId(Fault f) {
  for (const FaultInfo& i : Faults())
    if (i.fault == f) return i.id;
  return "?";
}

bool OwnProcessesOnly(Fault f) { return f != Fault::kClockJump && f != Fault::kRestart && f != Fault::kSentinel; }

const std::vector<ScImpl>& ScImpls() {
  static const std::vector<ScImpl> all = {
      {"node-redlock", "node-redlock 4", Runner::kNode, "redlock", 5, false, 0,
       "lock(key, ttl) / unlock() on 5 nodes, library defaults"},
      {"sesame-redlock", "@sesamecare-oss/redlock", Runner::kNode, "sesame-redlock", 5, true, 0.8,
       "using([key], ttl, routine) on 5 nodes: auto-extension (threshold ttl/5), abort signal"},
      {"semaphore-mutex", "redis-semaphore Mutex", Runner::kNode, "semaphore-mutex", 1, true, 0.8,
       "tryAcquire() / release(), refresh every 0.8 ttl, default onLockLost (throws)", "mutex:"},
      {"semaphore-redlock", "redis-semaphore RedlockMutex", Runner::kNode, "semaphore-redlock", 5, true, 0.8,
       "RedlockMutex on 5 nodes, refresh every 0.8 ttl, default onLockLost (throws)", "mutex:"},
      {"redis-py", "redis-py Lock", Runner::kPython, "", 1, false, 0,
       "r.lock(key, timeout=ttl).acquire() / release(), library defaults"},
      {"redlock-universal", "redlock-universal", Runner::kNode, "universal-redlock", 5, true, 0.8,
       "createRedlock({adapters, key, ttl}).using(routine) on 5 nodes: auto-extension at 0.8 ttl, abort signal"},
      {"locklab-token", "locklab token", Runner::kLocklab, "token", 1, false, 0,
       "SET NX PX + Lua compare-and-delete"},
      {"locklab-watchdog", "locklab watchdog", Runner::kLocklab, "watchdog", 1, true, 1.0 / 3.0,
       "token + checked renewal every ttl/3"},
      {"locklab-redlock", "locklab redlock", Runner::kLocklab, "redlock", 5, false, 0,
       "Redlock on 5 nodes with the validity check"},
      {"locklab-fencing", "locklab fencing", Runner::kLocklab, "fencing", 1, false, 0,
       "token + fencing token checked by the counter"},
  };
  return all;
}

const ScImpl* FindScImpl(const std::string& id) {
  for (const ScImpl& i : ScImpls())
    if (i.id == id) return &i;
  return nullptr;
}

std::string NotApplicable(const ScImpl& impl, Fault fault) {
  if (fault == Fault::kRestart && impl.nodes < 5)
    return "one node: a restart without persistence loses the only copy of any single-node lock (not a finding)";
  if (fault == Fault::kExtendRace && !impl.extends) return "does not extend the lock by itself";
  if (fault == Fault::kSentinel && impl.nodes >= 5)
    return "five independent masters without replicas: there is no failover to survive";
  return "";
}

Timeline TimelineFor(const ScImpl& impl, Fault fault, int64_t ttl_ms, int trial) {
  Timeline t;
  const int64_t long_ttl_ms = ttl_ms * 5 / 2;
  t.ttl_ms = ttl_ms;
  t.fault_at_ms = 50;
  t.fault_ms = 2 * ttl_ms;
  t.b_go_ms = 100;
  t.b_hold_ms = ttl_ms * 3 / 4;
  t.b_timeout_ms = 4 * ttl_ms;
  switch (fault) {
    case Fault::kPause:
      t.a_hold_ms = ttl_ms * 3 / 4;  // A is still inside when it is continued
      break;
    case Fault::kReleaseDelay:
      t.a_hold_ms = 50;
      t.b_hold_ms = 2 * ttl_ms;  // B still holds when A's late release lands
      break;
    case Fault::kPartition:
      t.a_hold_ms = 3 * ttl_ms;  // keeps working through the partition and after
      break;
    case Fault::kClockJump:
    case Fault::kRestart:
      t.ttl_ms = long_ttl_ms;
      t.b_go_ms = 250;  // after the crashed client's keys expired (stale_px_ms)
      t.b_hold_ms = 100;
      t.a_hold_ms = std::max(long_ttl_ms * 2 / 5, t.b_go_ms + t.b_hold_ms + 100);  // B in and out inside A's hold
      t.fault_ms = fault == Fault::kClockJump ? 2 * long_ttl_ms : 0;
      t.stale_minority = impl.nodes >= 5;
      t.stale_px_ms = 150;
      t.target_node = impl.nodes >= 5 ? 2 : 0;
      t.b_timeout_ms = long_ttl_ms;
      break;
    case Fault::kSentinel:  // a TTL far beyond the failover: any overlap is the failover's doing
      t.ttl_ms = std::max<int64_t>(10 * ttl_ms, 5000);
      t.fault_at_ms = 150;       // the master dies (its replica cut off since before A asked)
      t.fault_ms = 0;
      t.a_hold_ms = 3000;        // longer than Sentinel's switch (about 1.5 s after the death)
      t.b_go_ms = 100;
      t.b_hold_ms = 300;
      t.b_timeout_ms = 6000;
      break;
    case Fault::kExtendRace: {
      t.ttl_ms = long_ttl_ms;
      const int64_t tick_ms = std::llround(impl.extend_at * static_cast<double>(long_ttl_ms));
      t.a_hold_ms = tick_ms + (trial % 11) * 2 - 10;
      t.fault_at_ms = t.a_hold_ms;  // the release, at the watchdog's tick
      t.fault_ms = 0;
      t.b_go_ms = std::max<int64_t>(10, t.a_hold_ms - 20);
      t.b_hold_ms = 50;
      t.b_timeout_ms = 2 * long_ttl_ms;
      break;
    }
  }
  return t;
}

}  // namespace locklab::scorecard
