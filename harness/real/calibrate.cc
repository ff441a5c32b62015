#include "harness/real/calibrate.h"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <iterator>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "harness/check/checkers.h"
#include "harness/real/calibrate_internal.h"
#include "harness/real/cpu_placement.h"
#include "harness/real/least_squares.h"
#include "harness/real/redis_server.h"

namespace locklab {
namespace {

using ojson = nlohmann::ordered_json;
using calib::ClientSamples;
using calib::PassFitJson;
using calib::R3;
using calib::NodeSamples;
using calib::Sizes;

double Mean(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// One figure: its distribution from the samples, and how it was made in `figures`.
sim::CostDist Figure(const std::string& name, const std::vector<double>& samples, const std::string& method,
                     ojson* figures) {
  SampleSummary s = DistFromSamples(samples);
  ojson& f = (*figures)[name];
  f["samples"] = s.samples;
  f["trimmed_above_p999"] = s.trimmed;
  f["clamped_negative"] = s.clamped;
  f["method"] = method;
  return s.dist;
}

template <class Key>
ojson MeansBy(const std::map<Key, std::vector<double>>& m) {
  ojson j = ojson::object();
  for (const auto& [k, v] : m) {
    if constexpr (std::is_same_v<Key, std::string>) {
      j[k] = R3(Mean(v));
    } else {
      j[std::to_string(k)] = R3(Mean(v));
    }
  }
  return j;
}

// Per key: how many samples, and their median and 90th percentile (nearest rank, as Summarize).
ojson QuantilesBy(const std::map<int, std::vector<double>>& m) {
  ojson j = ojson::object();
  for (const auto& [k, v] : m) {
    const LatencySummary s = Summarize(v);
    j[std::to_string(k)] = ojson{{"n", s.count}, {"p50", R3(s.p50)}, {"p90", R3(s.p90)}};
  }
  return j;
}

ojson SizesJson(const Sizes& s) {
  return ojson{{"drivers", s.drivers},
               {"batch", s.batch},
               {"batches_per_round", s.batches},
               {"pings_per_round", s.pings},
               {"script_batch", s.script_batch},
               {"publish_batch", s.publish_batch},
               {"subscribers", s.subscribers},
               {"message_subscribers", s.message_subscribers},
               {"blpop_waiters", s.waiters},
               {"blpop_samples_per_round", s.blpop_samples},
               {"runtime_clients", s.clients},
               {"runtime_ops_per_client", {s.client_m1, s.client_m2}},
               {"runtime_pairs_per_round", s.client_pairs},
               {"light_load_steps_per_client", {s.idle_m1, s.idle_m2}},
               {"wake_samples_per_idle_per_round", s.wake_samples},
               {"replica_pairs_per_round", s.replica_pairs}};
}

// The passes loop's figures (sim/cost_model.h, LoopCosts), constants made from the node's
// measurements: what a PING's round trip spends beyond both processes' CPU, one way; and half
// the I/O a command costs the server beyond its pipelined execution (a read and a write).
sim::LoopCosts LoopFigures(const NodeSamples& ns, double command_us, ojson* figures) {
  sim::LoopCosts loop;
  loop.passes = true;
  const double wire = std::max(0.0, (Mean(ns.ping_rtt_us) - Mean(ns.ping_server_us) - Mean(ns.ping_client_us)) / 2);
  const double write = std::max(0.0, (command_us - Mean(ns.pipelined_command_us)) / 2);
  loop.wire_us = sim::CostDist::Constant(R3(wire));
  loop.reply_write_us = sim::CostDist::Constant(R3(write));
  (*figures)["loop.wire_us"] = ojson{
      {"samples", ns.ping_rtt_us.size()},
      {"method", "(mean PING round trip - server CPU per PING - client CPU per PING) / 2, a constant"}};
  (*figures)["loop.reply_write_us"] = ojson{
      {"samples", ns.pipelined_command_us.size()},
      {"method", "(node.command_us mean - pipelined wall time per command) / 2, a constant"}};
  return loop;
}

// The client's figures: CPU of the real runtime per step, and its timers' lateness after idling.
sim::ClientCosts ClientFigures(const ClientSamples& cs, int message_subscribers, ojson* figures) {
  sim::ClientCosts c;
  ojson& fig = *figures;
  std::vector<double> half;
  for (double x : cs.per_command_us) half.push_back(x / 2);
  const std::string client_method =
      "CPU (getrusage user+sys) of locklab's real runtime (one process, one libevent loop, history traced) with N "
      "clients each sending M GETs one at a time; two runs per sample, the difference over the extra commands; "
      "each run of the pair's four loads (these GETs, sleeps alone, a sleep then a GET, held GETs) made twice (in "
      "order, then in reverse order) and its smaller CPU kept before the difference (the VM's interference only "
      "adds CPU); half of the per-command CPU (a command and its reply are not separable this way)";
  c.placement = sim::ClientCosts::Placement::kOneProcess;
  c.send_us = Figure("client.send_us", half, client_method, &fig);
  c.reply_us = Figure("client.reply_us", half, client_method, &fig);
  c.timer_us = Figure("client.timer_us", cs.timer_us,
                             "the same with each client sleeping 100 us before each GET: the CPU per step less "
                             "a command's (send + reply): a timer firing and resuming its coroutine among replies "
                             "and writes, as a retrying client's (sleeps alone: cross_checks.client_timer_alone_us)",
                             &fig);
  c.hold_us = Figure("client.hold_us", cs.hold_us,
                            "the same GETs with every request and reply held 50 us by the runtime's injected "
                            "delay (as --net-delay-ms is applied on real Redis): the CPU per command beyond the "
                            "plain runs', halved (two held messages per command)",
                            &fig);
  // Per message: the CPU per PUBLISH in the herd (every subscriber sends one GET for it, as a
  // woken lock waiter makes its attempt) less the publisher's command and the subscribers'
  // commands (a send and a reply each, as measured above), over the subscribers it reached.
  std::vector<double> message;
  const double per_command_us = Mean(cs.per_command_us);
  const double n = message_subscribers;
  for (double x : cs.herd_publish_cpu_us) message.push_back((x - per_command_us * (n + 1)) / n);
  c.message_us = Figure("client.message_us", message,
                        "CPU (getrusage) of locklab's real runtime with N clients subscribed to one channel, each "
                        "sending one GET for every message it gets (a woken waiter's attempt), and one more "
                        "client publishing M messages, the next once all N GETs are answered; two runs per "
                        "sample, the difference per PUBLISH (less the publisher's polls at client_timer_alone_us) "
                        "less N + 1 commands' CPU (send + reply, above), over N",
                        &fig);
  // Per wake-up: a light-load step's CPU less its command and its timer at the saturated rate
  // (above), over the loop's blocks per step.
  std::vector<double> wake_cpu;
  const double busy_step_us = per_command_us + Mean(cs.timer_us);
  for (size_t i = 0; i < cs.idle_step_cpu_us.size() && i < cs.idle_step_blocks.size(); ++i)
    wake_cpu.push_back((cs.idle_step_cpu_us[i] - busy_step_us) / cs.idle_step_blocks[i]);
  c.wake_cpu_us = Figure("client.wake_cpu_us", wake_cpu,
                         "CPU (getrusage) of locklab's real runtime with N clients each sleeping a random time "
                         "(mean N/2000 s) and then sending a GET, M times: two runs per sample, the CPU per extra "
                         "step less one command (send + reply) and one timer (above), over the loop's voluntary "
                         "context switches per extra step (its wake-ups from idle)",
                         &fig);
  for (const auto& [idle_us, late] : cs.wake_late_us) {
    const std::string name = "client.wake_after_idle." + std::to_string(idle_us);
    c.wake_after_idle.push_back(sim::WakeRow{
        static_cast<double>(idle_us),
        Figure(name, late,
               "one client of the real runtime, nothing else to do, sleeping " + std::to_string(idle_us) +
                   " us: steady-clock time from the sleep's start to its coroutine's resumption, less " +
                   std::to_string(idle_us) + " us",
               &fig)});
  }
  return c;
}

// The master-to-replica trip, one way, a constant: (WAIT 1 after a SET - a PING) / 2, from the
// rounds' medians (their mean); 0 (the simulator's own default) when nothing was measured.
// (Indexes `measurements` afresh: a reference into an ordered_json object dies when a key is added.)
double ReplicaFigure(const NodeSamples& ns, ojson* measurements) {
  if (ns.replica_wait_us.empty()) return 0;
  const double wait = Mean(ns.replica_wait_us), ping = Mean(ns.replica_ping_us);
  (*measurements)["figures"]["replica_one_way_us"] = ojson{
      {"samples", ns.replica_wait_us.size()},
      {"method", "on a master with one replica (servers of their own), (median wall time of WAIT 1 1000 right after a "
                 "SET - median wall time of a PING after it) / 2, at least 1: the write's state there and the "
                 "acknowledgement back; one sample per round (its pairs' medians), the rounds' mean"}};
  (*measurements)["cross_checks"]["replica_wait_us"] = R3(wait);
  (*measurements)["cross_checks"]["replica_ping_us"] = R3(ping);
  return std::max(1.0, R3((wait - ping) / 2));
}

// The client's cross-checks (measurements["cross_checks"]): figures measured beside the model's,
// which it does not use.
void ClientCrossChecks(const ClientSamples& cs, int message_subscribers, ojson* out) {
  ojson& x = *out;
  x["client_cpu_per_command_us"] = R3(Mean(cs.per_command_us));
  x["client_timer_alone_us"] = R3(Mean(cs.timer_alone_us));
  x["client_timer_alone_note"] = "client.timer_us's old method: CPU per sleep when each client only sleeps 100 us, M times";
  std::vector<double> alone;  // client.message_us's old method: subscribers that only wait again
  for (double v : cs.publish_cpu_us) alone.push_back((v - Mean(cs.per_command_us)) / message_subscribers);
  x["client_message_alone_us"] = R3(Mean(alone));
  x["client_message_alone_note"] =
      "the same PUBLISHes to subscribers that do nothing but wait again: CPU per message, less the publisher's command";
  x["client_light_load_cpu_per_step_us"] = R3(Mean(cs.idle_step_cpu_us));
  x["client_light_load_blocks_per_step"] = R3(Mean(cs.idle_step_blocks));
  x["client_wake_in_crowd_us"] = QuantilesBy(cs.crowd_wake_late_us);
  x["client_wake_in_crowd_note"] =
      "client.wake_after_idle's lateness in the light load (a thousand clients sleeping at random, then a GET): "
      "a timer that began a pass of the loop after it idled, by the idle row nearest the idle time";
  x["client_pass_fit"] = PassFitJson(cs.passes);
  x["client_pass_fit_note"] =
      "the light load again with every request and reply held 50 us (uniform): each loop pass's CPU "
      "(CLOCK_THREAD_CPUTIME_ID) fitted by least squares to its steps, us per pass, per kind of step and per pass "
      "that began by sleeping; the simulator charges a send, a reply, a timer, a hold and a wake-up instead";
  x["client_cold_fit"] = ojson{{"idle_ms", cs.cold_idle_ms}, {"cold", PassFitJson(cs.cold_passes)},
                               {"warm", PassFitJson(cs.warm_passes)}};
  x["client_cold_fit_note"] =
      "waves of held GETs from every client at once (timers due within 1 ms), after each client slept idle_ms "
      "(cold) and 10 ms (warm), passes fitted as client_pass_fit: what a held request's write, a held reply's read "
      "and its callback cost in a wave, on a connection that rested idle_ms or was just used (the profile charges "
      "send_us, hold_us and reply_us there; client.cold_write_us, cold_read_us and held_callback_us can say more)";
}

// The model from the pooled samples; `measurements` says how each figure was made.
sim::CostModel BuildModel(const NodeSamples& ns, const ClientSamples& cs, int message_subscribers, ojson* measurements) {
  sim::CostModel m;
  ojson& fig = (*measurements)["figures"];
  m.node.command_us = Figure("node.command_us", ns.command_us,
                             "server main-thread CPU (INFO cpu) per command, SET PX/GET/DEL sent by 1, 10 and N "
                             "connections with one command each in flight (all send, then all read); per sample a "
                             "line over 1/in-flight: the intercept",
                             &fig);
  m.node.wake_us = Figure("node.wake_us", ns.wake_us,
                          "the slope of the same line: the event loop's cost per wake-up, shared by the commands "
                          "it reads together",
                          &fig);
  m.node.script_us = Figure("node.script_us", ns.script_us,
                            "intercept of a line over server CPU per EVALSHA of scripts making 0/1/4/16 "
                            "redis.call('GET'), N in flight (so it includes wake_us / N); one line per sample",
                            &fig);
  m.node.script_call_us = Figure("node.script_call_us", ns.script_call_us, "slope of the same line", &fig);
  m.node.publish_per_receiver_us =
      Figure("node.publish_per_receiver_us", ns.publish_per_receiver_us,
             "slope of a line over server CPU per PUBLISH (one at a time) with 0/10/100 subscribers", &fig);
  m.node.blpop_serve_us = Figure("node.blpop_serve_us", ns.blpop_serve_us,
                                 "server CPU per LPUSH (one at a time) that serves a parked BLPOP client minus per "
                                 "LPUSH nobody waits for",
                                 &fig);
  // A round trip less the server's part, halved. What is left is the loopback path: on one
  // machine that is mostly the two processes' kernel work (their CPU) and wake-ups;
  // cross_checks.ping_client_cpu_us says how much of it the client process spent.
  const double server_us = Mean(ns.ping_server_us);
  std::vector<double> one_way;
  for (double rtt : ns.ping_rtt_us) one_way.push_back((rtt - server_us) / 2);
  m.one_way_us = Figure("one_way_us", one_way,
                        "(one-at-a-time PING round trip with blocking hiredis - server CPU per PING) / 2, one "
                        "sample per PING; includes the client's own syscalls (see cross_checks.ping_client_cpu_us)",
                        &fig);
  m.client = ClientFigures(cs, message_subscribers, &fig);
  m.loop = LoopFigures(ns, m.node.command_us.MeanUs(), &fig);
  ojson& x = (*measurements)["cross_checks"];
  ojson stats = ojson::object();
  for (const auto& [name, cu] : ns.commandstats)
    if (cu.first > 0) stats[name] = R3(cu.second / cu.first);
  x["commandstats_usec_per_call"] = stats;
  x["info_cpu_cost_us"] = R3(ns.info_cost_us);
  x["commandstats_note"] = "INFO commandstats: command execution only, no I/O; GET counts calls from scripts too";
  x["command_us_by_in_flight"] = MeansBy(ns.command_by_in_flight_us);
  x["command_wall_us"] = R3(Mean(ns.command_wall_us));
  x["command_wall_note"] = "the same batches' wall time per command (the server is not alone on the machine)";
  x["pipelined_command_us"] = R3(Mean(ns.pipelined_command_us));
  x["pipelined_note"] = "one connection, a batch pipelined, wall time per command: the I/O is amortized away";
  x["command_us_after_idle_ms"] = MeansBy(ns.command_after_idle_us);
  x["command_after_idle_note"] =
      "server CPU per GET of a round of one GET from every connection at once, after the server idled this many ms "
      "(0: right after a round); the figures above are measured back to back";
  x["ping_rtt_mean_us"] = R3(Mean(ns.ping_rtt_us));
  x["ping_server_cpu_us"] = R3(Mean(ns.ping_server_us));
  x["ping_client_cpu_us"] = R3(Mean(ns.ping_client_us));
  x["script_us_by_calls"] = MeansBy(ns.script_by_calls_us);
  x["publish_base_us"] = R3(Mean(ns.publish_base_us));
  x["publish_us_by_subscribers"] = MeansBy(ns.publish_by_receivers_us);
  x["locklab_scripts_us"] = MeansBy(ns.locklab_script_us);
  ClientCrossChecks(cs, message_subscribers, &x);
  m.replica_one_way_us = ReplicaFigure(ns, measurements);
  return m;
}

struct Run {
  const CalibrateOptions& o;
  Sizes sizes;
  std::string label;  // "at 1000 connections: ", before every progress line
  void Say(const std::string& line) const {
    if (o.progress) o.progress(label + line);
  }
};

// One round of every measurement.
Status Round(const Run& run, int r, calib::NodeBench& bench, const std::string& address, ClientSamples* cs) {
  const std::string head = "round " + std::to_string(r + 1) + "/" + std::to_string(run.o.rounds) + ": ";
  if (Status s = bench.ResetStats(); !s.ok()) return s;
  run.Say(head + "plain commands, " + std::to_string(run.sizes.drivers) + " connections");
  if (Status s = bench.Commands(); !s.ok()) return s.Prefixed("commands");
  run.Say(head + "commands after the server idled");
  if (Status s = bench.AfterIdle(); !s.ok()) return s.Prefixed("commands after idling");
  run.Say(head + "scripts");
  if (Status s = bench.ScriptFit(); !s.ok()) return s.Prefixed("scripts");
  if (Status s = bench.LocklabScripts(); !s.ok()) return s.Prefixed("locklab scripts");
  run.Say(head + "PUBLISH to 0, 10, " + std::to_string(run.sizes.subscribers) + " subscribers");
  if (Status s = bench.Publish(); !s.ok()) return s.Prefixed("publish");
  run.Say(head + "serving " + std::to_string(run.sizes.waiters) + " parked BLPOPs");
  if (Status s = bench.Blpop(); !s.ok()) return s.Prefixed("blpop");
  run.Say(head + "one-at-a-time PINGs");
  if (Status s = bench.Pings(); !s.ok()) return s.Prefixed("pings");
  if (Status s = bench.CollectStats(); !s.ok()) return s.Prefixed("commandstats");
  run.Say(head + "client CPU on the real runtime (" + std::to_string(run.sizes.clients) + " clients)");
  for (int p = 0; p < run.sizes.client_pairs; ++p)
    if (Status s = calib::ClientPair(address, run.sizes, cs); !s.ok()) return s.Prefixed("client");
  run.Say(head + "pub/sub messages on the real runtime (" + std::to_string(run.sizes.message_subscribers) +
          " subscribers)");
  if (Status s = calib::ClientMessages(address, run.sizes, cs); !s.ok()) return s.Prefixed("client messages");
  run.Say(head + "CPU per wake-up from idle on the real runtime (" + std::to_string(run.sizes.clients) + " clients)");
  if (Status s = calib::ClientIdle(address, run.sizes, cs); !s.ok()) return s.Prefixed("client light load");
  run.Say(head + "cold and warm waves of held GETs on the real runtime (" + std::to_string(run.sizes.clients) +
          " clients)");
  if (Status s = calib::ClientCold(address, run.sizes, cs); !s.ok()) return s.Prefixed("client cold waves");
  run.Say(head + "timer lateness after idling, one client");
  if (Status s = calib::ClientWake(address, run.sizes, cs); !s.ok()) return s.Prefixed("client wake-up");
  return Status::Ok();
}

// Every figure at one size (run.sizes: its connections): the rounds on a redis-server of
// their own, then the replica's trips on a master with one replica. `m`: how each was made.
Result<sim::CostModel> MeasureAt(const Run& run, ProfileContext* context, ojson* m) {
  const CalibrateOptions& options = run.o;
  run.Say("starting redis-server");
  const std::optional<CpuSplit> split = PlanCpuSplit();
  RedisServerOptions so = calib::ServerOptions(options, split);
  context->cpu_placement = CpuPlacementText(split);
  const LoopCpuPin pin(split);  // the drivers (and the runtimes they start) where real runs put the loop
  Result<std::unique_ptr<RedisServers>> started = RedisServers::Start(so);
  if (!started.ok()) return started.status().Prefixed("cannot start redis-server");
  std::unique_ptr<RedisServers> servers = std::move(started).value();
  context->redis_server_version = servers->Version();
  NodeSamples ns;
  ClientSamples cs;
  {
    calib::NodeBench bench(servers->port(0), run.sizes, &ns);
    run.Say("connecting " + std::to_string(run.sizes.subscribers) + " subscribers and " +
            std::to_string(run.sizes.waiters) + " BLPOP clients");
    if (Status s = bench.Setup(); !s.ok()) return s.Prefixed("calibrate: setup");
    for (int r = 0; r < options.rounds; ++r)
      if (Status s = Round(run, r, bench, servers->address(0), &cs); !s.ok()) return s.Prefixed("calibrate");
  }  // every connection closed before the server stops
  servers.reset();
  run.Say("starting a master with one replica");
  so.with_replica = true;
  Result<std::unique_ptr<RedisServers>> pair = RedisServers::Start(so);
  if (!pair.ok()) return pair.status().Prefixed("cannot start redis-server with a replica");
  for (int r = 0; r < options.rounds; ++r) {
    run.Say("round " + std::to_string(r + 1) + "/" + std::to_string(options.rounds) + ": WAIT for the replica");
    if (Status s = calib::ReplicaTrips((*pair)->port(0), run.sizes, &ns); !s.ok()) return s.Prefixed("calibrate");
  }
  pair->reset();
  (*m)["sizes"] = SizesJson(run.sizes);
  sim::CostModel model = BuildModel(ns, cs, run.sizes.message_subscribers, m);
  model.connections = run.sizes.clients;
  return model;
}

// The CPUs this process may use (empty when unknown: one unpinned probe).
std::vector<int> AllowedCpus() {
  cpu_set_t set;
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

}  // namespace

RedisServerOptions calib::ServerOptions(const CalibrateOptions& options, const std::optional<CpuSplit>& split) {
  RedisServerOptions so;
  so.redis_server_path = options.redis_server_path;
  if (split) so.cpus = split->servers;
  return so;
}

Result<sim::StallCosts> CalibrateMachine(const CalibrateOptions& options, ojson* measurements) {
  if (options.rounds < 1 || options.rounds > 1000) return Status::Invalid("rounds: give 1 to 1000");
  const double seconds = options.quick ? 0.5 : 4.0;
  const std::vector<int> cpus = AllowedCpus();
  calib::MachineSamples ms;
  for (int r = 0; r < options.rounds; ++r) {
    if (options.progress)
      options.progress("round " + std::to_string(r + 1) + "/" + std::to_string(options.rounds) + ": machine stalls, " +
                       std::to_string(std::max<size_t>(cpus.size(), 1)) + " CPU(s) busy for " +
                       std::to_string(seconds).substr(0, 3) + " s");
    if (Status s = calib::MachineStalls(cpus, seconds, calib::kStallThresholdUs, &ms); !s.ok())
      return s.Prefixed("machine stalls");
  }
  sim::StallCosts out;
  out.per_s = ms.probed_s > 0 ? static_cast<double>(ms.stall_us.size()) / ms.probed_s : 0;
  ojson& fig = (*measurements)["figures"];
  const std::string method =
      "a thread on each of the " + std::to_string(ms.cpus) +
      " CPU(s) this process may use, all at once, busy reading the steady clock (" + std::to_string(options.rounds) +
      " x " + std::to_string(seconds).substr(0, 3) +
      " s, no server running): every gap of at least 200 us between two readings (the thread lost its CPU); "
      "stalls_per_s = gaps per CPU-second probed";
  if (!ms.stall_us.empty()) out.length_us = Figure("machine.stall_us", ms.stall_us, method, &fig);
  if (ms.stall_us.size() < 2) out.per_s = 0;  // too few to draw a distribution from: none
  (*measurements)["cross_checks"]["machine_stalls_seen"] = ms.stall_us.size();
  (*measurements)["cross_checks"]["machine_cpu_seconds_probed"] = R3(ms.probed_s);
  return out;
}

Result<Calibration> Calibrate(const CalibrateOptions& options) {
  if (options.rounds < 1 || options.rounds > 1000) return Status::Invalid("rounds: give 1 to 1000");
  const Sizes many = options.quick ? Sizes::Quick() : Sizes();
  if (options.fewer_connections < 0 || (options.fewer_connections > 0 && options.fewer_connections >= many.clients))
    return Status::Invalid("--fewer-connections: give 1 to " + std::to_string(many.clients - 1) + " (or leave it out)");
  Calibration out;
  out.context = LocalProfileContext();  // the load average before we add to it
  RaiseFileLimit();
  ojson& m = out.context.measurements;
  const std::string at_many = "at " + std::to_string(many.clients) + " connections: ";
  Result<sim::CostModel> main_model = MeasureAt(Run{options, many, at_many}, &out.context, &m);
  if (!main_model.ok()) return main_model.status();
  out.context.rounds = options.rounds;
  out.context.quick = options.quick;
  out.model = std::move(main_model).value();
  out.model.name = "calibrated:" + out.context.host + ":" + out.context.date_utc.substr(0, 10);
  Result<sim::StallCosts> machine = CalibrateMachine(options, &m);
  if (!machine.ok()) return machine.status();
  out.model.machine = *machine;
  if (options.fewer_connections == 0) return out;
  const Sizes fewer = Sizes::Fewer(many, options.fewer_connections);
  const std::string at_fewer = "at " + std::to_string(fewer.clients) + " connections";
  ojson fewer_m = ojson::object();
  Result<sim::CostModel> fewer_model = MeasureAt(Run{options, fewer, at_fewer + ": "}, &out.context, &fewer_m);
  if (!fewer_model.ok()) return fewer_model.status().Prefixed(at_fewer);
  m["fewer_connections"] = std::move(fewer_m);
  fewer_model->name = FewerConnectionsName(out.model.name, fewer.clients);
  fewer_model->machine = out.model.machine;  // the machine's, whatever the connections
  out.model.fewer = std::make_shared<const sim::CostModel>(std::move(fewer_model).value());
  return out;
}

std::string CalibrationTable(const sim::CostModel& model) {
  std::vector<std::pair<const char*, const sim::CostDist*>> rows = {
      {"node.command_us", &model.node.command_us},
      {"node.wake_us", &model.node.wake_us},
      {"node.script_us", &model.node.script_us},
      {"node.script_call_us", &model.node.script_call_us},
      {"node.publish_per_receiver_us", &model.node.publish_per_receiver_us},
      {"node.blpop_serve_us", &model.node.blpop_serve_us},
      {"client.send_us", &model.client.send_us},
      {"client.reply_us", &model.client.reply_us},
      {"client.timer_us", &model.client.timer_us},
      {"client.hold_us", &model.client.hold_us},
      {"client.message_us", &model.client.message_us},
      {"client.wake_cpu_us", &model.client.wake_cpu_us},
      {"loop.wire_us", &model.loop.wire_us},
      {"loop.reply_write_us", &model.loop.reply_write_us},
      {"one_way_us", &model.one_way_us}};
  // Keys most profiles do not have: a row only when set.
  for (const auto& row : {std::pair{"client.held_write_us", &model.client.held_write_us},
                          std::pair{"client.held_read_us", &model.client.held_read_us},
                          std::pair{"client.held_callback_us", &model.client.held_callback_us},
                          std::pair{"client.cold_write_us", &model.client.cold_write_us},
                          std::pair{"client.cold_read_us", &model.client.cold_read_us}})
    if (!row.second->points.empty()) rows.push_back(row);
  std::string out;
  char line[160];
  if (model.connections > 0) out += "at " + std::to_string(model.connections) + " connections\n";
  std::snprintf(line, sizeof line, "%-30s %10s %10s %10s\n", "figure (us)", "mean", "p50", "p99");
  out += line;
  for (const auto& [name, d] : rows) {
    std::snprintf(line, sizeof line, "%-30s %10.3f %10.3f %10.3f\n", name, d->MeanUs(), d->AtUs(0.5), d->AtUs(0.99));
    out += line;
  }
  if (model.client.cold_after_ms > 0) {
    std::snprintf(line, sizeof line, "%-30s %10.3f ms\n", "client.cold_after_ms", model.client.cold_after_ms);
    out += line;
  }
  if (model.replica_one_way_us > 0) {
    std::snprintf(line, sizeof line, "%-30s %10.3f %10s %10s\n", "replica_one_way_us", model.replica_one_way_us, "-",
                  "-");
    out += line;
  }
  for (const sim::WakeRow& r : model.client.wake_after_idle) {
    const std::string name = "client.wake_after_idle " + std::to_string(static_cast<int64_t>(r.idle_us));
    std::snprintf(line, sizeof line, "%-30s %10.3f %10.3f %10.3f\n", name.c_str(), r.late_us.MeanUs(),
                  r.late_us.AtUs(0.5), r.late_us.AtUs(0.99));
    out += line;
  }
  if (model.machine.per_s > 0) {
    std::snprintf(line, sizeof line, "%-30s %10.3f %10.3f %10.3f   (%.2f a second per CPU)\n", "machine.stall_us",
                  model.machine.length_us.MeanUs(), model.machine.length_us.AtUs(0.5),
                  model.machine.length_us.AtUs(0.99), model.machine.per_s);
    out += line;
  }
  if (model.fewer != nullptr) out += "\n" + CalibrationTable(*model.fewer);
  return out;
}

}  // namespace locklab
