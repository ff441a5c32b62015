// The maps of `locklab map` (harness/cli/map.h): one fault's magnitude against several locks, each
// with a workload chosen so that what theory predicts is visible: where a lock cannot fail the
// point must gather enough acquisitions (or faults) for an upper bound below the floor, and
// beyond the threshold the rate must grow with the magnitude.
#include <cmath>
#include <cstdio>

#include "harness/cli/map.h"

namespace locklab {
namespace {

int64_t Ms(double x, int64_t ttl_ms) { return static_cast<int64_t>(std::llround(x * static_cast<double>(ttl_ms))); }

RunSpec Base(int clients, int64_t requests, int64_t ttl_ms, int64_t hold_ms) {
  RunSpec s;
  s.workload = "counter";
  s.clients = clients;
  s.requests = requests;
  s.ttl_ms = ttl_ms;
  s.hold_ms = hold_ms;
  return s;
}

// The maps with one planned fault per run: clients retry after a random 0..20 ms and each hold is
// drawn uniform in hold +- hold/2, so that the seeds vary the phase of the workload against the
// fault. With fixed sleeps every seed would meet the fault at the same step of the same schedule;
// with a fixed hold a holder that re-acquires right after its release hands over every hold, the
// seeds run in step, and a plateau swings with the fault's magnitude modulo one hold (README
// "Plateaus that did not rise, and why").
RunSpec FaultBase(int clients, int64_t requests, int64_t ttl_ms, int64_t hold_ms) {
  RunSpec s = Base(clients, requests, ttl_ms, hold_ms);
  s.retry = "random";
  s.retry_options.Set("min-ms", "0");
  s.retry_options.Set("max-ms", "20");
  s.hold_spread_ms = hold_ms / 2;
  return s;
}

FaultAction Fault(FaultAction::Kind kind, int64_t at_ms, int target) {
  FaultAction f;
  f.kind = kind;
  f.at_us = at_ms * 1000;
  f.target = target;
  return f;
}

// (a) Stop-the-world pauses, Poisson 0.2 per client per second, of x * TTL; TTL 100 ms, hold 10 ms.
constexpr int64_t kPauseTtlMs = 100;
RunSpec PauseSpec(double x, size_t) {
  RunSpec s = Base(10, 5000, kPauseTtlMs, 10);
  s.faults.gc_pause_ms = Ms(x, kPauseTtlMs);
  s.faults.gc_pause_rate = 0.2;
  return s;
}

// (b) The long task: hold x * TTL, no fault but a long-tailed network (1 ms mean one way).
constexpr int64_t kHoldTtlMs = 100;
RunSpec HoldSpec(double x, size_t) {
  RunSpec s = Base(5, 1000, kHoldTtlMs, Ms(x, kHoldTtlMs));
  s.faults.net_delay_ms = 1;
  s.faults.net_dist = "long-tail";
  return s;
}

// (c) Client wall clocks off by up to +-x * TTL; TTL 100 ms, hold 10 ms.
constexpr int64_t kSkewTtlMs = 100;
RunSpec SkewSpec(double x, size_t) {
  RunSpec s = Base(10, 5000, kSkewTtlMs, 10);
  s.faults.clock_skew_ms = Ms(x, kSkewTtlMs);
  return s;
}

// (d) Client clock rates off by up to +-x ppm; TTL 1000 ms; hold = Redlock's validity (ttl - 1% - 2 ms,
// less 3 ms for the acquisition) or half the TTL.
constexpr int64_t kDriftTtlMs = 1000;
RunSpec DriftSpec(double x, size_t curve) {
  RunSpec s = Base(3, 300, kDriftTtlMs, curve == 0 ? kDriftTtlMs - kDriftTtlMs / 100 - 2 - 3 : kDriftTtlMs / 2);
  s.acquire_timeout_ms = 60'000;  // every request waits its turn: 300 acquisitions per seed
  s.faults.clock_drift_ppm = x;
  return s;
}

// (e) Node 0 has an asynchronous replica; at a time drawn from the seed in 300..400 ms the
// replica is cut off, x * TTL later the master dies and the replica is promoted. TTL 100 ms, holds
// 10..30 ms (FaultBase), 3 clients. The window matters: a holder re-acquires right after its
// release, so the workload runs in a cycle the waiters' random retries hardly move, and a fault
// at one fixed time would meet every seed at the same phase of it (the map was a sawtooth in x).
constexpr int64_t kFailoverTtlMs = 100;
RunSpec FailoverSpec(double x, size_t) {
  RunSpec s = FaultBase(3, 60, kFailoverTtlMs, 20);
  s.replica = true;
  FaultAction f = Fault(FaultAction::Kind::kFailover, 300, 0);
  f.jitter_us = kFailoverTtlMs * 1000;
  f.duration_us = Ms(x, kFailoverTtlMs) * 1000;
  s.faults.plan.push_back(f);
  return s;
}

// (f) Client 0's second release is x * TTL late in the network. TTL 100 ms, holds 10..30 ms, 3 clients.
constexpr int64_t kReleaseTtlMs = 100;
RunSpec ReleaseSpec(double x, size_t curve) {
  RunSpec s = FaultBase(3, 30, kReleaseTtlMs, 20);
  FaultAction f = Fault(FaultAction::Kind::kDelayMessage, 0, 0);
  f.command = curve == 0 ? "DEL" : "compare_and_delete";
  f.occurrence = 2;
  f.duration_us = Ms(x, kReleaseTtlMs) * 1000;
  s.faults.plan.push_back(f);
  return s;
}

// (g) Redlock on 5 nodes, TTL 100 ms, 3 clients. Clock jump: at a time drawn from the seed in
// 300..400 ms (one draw for the three: see FailoverSpec on why a window) the wall clocks of nodes
// 0..2 (a majority) jump forward x * TTL; holds 10..30 ms. Slow reply: client 0's 5th SET (its
// first attempt's SET to node 4) is x * TTL late; holds 5..15 ms.
constexpr int64_t kRedlockTtlMs = 100;
RunSpec JumpSpec(double x, size_t) {
  RunSpec s = FaultBase(3, 60, kRedlockTtlMs, 20);
  for (int node = 0; node < 3; ++node) {
    FaultAction f = Fault(FaultAction::Kind::kNodeClockJump, 300, node);
    f.jitter_us = kRedlockTtlMs * 1000;  // one window for the three: they jump together, at any phase
    f.delta_us = Ms(x, kRedlockTtlMs) * 1000;
    s.faults.plan.push_back(f);
  }
  return s;
}

RunSpec SlowReplySpec(double x, size_t) {
  RunSpec s = FaultBase(3, 30, kRedlockTtlMs, 10);
  FaultAction f = Fault(FaultAction::Kind::kDelayMessage, 0, 0);
  f.command = "SET";
  f.occurrence = 5;
  f.duration_us = Ms(x, kRedlockTtlMs) * 1000;
  s.faults.plan.push_back(f);
  return s;
}

const std::vector<MapCurve> kRedlockVariants = {
    {"redlock", "redlock", MapMetric::kViolations},
    {"redlock (no validity check)", "redlock:validity-check=false", MapMetric::kViolations},
    {"redlock fence=on (damage)", "redlock:fence=on", MapMetric::kDamage},
};

// The maps whose faults are drawn from the seed all through the run (rates per acquisition).
std::vector<MapDef> AcquisitionMaps() {
  std::vector<MapDef> m;
  m.push_back({"pause-ttl", "stop-the-world client pauses of x * TTL", "pause / TTL",
               "10 clients, 5000 acquisitions per seed, TTL 100 ms, hold 10 ms, pauses Poisson 0.2 per client per s",
               "a single pause shorter than TTL - hold (x < 0.9) cannot make two holders of the token lock (two pauses in "
               "one hold can: about (0.2/s x 10 ms)^2 / 2 = 2e-6 per acquisition); the watchdog freezes with its client "
               "and its first renewal comes TTL/3 after the acquisition, after a 10 ms hold: the same threshold; fifo hands "
               "the key over with a fresh TTL, possibly to a frozen waiter; fencing turns overlaps into rejected writes; "
               "the semaphore (one permit), the reentrant lock, the read-write lock (half reads: a paused reader's "
               "entry expires like a writer's key) and WAIT keep a key with a TTL like the token lock: the same "
               "threshold",
               MapUnit::kAcquisition,
               {0.25, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0, 1.1, 1.25, 1.5, 2, 3},
               {{"token", "token", MapMetric::kViolations},
                {"watchdog", "watchdog", MapMetric::kViolations},
                {"redlock", "redlock", MapMetric::kViolations},
                {"fifo", "fifo", MapMetric::kViolations},
                {"fencing (damage)", "fencing", MapMetric::kDamage},
                {"semaphore", "semaphore", MapMetric::kViolations},
                {"reentrant", "reentrant", MapMetric::kViolations},
                {"rwlock (half reads)", "rwlock", MapMetric::kViolations, 0.5},
                {"wait", "wait", MapMetric::kViolations}},
               200, 10, PauseSpec, {0.9}});
  m.push_back({"hold-ttl", "the long task: a critical section of x * TTL", "hold / TTL",
               "5 clients, 1000 acquisitions per seed, TTL 100 ms, network 1 ms long-tailed one way, no other fault",
               "the token lock's key expires under a holder working longer than TTL (less one network delay; the long "
               "tail brings the onset below 1); the watchdog keeps renewing it while the holder runs. Violations count "
               "overlap episodes: near 1 per acquisition once every key expires under its holder (beyond 1.5 x TTL "
               "the overlaps run into each other and merge, so the map stops there)",
               MapUnit::kAcquisition,
               {0.25, 0.5, 0.75, 0.85, 0.9, 0.95, 0.98, 1.0, 1.02, 1.05, 1.1, 1.25, 1.5},
               {{"token", "token", MapMetric::kViolations}, {"watchdog", "watchdog", MapMetric::kViolations}},
               200, 10, HoldSpec, {1.0}});
  m.push_back({"skew-ttl", "client wall clocks off by up to +-x * TTL", "clock skew / TTL",
               "10 clients, 5000 acquisitions per seed, TTL 100 ms, hold 10 ms, offsets uniform in [-skew, +skew]",
               "the timestamp lock takes over a lock it believes expired by its own clock: two clients differing by "
               "more than TTL - hold (skew > 0.45 TTL) can both hold; so can the semaphore, which scores holders by "
               "the acquiring client's clock and evicts those older than TTL by it; the token lock reads no client clock",
               MapUnit::kAcquisition,
               {0, 0.1, 0.2, 0.3, 0.4, 0.45, 0.5, 0.6, 0.75, 1, 2},
               {{"timestamp", "timestamp", MapMetric::kViolations},
                {"token", "token", MapMetric::kViolations},
                {"semaphore", "semaphore", MapMetric::kViolations}},
               200, 10, SkewSpec, {0.45}});
  m.push_back({"drift-ppm", "client clock rates off by up to +-x ppm (Redlock)", "clock drift (ppm)",
               "3 clients, 300 acquisitions per seed, TTL 1000 ms, rates uniform in [-drift, +drift]; hold 985 ms (the "
               "validity Redlock computes: ttl - 1% - 2 ms, less the acquisition) or 500 ms",
               "a client whose clock runs slow by d works hold / (1 - d) of true time: with the hold at the validity, "
               "Redlock's margin (1% + 2 ms) covers drift up to about 1.5%; a hold of half the TTL covers any drift here",
               MapUnit::kAcquisition,
               {0, 1000, 5000, 10000, 14000, 16000, 20000, 30000, 50000, 100000},
               {{"redlock (hold = validity)", "redlock", MapMetric::kViolations},
                {"redlock (hold = ttl/2)", "redlock", MapMetric::kViolations}},
               200, 10, DriftSpec, {15000}});
  return m;
}

// The maps with one planned fault per run (rates per fault).
void AddFaultMaps(std::vector<MapDef>& m) {
  m.push_back({"failover-lag", "replication lag before a failover: x * TTL between the replica's last update and "
               "its promotion", "replication lag / TTL",
               "3 clients, 60 acquisitions, TTL 100 ms, holds uniform in 10..30 ms; one failover of node 0 per run (the "
               "cut at a time uniform in 300..400 ms)",
               "a key written after the replica was cut off is lost at the promotion, but the replica still has the key "
               "the holder had at the cut, set at most one hold (up to 30 ms) before it, which blocks everyone until "
               "it expires. A second client gets in only if that key expires while a holder that took the lock on the "
               "master before it died still works, and only if it retries before that hold ends: the lag plus what is "
               "left of that hold must exceed TTL less the key's age. With holds of 10..30 ms that is possible from "
               "x > 0.4 (a chain of holds adding up just so: rare), common from x > 0.7 (the key's age alone) and "
               "true of every run from x >= 1. At any lag, a cut that falls in a hand-off (the release's DEL has "
               "reached the replica, the next SET has not: a round trip in each hold, plus the replication trip) "
               "leaves the replica with no key at all: a floor of well under 1%. Redlock loses one of 5 copies and "
               "keeps its quorum; WAIT holds only a key the replica acknowledged, so the promotion loses none (but no "
               "lock is taken after it: no replica is left)",
               MapUnit::kFault,
               {0, 0.1, 0.25, 0.5, 0.75, 0.9, 1, 1.25, 1.5, 2, 3},
               {{"token (master + replica)", "token", MapMetric::kViolations},
                {"redlock (5 masters)", "redlock", MapMetric::kViolations},
                {"wait (master + replica)", "wait", MapMetric::kViolations}},
               10000, 1000, FailoverSpec, {0.4, 0.7, 1.0}});
  m.push_back({"release-delay", "a release x * TTL late in the network", "release delay / TTL",
               "3 clients, 30 acquisitions, TTL 100 ms, holds uniform in 10..30 ms; client 0's second release is "
               "delayed, once per run (if it comes)",
               "a plain DEL landing after the key expired (delay > TTL - hold: x > 0.7 after the longest holds, x > 0.9 "
               "after all) deletes the next holder's lock and lets a third client in; the Lua compare-and-delete finds "
               "another token and does nothing",
               MapUnit::kFault,
               {0.25, 0.5, 0.7, 0.75, 0.8, 0.85, 0.9, 1, 1.25, 1.5, 2, 3},
               {{"token release=del", "token:release=del", MapMetric::kViolations},
                {"token (Lua release)", "token", MapMetric::kViolations}},
               50000, 1000, ReleaseSpec, {0.7, 0.9}});  // 50,000: ~39,000 runs whose fault happened
  m.push_back({"node-clock-jump", "the wall clocks of 3 of 5 Redlock nodes jump forward by x * TTL", "clock jump / TTL",
               "3 clients, 60 acquisitions, TTL 100 ms, holds uniform in 10..30 ms; nodes 0..2 jump together at a time "
               "uniform in 300..400 ms, once per run",
               "a majority whose clocks jump by more than TTL - hold (x > 0.7 for the longest holds) expires the "
               "holder's keys before it is done; the "
               "validity check (made before the jump) cannot see it; a fencing token keeps the resource undamaged",
               MapUnit::kFault,
               {0.25, 0.5, 0.7, 0.75, 0.8, 0.85, 0.9, 1, 1.5, 2, 5},
               kRedlockVariants, 40000, 1000, JumpSpec, {0.7}});
  m.push_back({"slow-reply", "one SET reply x * TTL late during a Redlock acquisition", "reply delay / TTL",
               "3 clients, 30 acquisitions, TTL 100 ms, holds uniform in 5..15 ms; client 0's 5th SET (to node 4) is "
               "late, once per run",
               "with the last reply after the TTL the keys of the first replies have expired and another client holds: "
               "the validity check (validity = ttl - elapsed - 1% - 2 ms) refuses such a quorum; without it client 0 "
               "holds too. With the reply between TTL - hold and TTL the validity is positive but shorter than the hold",
               MapUnit::kFault,
               {0.25, 0.5, 0.75, 0.85, 0.9, 0.95, 1, 1.1, 1.25, 1.5, 2, 3},
               kRedlockVariants, 40000, 1000, SlowReplySpec, {0.85, 1.0}});
}

std::string Number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

}  // namespace

const std::vector<MapDef>& Maps() {
  static const std::vector<MapDef> maps = [] {
    std::vector<MapDef> m = AcquisitionMaps();
    AddFaultMaps(m);
    return m;
  }();
  return maps;
}

std::string MapListText() {
  // Appends one piece at a time (GCC 12 warns falsely, -Wrestrict, on some chains of string +).
  std::string out;
  for (const MapDef& m : Maps()) {
    out.append(m.name).append(": ").append(m.title).append("\n    x = ").append(m.x_label).append(":");
    for (double x : m.xs) out.append(" ").append(Number(x));
    out.append("\n    curves:");
    for (size_t i = 0; i < m.curves.size(); ++i)
      out.append(i ? ", " : " ").append(m.curves[i].label).append(" [").append(m.curves[i].algorithm).append("]");
    out.append("\n    rate: violations (damage where a curve says so) per ").append(MapUnitName(m.unit));
    out.append("; seeds in batches of ").append(std::to_string(m.batch));
    out.append(", up to ").append(std::to_string(m.max_seeds)).append(" per point\n");
    out.append("    workload: ").append(m.workload).append("\n");
    out.append("    theory: ").append(m.theory).append("\n");
  }
  return out;
}

}  // namespace locklab
