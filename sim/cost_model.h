// CostModel: what time things take on this machine, in µs, for the simulator to charge: a
// Redis node's CPU per command (a single-threaded server: work queues behind earlier work), a
// client process's CPU per step, and the network path's one-way trip under any injected delay.
// `locklab calibrate` measures one on real redis-server processes and writes it as a profile
// (JSON, harness/run/profile.h); a default profile measured on a 2-vCPU machine is committed.
//
// Every figure is a distribution given by points of its inverse CDF: (p, value) pairs with p
// rising from 0 to 1; a draw takes u ~ U(0, 1) and interpolates linearly. No points: 0. One
// point: that constant.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace locklab::sim {

struct CostDist {
  std::vector<std::pair<double, double>> points;  // (p, µs), p from 0 to 1, values non-decreasing
  // The mean of the piecewise-linear distribution (0 when empty).
  double MeanUs() const;
  // The value at quantile u in [0, 1]. Inline: the simulator draws a handful per command.
  inline double AtUs(double u) const;
  static CostDist Constant(double us) { return CostDist{{{0.0, us}, {1.0, us}}}; }
};

// Where quantile u falls among n >= 1 rising p values p(0..n-1), as AtUs reads it: on one point
// (`on`: the value is point i's) or inside the segment (i - 1, i], du = u - p(i - 1) into its width
// dp = p(i) - p(i - 1). Points that share their p values share their place, so a caller reading
// many such distributions at one u finds it once (WakeRows).
struct QuantilePlace {
  size_t i = 0;
  bool on = true;
  double du = 0, dp = 0;
  // The value there of points whose values are v(0..n-1): linear inside a segment.
  template <typename V>
  double Value(const V& v) const {
    if (on) return v(i);
    const double v0 = v(i - 1);
    return v0 + (v(i) - v0) * du / dp;
  }
};

template <typename P>
QuantilePlace PlaceQuantile(size_t n, const P& p, double u) {
  u = std::clamp(u, 0.0, 1.0);
  if (u <= p(0)) return {};
  if (u >= p(n - 1)) return {n - 1};
  // The first point at or past u (what std::lower_bound finds); the segment (i - 1, i] holds u.
  // Found from a guess that is right at once when the points are evenly spaced in p (as measured
  // profiles are), then moved to that point: the same index for any rising points, and no
  // binary search on the simulator's hottest path.
  size_t i = std::clamp<size_t>(static_cast<size_t>(u * static_cast<double>(n - 1)) + 1, 1, n - 1);
  while (i < n - 1 && p(i) < u) ++i;
  while (i > 1 && p(i - 1) >= u) --i;
  if (p(i) <= p(i - 1)) return {i};
  return {i, false, u - p(i - 1), p(i) - p(i - 1)};
}

double CostDist::AtUs(double u) const {
  if (points.empty()) return 0.0;
  return PlaceQuantile(points.size(), [this](size_t k) { return points[k].first; }, u)
      .Value([this](size_t k) { return points[k].second; });
}

// A Redis node: time of its one thread per command, from reading the request to writing the
// reply, each command with its own read and write as locklab's clients send them (one in flight
// per connection; pipelining would amortize the I/O away). `locklab calibrate` measures it as
// the server's main-thread CPU (harness/real/calibrate.h).
struct NodeCosts {
  CostDist command_us;              // a plain command: GET, SET, DEL, INCR, LPUSH, ...
  CostDist wake_us;                 // the event loop waking for work (epoll_wait, beforeSleep): once
                                    // per group of commands read together, on top of their own costs
  CostDist script_us;               // EVALSHA of a script, on top of the calls it makes
  CostDist script_call_us;          // each redis.call inside a script
  CostDist publish_per_receiver_us; // PUBLISH, per subscriber it delivers to
  CostDist blpop_serve_us;          // serving one parked BLPOP when its list gets an element
};

// How late a timer fires in a client process that was idle: a row per idle time, the lateness
// measured after idling that long (a process asleep in epoll_wait on a VM whose vCPU halted:
// the longer it idled, the longer it takes to run again).
struct WakeRow {
  double idle_us = 0;  // the process had nothing to do for this long before the timer was due
  CostDist late_us;    // how much later than due the timer's callback ran
};

// A client process: CPU per step. Placement says who shares a CPU: every client in one process
// on one core (the real backend: one event loop), or each client a process of its own.
struct ClientCosts {
  enum class Placement : uint8_t { kOneProcess, kProcessPerClient };
  Placement placement = Placement::kOneProcess;
  CostDist send_us;    // encoding and writing one command
  CostDist reply_us;   // reading and decoding one reply, resuming its caller
  CostDist timer_us;   // a sleep's timer firing and resuming its coroutine
  CostDist message_us; // a published message received, resuming the coroutine waiting for it
                       // (empty: reply_us, as profiles measured before it have none)
  CostDist hold_us;    // a message the real runtime holds for an injected network delay (a timer
                       // of its own, armed and fired in the client process): per held request
                       // or reply, on top of send_us / reply_us. The simulator charges it so that
                       // it predicts the real backend, where the delay faults live in the client.
  // A timer (a sleep, a timeout, a held message) that fires while its process is idle runs
  // late by a draw from these rows, idle times rising (empty: on time). WakeLateUs (wake_rows.h)
  // reads them.
  std::vector<WakeRow> wake_after_idle;
  // The CPU such a wake-up costs the process besides the event's own cost: its loop's pass out
  // of idle (epoll_wait returning, the timer re-armed). Drawn when an event finds the process
  // idle (as the lateness above) and spent after that event: it delays the next event the
  // process handles, not the commands the woken handler sends. Empty: none, as in every profile
  // made before this key and the default; `locklab calibrate` measures it (calibrate.h).
  CostDist wake_cpu_us;
  // A held reply's callback (client passes: the step after the hold, when its timer fires and
  // the caller resumes). Empty: reply_us, as in every profile before the key; the read before
  // the hold costs hold_us.
  CostDist held_callback_us;
  // A held command's other two steps (client passes): the write when a held request's timer fires
  // (held requests written by the loop; empty: send_us) and the read of a reply that is then
  // held, its hold armed (empty: hold_us; a pub/sub message's read keeps hold_us: the waves that
  // measure these keys have no messages). With the three held_* keys a held
  // command's CPU is split over its steps as `locklab calibrate` measures it in a wave of held
  // GETs (cross_checks.client_cold_fit); hold_us then is the request hold's arming alone.
  CostDist held_write_us;
  CostDist held_read_us;
  // Cold connections (client passes only): a client whose last reply was read cold_after_ms or
  // more ago pays cold_write_us on top of its next request's write and cold_read_us on top of its
  // next reply's read (what a connection untouched for that long costs once its buffers, parser
  // and socket have left the caches). 0: off, as in every profile before the keys. A client that
  // has read nothing yet counts from the run's start.
  double cold_after_ms = 0;
  CostDist cold_write_us;
  CostDist cold_read_us;
};


// How a message gets from one process to another and when its receiver handles it (a
// profile's optional "loop"; without one, the queue model of the profiles made before it).
//  queue:  each message's trip is a draw from one_way_us of its own, so a message can overtake
//          one sent before it; a node answers each command as soon as its thread has done it.
//  passes: what Redis and the real runtime do. A path (one client process to one node, or
//          back) is FIFO and takes wire_us, the kernel's part of a trip. A process asleep in
//          epoll_wait handles what arrives once it wakes: a client process after a draw from
//          client.wake_after_idle, a node after the same draw less the first row's (its own
//          CPU per wake-up is node.wake_us). A node runs in one pass every command it has read
//          when it polls, then writes their replies, the last one read first (Redis's
//          clients_pending_write list), each write reply_write_us out of the command's cost.
//          Served BLPOPs and answered WAITs join the pass; SUBSCRIBE confirmations leave as in
//          the queue model.
// held_request_waits (passes only): a command held for an injected delay is written when its
// process's loop runs the hold's timer, as the real runtime does: arming the timer costs
// client.hold_us at once; at the end of the delay the timer waits for the CPU (behind what it
// is busy with, or for its wake-up when idle) and the write costs client.send_us, then the
// command takes its path. false (every profile before the key): the hold is a delay on the
// path and the command's CPU (send_us + hold_us) is spent when it is sent.
// client_passes (passes only): a client process runs its event loop in passes, as libevent does
// in the real runtime: a pass takes what had arrived when it began, replies and messages first
// (in arrival order), then the timers that were due (a sleep, a timeout, a held message), one
// after the other on its CPU, each handler's sends written before the next handler runs; what
// arrives or falls due during a pass waits for the next, which begins as soon as this one ends.
// false (every profile before the key): each event takes the CPU in the order it arrived.
// socket_wakes (client passes only): a client process asleep in epoll_wait is woken by what it
// waits for. A reply or message (a socket) that reaches it idle wakes it as a node's loop wakes:
// after the wake_after_idle draw less the first row's (no timer slack: the socket's arrival
// wakes the waiting thread at once); a timer keeps the whole draw. A socket that arrives while
// the process still sleeps toward a late timer wakes it then, if that comes sooner, and the due
// timer runs in that pass, as libevent runs whatever is due when epoll_wait returns. false
// (every profile before the key): whatever reaches an idle process waits the timer's whole draw.
struct LoopCosts {
  bool passes = false;
  CostDist wire_us;
  CostDist reply_write_us;
  bool held_request_waits = false;
  bool client_passes = false;
  bool socket_wakes = false;
};

// Machine stalls: the machine takes a CPU away now and then (a VM's vCPU descheduled by its host,
// the kernel's own work), for far longer than any step above. Each CPU the simulator models (a
// client process's, a node's thread) stalls at Poisson times, per_s a second, each stall a draw
// from length_us: it takes the CPU from its time, or from the end of a step under way then (a
// step that has begun is not cut), and work that wants the CPU meanwhile waits for its end; a
// stall while the CPU had nothing to do that is over before anything arrives changes nothing.
// Each node stalls on its own (real runs put every redis-server on one CPU: a simplification).
// per_s 0 (every profile before the key): none. The step figures above are CPU time and leave
// these out; `locklab calibrate` measures them (calibrate.h).
struct StallCosts {
  double per_s = 0;
  CostDist length_us;
};

struct CostModel {
  std::string name;        // the profile's name, recorded in reports ("builtin-legacy", ...)
  NodeCosts node;
  ClientCosts client;
  LoopCosts loop;
  CostDist one_way_us;     // the network path (loopback) one way, before injected delay (queue)
  StallCosts machine;      // the same for every CPU (a profile's "machine"; fewer_connections shares it)
  // Master to replica, one way (a write's new state, and WAIT's acknowledgement back), µs, a
  // constant. 0: the simulator's own default (SimConfig::repl_delay_us, 1 ms), which every
  // profile before this key ran with.
  double replica_one_way_us = 0;
  // The legacy model's stand-in for a path: added to the injected delay's mean (NetModel) by
  // whoever runs the model (harness/run/sim_runtime.cc). 0 for every measured profile, which has
  // one_way_us instead; profile files cannot set it.
  int64_t legacy_delay_floor_us = 0;
  // How many connections the figures were measured with (the node's lockstep drivers, the real
  // runtime's clients); 0: not recorded (profiles before the key). Costs per step depend on it:
  // a loop of 1,000 connections costs more per command than one of 20.
  int connections = 0;
  // The same figures measured at fewer connections (its `connections` below this one's), or
  // null. The simulator never reads it: whoever chooses a profile for a run picks the figures
  // measured nearest the run's client count (harness/run/profile.h, ChooseProfile).
  std::shared_ptr<const CostModel> fewer;
};

// The simulator's model before cost profiles: every node step (command, script, BLPOP served,
// SUBSCRIBE) a constant 2 µs, no wake-up, no client cost, no path of its own, and the old
// loopback floor as legacy_delay_floor_us = 50 (on the injected delay's mean): `--profile
// legacy` is the old simulator byte for byte.
inline constexpr char kLegacyCostName[] = "builtin-legacy";
CostModel LegacyCostModel();

}  // namespace locklab::sim
