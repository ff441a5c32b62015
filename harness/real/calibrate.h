// Calibrate: measure this machine's costs on real redis-server processes that it starts
// itself (loopback, free ports; always stopped, even on failure: RedisServers), for the
// simulator's CostModel (sim/cost_model.h). `locklab calibrate` writes the result as a profile
// (harness/run/profile.h).
//
// What is measured, each in `rounds` rounds (samples pooled; a distribution's points are
// quantiles of the samples, the top 0.1% trimmed; see DistFromSamples). Node figures are the
// server's main-thread CPU (INFO cpu: used_cpu_{user,sys}_main_thread, less one INFO's own
// cost), which is the time its one thread is busy whatever else runs on the machine, in the
// regime of locklab's real backend: each connection has one command in flight, so every
// command pays its own read and write (pipelining would amortize that away; the pipelined
// figure is reported as a cross-check, with INFO commandstats' usec_per_call, which leaves out
// the I/O altogether).
//  - node.command_us, node.wake_us: SET PX / GET / DEL from 1, 10 and D connections, one
//    command each in flight (all send, then all read), server CPU per command; per sample a
//    least-squares line over 1/in-flight: intercept = command_us, slope = wake_us (the event
//    loop's wake-up, shared by the commands it reads together: a command alone pays all of it).
//  - node.script_us, node.script_call_us: EVALSHA of scripts making 0, 1, 4 and 16
//    redis.call('GET'), D in flight (so wake_us / D is in it); per sample a line over the
//    four: intercept = script_us, slope = script_call_us. locklab's own scripts
//    (sim/scripts.h) are measured too (informative).
//  - node.publish_per_receiver_us: PUBLISH one at a time to channels with 0, 10 and 100
//    subscribers (extra connections, drained between samples); the slope of a line over the
//    three (each delivery is a write to its subscriber's socket).
//  - node.blpop_serve_us: W clients parked on BLPOP, then W LPUSHes one at a time serve them:
//    per LPUSH, minus an LPUSH nobody waits for.
//  - one_way_us: one-at-a-time PING round trips (blocking hiredis, wall time) minus the
//    server's CPU per PING, halved. On loopback the rest is mostly the two processes' kernel
//    work and wake-ups; the client's CPU per PING is reported next to it.
//  - replica_one_way_us: on a master with one replica (servers of their own, started after the
//    others stop: a replica makes the master's writes cost more), replica_pairs times a SET, a
//    timed WAIT 1 1000 and a timed PING; (WAIT - PING) / 2 from each round's medians (a stalled
//    pair moves a mean by more than the trip), one sample per round.
//  - client.send_us, client.reply_us, client.timer_us: CPU (getrusage user + sys) of locklab's
//    own real runtime (RedisRuntime: one process, one libevent loop, history traced) running N
//    clients that each send M GETs one after the other, or sleep M times 100 µs; two M per
//    sample, the difference divided by the extra commands (fixed costs cancel). A command and
//    its reply cannot be told apart this way: each of send_us and reply_us is half of the
//    per-command CPU. The clients are as many as the retry study's (1000): a loop of 1000
//    connections costs more per command than one of 100.
//  - client.hold_us: the same GETs with every request and reply held 50 µs by the runtime's
//    injected delay (how --net-delay-ms is applied on real Redis: a timer in this process);
//    the extra CPU per command, halved (a request and a reply held per command).
//  - client.message_us: N clients of the real runtime (1000, the retry study's waiters: 1000
//    messages per PUBLISH cost more each than 100) subscribed to one channel, each sending one
//    GET for every message (as a woken lock waiter makes its attempt), one more publishing M
//    messages, the next once all N GETs are answered; two M per sample, the difference per
//    PUBLISH (less the publisher's polling timers) less N + 1 commands' CPU, over N. The old
//    measure (subscribers that only wait again) is cross_checks.client_message_alone_us.
//  - client.wake_cpu_us: N clients of the real runtime each sleeping a random time (uniform,
//    mean N / 2000 s) and then sending a GET, M times (two M per sample): the CPU per extra step
//    less one command and one timer (above), over the loop thread's voluntary context switches
//    per extra step (getrusage ru_nvcsw: its blocks in epoll_wait, its wake-ups from idle).
//    Cross-checks from the same light load: how late a timer that woke the idle loop ran, by
//    idle time (cross_checks.client_wake_in_crowd_us), and, in one more run with every message
//    held 50 µs, each loop pass's CPU fitted by least squares to its steps by kind
//    (cross_checks.client_pass_fit: per pass, timer, write, read, held reply, a pass that slept).
//    The same fit over waves of held GETs from every client at once, after each slept
//    Sizes::cold_idle_ms and after 10 ms (cross_checks.client_cold_fit: cold and warm).
// With fewer_connections, all of the above again at that many connections (node drivers,
// runtime clients, subscribers), into the model's `fewer`.
// Negative samples (differences of noisy timings) are clamped to 0 and counted.
//
// Every loop has a limit and every socket read a timeout (5 s); a failure is Status::Failed
// saying which measurement failed. Blocks for a few seconds (quick) to about a minute.
#pragma once

#include <functional>
#include <string>

#include "algorithms/status.h"
#include "harness/run/profile.h"
#include "sim/cost_model.h"

namespace locklab {

struct CalibrateOptions {
  int rounds = 5;
  bool quick = false;  // small batches and few clients: a few seconds, rough figures
  // > 0: every figure measured again at this many connections (below the main size's 1000, or
  // 20 with quick) into the model's `fewer` (a profile's fewer_connections block); 0: not.
  int fewer_connections = 0;
  std::string redis_server_path = "/usr/bin/redis-server";
  // Called with one line per step ("round 2/5: scripts"); may be empty.
  std::function<void(const std::string&)> progress;
};

struct Calibration {
  sim::CostModel model;     // name "calibrated:<host>:<date>"
  ProfileContext context;   // incl. "measurements": how each figure was made, cross-checks
};

Result<Calibration> Calibrate(const CalibrateOptions& options);

// The machine's stalls (sim/cost_model.h, StallCosts): a thread busy reading the steady clock on
// every CPU this process may use, all at once, `rounds` x 4 s (0.5 s with quick), nothing else
// of ours running; every gap of at least 200 µs is a stall. Calibrate() runs it last; alone it
// takes seconds (`locklab calibrate --machine-only`). How it was made goes into
// measurements["figures"]["machine.stall_us"] and ["cross_checks"].
Result<sim::StallCosts> CalibrateMachine(const CalibrateOptions& options, nlohmann::ordered_json* measurements);

// A held command's CPU split over the client loop's steps, measured alone (`locklab calibrate
// --held-only`): on a redis-server of its own, `rounds` x the cold and warm waves of held GETs
// (cross_checks.client_cold_fit's measurement; 1000 clients even with quick, which only shortens
// the cold waves); from the warm waves' pass fit, `base` with client.held_write_us,
// held_read_us and held_callback_us (constants: the fit's write, read and held-reply
// coefficients) and hold_us (the fit's timer step less base's timer_us, at least 0: what arming
// a hold adds to a timer's step). The fit goes to cross_checks.held_split_fit.
// Invalid when base's loop is not in passes with held requests written by the loop; Failed when
// the fit is unusable (a coefficient missing or not above 0, R² below kHeldFitMinR2).
inline constexpr double kHeldFitMinR2 = 0.9;
Result<sim::CostModel> CalibrateHeldSplit(const CalibrateOptions& options, const sim::CostModel& base,
                                          nlohmann::ordered_json* measurements);
// The step of CalibrateHeldSplit after its measurement: `base` with the keys from a pass fit
// ({"timer_us", "write_us", "read_us", "held_reply_us", "r2"}); Failed when it is unusable.
Result<sim::CostModel> HeldSplitFromFit(const sim::CostModel& base, const nlohmann::ordered_json& warm_fit);

// The figures as a text table: one row per figure with mean, p50 and p99 (µs).
std::string CalibrationTable(const sim::CostModel& model);

}  // namespace locklab
