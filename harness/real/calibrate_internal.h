// The pieces of Calibrate (calibrate.h), shared by calibrate.cc (orchestration),
// calibrate_node.cc (hiredis measurements of a redis-server) and calibrate_client.cc (the real
// runtime's CPU). Not for other callers.
#pragma once

#include <hiredis/hiredis.h>

#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/status.h"
#include "harness/real/calibrate.h"
#include "harness/real/cpu_placement.h"
#include "harness/real/redis_runtime.h"
#include "harness/real/redis_server.h"

namespace locklab::calib {

// How much each measurement does per round.
struct Sizes {
  int drivers = 1000;        // connections with one command each in flight (lockstep): as many as
                             // the retry study's clients (a server with 1000 connections costs more
                             // per command than with 50)
  int batch = 3000;          // commands per sample (command_us), over the drivers
  int batches = 20;          // samples per round, for each batched measurement
  int pings = 1000;          // one-at-a-time PINGs per round
  int script_batch = 300;    // EVALSHAs per sample
  int publish_batch = 200;   // PUBLISHes per sample, one at a time
  int subscribers = 100;     // the largest subscriber count of node.publish (0, 10 and this)
  int message_subscribers = 1000;  // client.message_us: the real runtime's clients subscribed (the
                                   // retry study's 1000 waiters: 1000 messages per PUBLISH cost
                                   // more each than 100)
  int waiters = 200;         // parked BLPOP clients
  int blpop_samples = 5;     // park-and-serve cycles per round
  int clients = 1000;        // real runtime clients (the retry study's 1000: a loop of 1000
                             // connections costs more per command than one of 100)
  int client_m1 = 10, client_m2 = 50;  // commands (or sleeps) per client in the two runs of a pair
  int client_pairs = 2;      // pairs per round
  int idle_m1 = 2, idle_m2 = 6;  // sleep-and-GET steps per client in the two light-load runs of
                                 // client.wake_cpu_us (clients of them; 2,000 steps/s in all)
  int wake_samples = 200;    // timer firings per idle time per round (wake_after_idle); a tenth
                             // of them at idle times of 10 ms and more
  int replica_pairs = 300;   // SET + WAIT 1 + PING per round on a master with one replica
  std::vector<int> idle_ms = {0, 200, 2000};  // cross_checks.command_us_after_idle_ms: how long the
  int idle_samples = 2;                       // server idles before a round of GETs; rounds of each
  int cold_idle_ms = 1200;  // cross_checks.client_cold_fit: how long every client sleeps before
  int cold_rounds = 3;      // each of its held GETs in the cold waves (rounds of them)
  static Sizes Quick();
  // The same batches at n connections (node drivers, runtime clients, message subscribers), for
  // the figures of runs with few clients (a profile's fewer_connections block).
  static Sizes Fewer(const Sizes& many, int n);
};

// Samples pooled over the rounds (µs).
struct NodeSamples {
  std::vector<double> command_us, wake_us;   // server main-thread CPU: per command, per loop wake
  std::map<int, std::vector<double>> command_by_in_flight_us;  // in flight -> CPU per command
  std::vector<double> command_wall_us;       // lockstep wall time per command (cross-check)
  std::vector<double> pipelined_command_us;  // pipelined batch wall time per command (cross-check)
  std::map<int, std::vector<double>> command_after_idle_us;  // idle ms -> CPU per command (cross-check)
  std::vector<double> ping_rtt_us;
  std::vector<double> ping_server_us, ping_client_us;  // CPU per PING: server, this process
  std::vector<double> script_us, script_call_us;
  std::vector<double> publish_per_receiver_us, publish_base_us;
  std::vector<double> blpop_serve_us;
  std::map<int, std::vector<double>> script_by_calls_us;       // calls -> per EVALSHA
  std::map<int, std::vector<double>> publish_by_receivers_us;  // subscribers -> per PUBLISH
  std::map<std::string, std::vector<double>> locklab_script_us;  // script name -> per EVALSHA
  std::map<std::string, std::pair<double, double>> commandstats;  // command -> (calls, usec)
  double info_cost_us = 0;  // one INFO cpu's own server CPU, taken out of every CPU difference
  // Per round, on a master with one replica: the median wall time of WAIT 1 right after a SET,
  // and of a PING after it (the round trip alone).
  std::vector<double> replica_wait_us, replica_ping_us;
};

struct ClientSamples {
  std::vector<double> per_command_us;  // send + reply
  std::vector<double> timer_us;        // a sleep's CPU in a step of a sleep and a command
  std::vector<double> timer_alone_us;  // a sleep's CPU when the steps are sleeps only
  std::vector<double> hold_us;  // per message held for an injected delay, beyond per_command_us / 2
  std::vector<double> idle_step_cpu_us;  // light load (sleep then GET): CPU per step
  std::vector<double> idle_step_blocks;  // ... and the loop's blocks (wake-ups from idle) per step
  std::map<int, std::vector<double>> wake_late_us;  // idle µs -> how late a timer fired after it
  // The same in the light load's crowd (a thousand clients, wake-ups for timers after the loop
  // idled: RedisRuntime::RecordWakes), by the row of kWakeIdleUs nearest the idle time (in ratio).
  std::map<int, std::vector<double>> crowd_wake_late_us;
  // The loop's passes in the light load with every message held (RedisRuntime::RecordPasses),
  // pooled over rounds: what cross_checks.client_pass_fit fits.
  std::vector<RedisRuntime::PassSample> passes;
  // The loop's passes in waves of held GETs after every client slept Sizes::cold_idle_ms (cold)
  // and after 10 ms (warm): what cross_checks.client_cold_fit fits.
  std::vector<RedisRuntime::PassSample> cold_passes, warm_passes;
  int cold_idle_ms = 0;
  std::vector<double> publish_cpu_us;  // per PUBLISH to Sizes::subscribers clients of the runtime:
                                       // the publisher's command and every subscriber's message
  std::vector<double> herd_publish_cpu_us;  // the same with every subscriber sending one GET per
                                            // message, as a woken lock waiter's attempt
};

// The idle times wake_after_idle is measured at (µs).
inline constexpr int kWakeIdleUs[] = {5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 50000};
// The row of kWakeIdleUs nearest `idle_us` in ratio (the first below it, the last above it).
int NearestWakeIdleUs(double idle_us);

struct Conn {
  struct Free {
    void operator()(redisContext* c) const { redisFree(c); }
  };
  std::unique_ptr<redisContext, Free> ctx;
  redisContext* get() const { return ctx.get(); }
};
// A blocking hiredis connection to 127.0.0.1:port with a 5 s connect and I/O timeout.
Result<Conn> Connect(int port);
// One command and its reply as text (status/string verbatim, integers in decimal).
Result<std::string> Query(const Conn& c, const std::vector<std::string>& argv);

// The node measurements against one server (all connections made here are closed on return).
class NodeBench {
 public:
  NodeBench(int port, const Sizes& sizes, NodeSamples* out) : port_(port), sizes_(sizes), out_(out) {}
  Status Setup();  // connections, subscribers, waiters, scripts loaded
  Status Commands();
  // Rounds of one GET from every driver at once, each after the server idled Sizes::idle_ms (0:
  // right after a round): server CPU per command. A cross-check: a server that idled for long
  // spends more on the work that wakes it, which the figures (measured back to back) leave out.
  Status AfterIdle();
  Status Pings();
  Status ScriptFit();
  Status LocklabScripts();
  Status Publish();
  Status Blpop();
  Status ResetStats();
  Status CollectStats();

 private:
  Status Drain(const Conn& c, int replies);
  Status Subscribe();
  Status ParkWaiters();
  // The server's main-thread CPU so far (INFO cpu), µs. A difference of two readings includes
  // one INFO's own cost (info_cost_us_, measured in Setup): callers subtract it.
  Result<double> ServerCpuUs();
  // The first `in_flight` drivers send make(driver, round), rounds times in lockstep (all send,
  // then all read): server CPU per command and wall time per command.
  Result<std::pair<double, double>> Lockstep(int rounds, const std::function<std::vector<std::string>(int, int)>& make,
                                             const std::string& what, size_t in_flight);
  // One connection sends `argv` n times, one at a time: server CPU per command.
  Result<double> OneAtATime(const std::vector<std::string>& argv, int n, const std::string& what);
  double info_cost_us_ = 0;  // = out_->info_cost_us
  int port_;
  Sizes sizes_;
  NodeSamples* out_;
  Conn main_;
  std::vector<Conn> drivers_;
  std::vector<Conn> subscribers_;
  std::vector<Conn> waiters_;
  std::map<int, std::string> fit_sha_;  // calls -> sha
};

// One pair of real-runtime runs against HOST:PORT: appends a per-command and a per-timer sample.
Status ClientPair(const std::string& address, const Sizes& sizes, ClientSamples* out);
// Sizes::subscribers clients of the real runtime subscribed to one channel, one more publishing
// to it one message at a time (two runs, client_m1 and client_m2 messages): CPU per PUBLISH.
Status ClientMessages(const std::string& address, const Sizes& sizes, ClientSamples* out);
// One client of the real runtime, otherwise idle, sleeping each of kWakeIdleUs in turn: how much
// later than due each sleep ended (its timer fired and its coroutine resumed).
Status ClientWake(const std::string& address, const Sizes& sizes, ClientSamples* out);
// client.wake_cpu_us's samples: Sizes::clients clients of the real runtime, each sleeping a
// random time and sending a GET, slowly enough that the loop idles between events.
Status ClientIdle(const std::string& address, const Sizes& sizes, ClientSamples* out);
// Waves of held GETs from every client at once, after each has slept Sizes::cold_idle_ms and
// after 10 ms: the loop's passes of both (ClientSamples::cold_passes, warm_passes).
Status ClientCold(const std::string& address, const Sizes& sizes, ClientSamples* out);

// A master with one replica (its own servers, not the ones measured above: a replica makes the
// master's writes cost more): replica_pairs times a SET, a timed WAIT 1 1000 (which must say 1),
// a timed PING; appends the median of each. The replica trip is (WAIT - PING) / 2: the write's
// state there and the acknowledgement back.
Status ReplicaTrips(int master_port, const Sizes& sizes, NodeSamples* out);

// Machine stalls (sim/cost_model.h, StallCosts): what MachineStalls saw.
struct MachineSamples {
  std::vector<double> stall_us;  // every gap seen, pooled over CPUs and rounds
  double probed_s = 0;           // CPU-seconds probed (seconds x CPUs, summed over rounds)
  int cpus = 0;                  // CPUs probed at once
};
// Gaps of at least this are stalls; shorter ones (the kernel's tick and the hypervisor's routine
// exits: several hundred a second of 50-100 µs on the 2-vCPU VM) are spread over every step and
// already inside the measured wall times.
inline constexpr double kStallThresholdUs = 200;
// One thread per CPU in `cpus` (empty: one thread, unpinned), all at once, each busy reading the
// steady clock for `seconds`: every gap of at least threshold_us between two readings is a
// stall (the thread lost its CPU). Appends them to out.
Status MachineStalls(const std::vector<int>& cpus, double seconds, double threshold_us, MachineSamples* out);

// The steady clock in µs, for timing (differences only).
double SteadyUs();

using ojson = nlohmann::ordered_json;
// A figure as the profile and its measurements record it: rounded to 0.001.
inline double R3(double x) { return std::round(x * 1000) / 1000; }
// The redis-server a calibration measures: options.redis_server_path, on the CPUs `split`
// leaves to servers (real runs' placement; the caller pins its loop with a LoopCpuPin).
RedisServerOptions ServerOptions(const CalibrateOptions& options, const std::optional<CpuSplit>& split);
// Each pass's CPU fitted by least squares to its steps, a coefficient per kind present (a pass,
// a timer, a write, a read, a held reply's callback, a pass that began by sleeping), as the
// README's loop-log fits do: {"passes", "per_pass_us", "timer_us", ..., "r2"}, or "fit": "none".
ojson PassFitJson(const std::vector<RedisRuntime::PassSample>& passes);

// Least squares y = a + b x.
std::pair<double, double> FitLine(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace locklab::calib
