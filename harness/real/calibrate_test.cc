// A quick calibration against a real redis-server: the figures are there, finite and ordered
// sensibly, and no server is left running.
#include "harness/real/calibrate.h"
#include "harness/real/calibrate_internal.h"

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>
#include <fstream>
#include <string>
#include <tuple>

#include <gtest/gtest.h>

namespace locklab {
namespace {

// Live redis-server processes whose parent is this process.
int OurServers() {
  int found = 0;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return 0;
  while (dirent* d = readdir(proc)) {
    if (d->d_name[0] < '0' || d->d_name[0] > '9') continue;
    std::ifstream st(std::string("/proc/") + d->d_name + "/stat");
    std::string line;
    std::getline(st, line);
    const size_t paren = line.rfind(')');
    if (line.find("(redis-server)") == std::string::npos || paren + 2 >= line.size()) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(line.c_str() + paren + 2, "%c %d", &state, &ppid) == 2 && state != 'Z' && ppid == getpid()) ++found;
  }
  closedir(proc);
  return found;
}

void ExpectSane(const char* name, const sim::CostDist& d) {
  SCOPED_TRACE(name);
  ASSERT_GE(d.points.size(), 11u);
  EXPECT_EQ(d.points.front().first, 0.0);
  EXPECT_EQ(d.points.back().first, 1.0);
  for (const auto& [p, us] : d.points) {
    EXPECT_TRUE(std::isfinite(us));
    EXPECT_GE(us, 0.0);
  }
  EXPECT_LE(d.AtUs(0), d.AtUs(0.5));
  EXPECT_LE(d.AtUs(0.5), d.AtUs(0.99));
  EXPECT_LE(d.AtUs(0.99), d.AtUs(1));
}

// The node's cross-checks of a quick calibration.
void ExpectNodeCrossChecks(const nlohmann::ordered_json& x) {
  // A script costs at least a plain command to execute (INFO commandstats, no I/O).
  const auto& stats = x["commandstats_usec_per_call"];
  ASSERT_TRUE(stats.contains("EVALSHA") && stats.contains("GET")) << stats.dump();
  EXPECT_GE(stats["EVALSHA"].get<double>(), stats["GET"].get<double>());
  // A command alone costs the node more than one of many read together (the wake is shared).
  const auto& by_in_flight = x["command_us_by_in_flight"];
  ASSERT_TRUE(by_in_flight.contains("1")) << by_in_flight.dump();
  EXPECT_GT(by_in_flight["1"].get<double>(), by_in_flight.back().get<double>());
  // The rounds after the server idled (quick: 0 and 50 ms) were measured.
  const auto& after_idle = x["command_us_after_idle_ms"];
  ASSERT_TRUE(after_idle.contains("0") && after_idle.contains("50")) << after_idle.dump();
  EXPECT_GT(after_idle["50"].get<double>(), 0.0);
  // More subscribers, more work per PUBLISH.
  const auto& pub = x["publish_us_by_subscribers"];
  EXPECT_GT(pub["100"].get<double>(), pub["0"].get<double>());
}

// The client's cross-checks of a quick calibration.
void ExpectClientCrossChecks(const nlohmann::ordered_json& x) {
  EXPECT_TRUE(std::isfinite(x["client_message_alone_us"].get<double>()));
  // The light load idles between its events: the loop blocks for most of its steps (a sleep and
  // a GET each, 500 us apart on average).
  EXPECT_GT(x["client_light_load_blocks_per_step"].get<double>(), 0.5);
  // ... and its wake-ups for timers after idling were recorded, by idle row: each late by
  // something, at most a second.
  const auto& crowd = x["client_wake_in_crowd_us"];
  int64_t n = 0;
  for (const auto& [idle, row] : crowd.items()) {
    EXPECT_NE(std::find(std::begin(calib::kWakeIdleUs), std::end(calib::kWakeIdleUs), std::stoi(idle)),
              std::end(calib::kWakeIdleUs)) << idle;
    n += row["n"].get<int64_t>();
    EXPECT_GE(row["p50"].get<double>(), 0.0);
    EXPECT_LE(row["p50"].get<double>(), row["p90"].get<double>());
    EXPECT_LT(row["p90"].get<double>(), 1e6);
  }
  EXPECT_GT(n, 10) << crowd.dump();
  // The held light load's passes were recorded and fitted (or the fit says why not).
  const auto& fit = x["client_pass_fit"];
  EXPECT_GT(fit["passes"].get<int64_t>(), 10) << fit.dump();
  EXPECT_TRUE(fit.contains("fit") || (fit.contains("write_us") && fit.contains("r2"))) << fit.dump();
  // So were the cold and warm waves' (every client's GETs, requests and replies held, each pass
  // with a write, a read or a held reply's callback).
  for (const char* k : {"cold", "warm"}) {
    const auto& w = x["client_cold_fit"][k];
    EXPECT_GT(w["passes"].get<int64_t>(), 10) << w.dump();
    EXPECT_TRUE(w.contains("fit") || (w.contains("write_us") && w.contains("r2"))) << w.dump();
  }
}

TEST(CalibRealServer, QuickCalibrationGivesSaneFigures) {
  CalibrateOptions o;
  o.quick = true;
  o.rounds = 1;
  o.fewer_connections = 5;
  int lines = 0;
  o.progress = [&](const std::string&) { ++lines; };
  Result<Calibration> c = Calibrate(o);
  EXPECT_EQ(OurServers(), 0);  // stopped, whatever happened
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_GT(lines, 3);
  const sim::CostModel& m = c->model;
  ExpectSane("command_us", m.node.command_us);
  ExpectSane("wake_us", m.node.wake_us);
  ExpectSane("script_us", m.node.script_us);
  ExpectSane("script_call_us", m.node.script_call_us);
  ExpectSane("publish_per_receiver_us", m.node.publish_per_receiver_us);
  ExpectSane("blpop_serve_us", m.node.blpop_serve_us);
  ExpectSane("send_us", m.client.send_us);
  ExpectSane("reply_us", m.client.reply_us);
  ExpectSane("timer_us", m.client.timer_us);
  ExpectSane("hold_us", m.client.hold_us);
  ExpectSane("message_us", m.client.message_us);  // in a herd: each subscriber sends a GET per message
  ExpectSane("wake_cpu_us", m.client.wake_cpu_us);
  // Measured again at 5 connections: a complete set of figures of its own.
  EXPECT_EQ(m.connections, 20);
  ASSERT_NE(m.fewer, nullptr);
  EXPECT_EQ(m.fewer->connections, 5);
  EXPECT_EQ(m.fewer->name, m.name + "@5");
  ExpectSane("fewer send_us", m.fewer->client.send_us);
  ExpectSane("fewer command_us", m.fewer->node.command_us);
  EXPECT_EQ(m.fewer->client.wake_after_idle.size(), m.client.wake_after_idle.size());
  ExpectSane("one_way_us", m.one_way_us);
  // A WAIT for the replica costs more than a PING: the trip is at least the 1 µs floor.
  EXPECT_GE(m.replica_one_way_us, 1.0);
  EXPECT_LT(m.replica_one_way_us, 100'000.0);
  EXPECT_GT(c->context.measurements["cross_checks"]["replica_wait_us"].get<double>(),
            c->context.measurements["cross_checks"]["replica_ping_us"].get<double>());
  // Work costs time: a command, a delivery, the client's side, the path.
  EXPECT_GT(m.node.command_us.MeanUs(), 0.0);
  EXPECT_GT(m.node.publish_per_receiver_us.MeanUs(), 0.0);
  EXPECT_GT(m.client.send_us.MeanUs(), 0.0);
  EXPECT_GT(m.client.timer_us.MeanUs(), 0.0);
  EXPECT_GT(m.one_way_us.MeanUs(), 0.0);
  // A timer after idling: a row per measured idle time, each late by something (a timer never
  // fires early), rising idle times.
  ASSERT_EQ(m.client.wake_after_idle.size(), std::size(calib::kWakeIdleUs));
  for (size_t i = 0; i < m.client.wake_after_idle.size(); ++i) {
    const sim::WakeRow& row = m.client.wake_after_idle[i];
    EXPECT_EQ(row.idle_us, calib::kWakeIdleUs[i]);
    ExpectSane("wake_after_idle", row.late_us);
    EXPECT_GT(row.late_us.MeanUs(), 0.0) << row.idle_us;
  }
  // A script making 16 calls costs at least a plain command (the I/O they share dominates a call).
  EXPECT_GE(m.node.script_us.MeanUs() + 16 * m.node.script_call_us.MeanUs(), m.node.command_us.MeanUs());
  ExpectNodeCrossChecks(c->context.measurements["cross_checks"]);
  ExpectClientCrossChecks(c->context.measurements["cross_checks"]);
  EXPECT_EQ(c->context.redis_server_version.empty(), false);
  EXPECT_EQ(c->context.rounds, 1);
  EXPECT_TRUE(c->context.quick);
  EXPECT_NE(CalibrationTable(m).find("node.blpop_serve_us"), std::string::npos);
  // The machine's stalls were probed last (0.5 s on every CPU); the fewer block shares them.
  EXPECT_GT(c->context.measurements["cross_checks"]["machine_cpu_seconds_probed"].get<double>(), 0.0);
  EXPECT_GE(m.machine.per_s, 0.0);
  EXPECT_EQ(m.fewer->machine.per_s, m.machine.per_s);
}

// A thread that wants a CPU another thread is also busy on loses it for the scheduler's slices
// (milliseconds): the probe sees them as stalls; with nothing else there, it sees far fewer.
TEST(CalibMachineStalls, ACompetitorOnTheSameCpuShowsAsStalls) {
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  int cpu = 0;
  while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &set)) ++cpu;
  ASSERT_LT(cpu, CPU_SETSIZE);
  calib::MachineSamples alone;
  ASSERT_TRUE(calib::MachineStalls({cpu}, 0.3, calib::kStallThresholdUs, &alone).ok());
  EXPECT_DOUBLE_EQ(alone.probed_s, 0.3);
  EXPECT_EQ(alone.cpus, 1);
  calib::MachineSamples shared;
  std::atomic<bool> stop{false};
  std::thread competitor([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  ASSERT_TRUE(calib::MachineStalls({cpu}, 0.3, calib::kStallThresholdUs, &shared).ok());
  stop = true;
  competitor.join();
  // Sharing, the probe has the CPU about half the time: at least 0.1 s of stalls in 0.3 s.
  double stalled_us = 0;
  for (double us : shared.stall_us) {
    EXPECT_GE(us, calib::kStallThresholdUs);
    stalled_us += us;
  }
  EXPECT_GT(stalled_us, 100'000.0);
  EXPECT_GT(shared.stall_us.size(), alone.stall_us.size());
  // A CPU it may not use is an error, not a silent unpinned probe.
  calib::MachineSamples none;
  EXPECT_FALSE(calib::MachineStalls({CPU_SETSIZE + 5}, 0.01, calib::kStallThresholdUs, &none).ok());
}

TEST(CalibFitLine, LeastSquares) {
  // Exactly on a line: script_us = 7, script_call_us = 0.25.
  auto [a, b] = calib::FitLine({0, 1, 4, 16}, {7, 7.25, 8, 11});
  EXPECT_DOUBLE_EQ(a, 7.0);
  EXPECT_DOUBLE_EQ(b, 0.25);
  // Noise around y = 1 + 2x: the least-squares line through (0, 1.5), (1, 2.5), (2, 5.5) is
  // intercept 1.166..., slope 2.
  std::tie(a, b) = calib::FitLine({0, 1, 2}, {1.5, 2.5, 5.5});
  EXPECT_NEAR(a, 7.0 / 6.0, 1e-12);
  EXPECT_NEAR(b, 2.0, 1e-12);
  // One x only: no slope.
  EXPECT_EQ(calib::FitLine({3, 3}, {1, 2}).second, 0.0);
}

TEST(CalibHeldSplit, TheFitsCoefficientsBecomeTheHeldKeys) {
  sim::CostModel base;
  base.client.timer_us = sim::CostDist::Constant(1.5);
  base.client.hold_us = sim::CostDist::Constant(1);
  base.client.send_us = sim::CostDist::Constant(2.8);
  const calib::ojson fit = {{"timer_us", 2.0}, {"write_us", 5.0}, {"read_us", 2.25}, {"held_reply_us", 0.5}, {"r2", 0.97}};
  Result<sim::CostModel> m = HeldSplitFromFit(base, fit);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->client.held_write_us.MeanUs(), 5.0);
  EXPECT_EQ(m->client.held_read_us.MeanUs(), 2.25);
  EXPECT_EQ(m->client.held_callback_us.MeanUs(), 0.5);
  EXPECT_EQ(m->client.hold_us.MeanUs(), 0.5);  // the timer step 2.0 less timer_us 1.5
  EXPECT_EQ(m->client.send_us.MeanUs(), 2.8);  // the rest as it was
  calib::ojson cheap = fit;
  cheap["timer_us"] = 0.5;  // a wave's timer step cheaper than timer_us: arming adds nothing
  EXPECT_EQ(HeldSplitFromFit(base, cheap)->client.hold_us.MeanUs(), 0.0);
  for (const auto& [key, value] : std::vector<std::pair<std::string, double>>{{"write_us", 0}, {"read_us", -1}, {"r2", 0.5}}) {
    calib::ojson bad = fit;
    bad[key] = value;
    const Result<sim::CostModel> r = HeldSplitFromFit(base, bad);
    ASSERT_FALSE(r.ok()) << key;
    EXPECT_NE(r.status().message().find(key == "r2" ? "R2" : key), std::string::npos) << r.status().message();
  }
  calib::ojson none = {{"passes", 3}, {"fit", "none"}};
  EXPECT_FALSE(HeldSplitFromFit(base, none).ok());
}

TEST(CalibRealServer, BadRoundsAndAMissingServerAreErrors) {
  CalibrateOptions o;
  o.rounds = 0;
  EXPECT_TRUE(Calibrate(o).status().invalid());
  o.rounds = 1;
  o.quick = true;
  o.fewer_connections = 20;  // not fewer than --quick's 20
  EXPECT_TRUE(Calibrate(o).status().invalid());
  o.fewer_connections = 0;
  o.redis_server_path = "/nonexistent/redis-server";
  Result<Calibration> c = Calibrate(o);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Status::Code::kFailed);
  EXPECT_NE(c.status().message().find("redis-server"), std::string::npos);
  EXPECT_EQ(OurServers(), 0);
}

}  // namespace
}  // namespace locklab
