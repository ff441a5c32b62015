// Calibrate: measure this machine's costs on real redis-server processes that it starts
// itself (loopback, free ports; always stopped, even on failure: RedisServers), for the
// simulator's CostModel (sim/cost_model.h). `locklab calibrate` writes the result as a profile
// (harness/run/profile.h).
//
// What is measured, each in `rounds` rounds (samples pooled; a distribution's points are
// quantiles of the samples, the top 0.1% trimmed; see DistFromSamples):
//  - node.command_us: pipelined batches of SET PX / GET / DEL timed end to end (commands
//    formatted before the clock starts), wall time per command, one sample per batch. INFO
//    commandstats' usec_per_call is reported next to it (it leaves out the I/O).
//  - node.script_us, node.script_call_us: pipelined EVALSHA of scripts making 0, 1, 4 and 16
//    redis.call('GET')s; per batch a least-squares line: intercept = script_us, slope =
//    script_call_us. locklab's own scripts (sim/scripts.h) are timed too (informative).
//  - node.publish_per_receiver_us: pipelined PUBLISH to channels with 0, 10 and 100
//    subscribers (extra connections, drained between batches), each batch ended by a PING so
//    that every delivery is written; the slope of a line over the three.
//  - node.blpop_serve_us: W clients parked on BLPOP, then W pipelined LPUSHes serve them (+ a
//    PING), minus the same LPUSHes with nobody waiting; per waiter.
//  - one_way_us: one-at-a-time PING round trips (hiredis, blocking) minus the mean command_us,
//    halved (so that a simulated round trip, one_way + command + one_way, matches a real one).
//  - client.send_us, client.reply_us, client.timer_us: CPU (getrusage user + sys) of locklab's
//    own real runtime (RedisRuntime: one process, one libevent loop) running N clients that
//    each send M GETs one after the other, or sleep M times 100 µs; two M per sample, the
//    difference divided by the extra commands (fixed costs cancel). A command and its reply
//    cannot be told apart this way: each of send_us and reply_us is half of the per-command CPU.
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
  std::string redis_server_path = "/usr/bin/redis-server";
  // Called with one line per step ("round 2/5: scripts"); may be empty.
  std::function<void(const std::string&)> progress;
};

struct Calibration {
  sim::CostModel model;     // name "calibrated:<host>:<date>"
  ProfileContext context;   // incl. "measurements": how each figure was made, cross-checks
};

Result<Calibration> Calibrate(const CalibrateOptions& options);

// The figures as a text table: one row per figure with mean, p50 and p99 (µs).
std::string CalibrationTable(const sim::CostModel& model);

}  // namespace locklab
