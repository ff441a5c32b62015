#include "harness/run/host_info.h"
#include "harness/cli/calibrate_cli.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "harness/cli/cli.h"
#include "harness/real/calibrate.h"
#include "harness/run/profile.h"

namespace locklab {
namespace {

constexpr int kQuickRounds = 2;

const char* kFooter =
    "\nWhat is measured (each in --rounds rounds; a figure is a distribution: quantile points of its samples, the\n"
    "top 0.1% trimmed), against one redis-server started on a free loopback port and stopped at the end. Node\n"
    "figures are the server's main-thread CPU (INFO cpu) with one command in flight per connection, as locklab's\n"
    "real backend sends them (a pipelined batch's wall time and INFO commandstats are reported as cross-checks):\n"
    "  node.command_us           SET PX/GET/DEL from 1, 10, 50 connections at once: per command (a line's intercept\n"
    "                            over 1/connections)\n"
    "  node.wake_us              ... and its slope: the event loop's wake-up, shared by the commands read together\n"
    "  node.script_us            EVALSHA of scripts making 0, 1, 4, 16 redis.call()s: a line's intercept\n"
    "  node.script_call_us       ... and its slope (locklab's own scripts are measured too, informative)\n"
    "  node.publish_per_receiver_us  PUBLISH to 0, 10, 100 subscribers: the slope per subscriber\n"
    "  node.blpop_serve_us       an LPUSH that serves a parked BLPOP client, minus one nobody waits for\n"
    "  one_way_us                one-at-a-time PING round trips minus the server's CPU per PING, halved\n"
    "  replica_one_way_us        on a master with one replica: (WAIT 1 right after a SET - a PING) / 2\n"
    "  client.send_us/reply_us   CPU (getrusage) of locklab's real runtime per command, split in halves (each\n"
    "                            run of these and the two below made twice, its smaller CPU kept)\n"
    "  client.timer_us           CPU of the real runtime per sleep before a command, less the command's (a timer\n"
    "                            firing and its coroutine resumed among replies and writes)\n"
    "  client.hold_us            CPU of the real runtime per message it holds for an injected delay\n"
    "  client.message_us         CPU of the real runtime per pub/sub message received (1000 subscribers),\n"
    "                            each sending a GET for it as a woken waiter does, less that GET\n"
    "  client.wake_cpu_us        CPU of the real runtime per wake-up from idle: 1000 clients each sleeping at\n"
    "                            random and sending a GET (2000 steps/s in all), the CPU per step beyond a\n"
    "                            command and a timer, over the loop's voluntary context switches per step\n"
    "  client.wake_after_idle    one idle client of the real runtime sleeping 5 us to 50 ms: how late each\n"
    "                            timer fires (a halted vCPU wakes slowly; a row per idle time)\n"
    "  --held-only: client.held_write_us, held_read_us, held_callback_us and hold_us of a profile whose client\n"
    "                            loop runs in passes: waves of held GETs from all 1000 clients after 10 ms of\n"
    "                            sleep, each loop pass's CPU fitted to its steps (a write, a read, a held reply's\n"
    "                            callback; hold_us the timer step less timer_us); the same waves are the full\n"
    "                            calibration's cross-check client_cold_fit\n"
    "  machine.stall_us          last, no server running: a thread busy on every CPU at once, 4 s a round;\n"
    "                            each gap of 200 us or more between two clock readings is a stall (the VM or\n"
    "                            kernel took the CPU): their lengths, and how many a second per CPU\n"
    "A busy machine measures slower figures and hides the wake-up (its vCPUs never halt): measure on a\n"
    "quiet one; the profile records the load average.\n"
    "\nExamples:\n"
    "  locklab calibrate --quick                  a rough profile in a few seconds\n"
    "  locklab calibrate --out harness/profiles/default.json\n"
    "  locklab calibrate --check harness/profiles/default.json   is it a valid profile?\n"
    "  locklab calibrate --machine-only harness/profiles/default.json --out my.json   add this machine's stalls\n"
    "  locklab calibrate --held-only harness/profiles/default.json --out my.json   split a held command's CPU\n"
    "Exit status: 0 profile written, 1 a measurement failed or the file could not be written, 2 bad input.\n";

}  // namespace

std::string DefaultProfilePath() {
  const std::string host = HostName();
  return "results/calibration/profile-" + (host.empty() ? std::string("unknown") : host) + ".json";
}

CalibrateCli::CalibrateCli(CLI::App& app) {
  sub_ = app.add_subcommand("calibrate",
                            "measure this machine's Redis and client costs on our own redis-server; write a cost "
                            "profile for the simulator");
  sub_->add_option("--out", out_, "profile file (default results/calibration/profile-<host>.json)")->type_name("FILE");
  rounds_o_ = sub_->add_option("--rounds", rounds_, "rounds of every measurement (default 5; 2 with --quick)")
                  ->type_name("N")
                  ->check(CLI::Range(1, 1000));
  sub_->add_option("--fewer-connections", fewer_connections_,
                   "also measure every figure at N connections, for runs with few clients (a profile's "
                   "fewer_connections block; runs take the figures measured nearest their client count)")
      ->type_name("N")
      ->check(CLI::Range(1, 999));
  sub_->add_flag("--quick", quick_, "small batches and few clients: a rough profile in a few seconds");
  sub_->add_flag("--no-progress", no_progress_, "no progress lines on stderr");
  sub_->add_option("--check", check_, "measure nothing: load this profile and print its table (exit 2 naming a bad key)")
      ->type_name("FILE");
  sub_->add_option("--machine-only", machine_only_,
                   "measure only the machine's stalls (--rounds x 4 s) and write this profile with them as its "
                   "\"machine\" to --out (its other figures as they are)")
      ->type_name("FILE")
      ->excludes("--check")
      ->excludes("--fewer-connections");
  sub_->add_option("--held-only", held_only_,
                   "measure only a held command's CPU per step of the client loop (--rounds x the waves of held "
                   "GETs) and write this profile with client.held_write_us, held_read_us, held_callback_us and "
                   "hold_us from them to --out (its other figures as they are)")
      ->type_name("FILE")
      ->excludes("--check")
      ->excludes("--fewer-connections")
      ->excludes("--machine-only");
  sub_->footer(kFooter);
}

int CalibrateCli::Run() const {
  if (!check_.empty()) {
    Result<sim::CostModel> m = LoadProfile(check_);
    if (!m.ok()) {
      std::fprintf(stderr, "locklab: %s\n", m.status().message().c_str());
      return m.status().invalid() ? kExitBadInput : kExitInternal;
    }
    std::printf("profile %s: %s\n", check_.c_str(), m->name.c_str());
    std::fputs(CalibrationTable(*m).c_str(), stdout);
    return kExitOk;
  }
  const std::string path = out_.empty() ? DefaultProfilePath() : out_;
  if (path.back() == '/' || std::filesystem::is_directory(path)) {
    std::fprintf(stderr, "locklab: --out %s: give a file name, not a directory\n", path.c_str());
    return kExitBadInput;
  }
  const int rounds = rounds_o_->count() > 0 ? rounds_ : (quick_ ? kQuickRounds : rounds_);
  if (!machine_only_.empty()) return RunMachineOnly(path, rounds);
  if (!held_only_.empty()) return RunHeldOnly(path, rounds);
  CalibrateOptions o;
  o.quick = quick_;
  o.fewer_connections = fewer_connections_;
  o.rounds = rounds;
  if (!no_progress_) o.progress = [](const std::string& line) { std::fprintf(stderr, "calibrate: %s\n", line.c_str()); };
  Result<Calibration> c = Calibrate(o);
  if (!c.ok()) {
    std::fprintf(stderr, "locklab: %s\n", c.status().message().c_str());
    return c.status().invalid() ? kExitBadInput : kExitInternal;
  }
  std::fputs(CalibrationTable(c->model).c_str(), stdout);
  if (Status s = WriteProfile(path, c->model, c->context); !s.ok()) {
    std::fprintf(stderr, "locklab: %s\n", s.message().c_str());
    return kExitInternal;
  }
  std::printf("profile: %s (load average %.2f when it began)\n", path.c_str(), c->context.load_average_1m);
  std::fflush(stdout);
  return kExitOk;
}

int CalibrateCli::RunOnProfile(const std::string& flag, const std::string& in, const std::string& path, int rounds,
                               const ProfileStep& step, const char* what) const {
  ProfileContext context;
  Result<sim::CostModel> m = LoadProfile(in, &context);
  if (!m.ok()) {  // a missing or broken input file is the user's to fix: exit 2 either way
    std::fprintf(stderr, "locklab: %s: %s (give a profile file)\n", flag.c_str(), m.status().message().c_str());
    return kExitBadInput;
  }
  CalibrateOptions o;
  o.quick = quick_;
  o.rounds = rounds;
  if (!no_progress_) o.progress = [](const std::string& line) { std::fprintf(stderr, "calibrate: %s\n", line.c_str()); };
  if (!context.measurements.is_object()) context.measurements = nlohmann::ordered_json::object();
  Result<sim::CostModel> out = step(o, *m, &context.measurements);
  if (!out.ok()) {
    std::fprintf(stderr, "locklab: %s %s: %s\n", flag.c_str(), in.c_str(), out.status().message().c_str());
    return out.status().invalid() ? kExitBadInput : kExitInternal;
  }
  std::fputs(CalibrationTable(*out).c_str(), stdout);
  if (Status s = WriteProfile(path, *out, context); !s.ok()) {
    std::fprintf(stderr, "locklab: %s\n", s.message().c_str());
    return kExitInternal;
  }
  std::printf("profile: %s (%s with %s)\n", path.c_str(), in.c_str(), what);
  return kExitOk;
}

int CalibrateCli::RunMachineOnly(const std::string& path, int rounds) const {
  const auto step = [](const CalibrateOptions& o, sim::CostModel m,
                       nlohmann::ordered_json* measurements) -> Result<sim::CostModel> {
    Result<sim::StallCosts> machine = CalibrateMachine(o, measurements);
    if (!machine.ok()) return machine.status();
    (*measurements)["cross_checks"]["machine_measured_utc"] = UtcNowText();
    m.machine = *machine;
    if (!m.name.ends_with("-stalls")) m.name += "-stalls";  // measured again: one suffix
    if (m.fewer != nullptr) {
      auto fewer = std::make_shared<sim::CostModel>(*m.fewer);
      fewer->machine = *machine;
      m.fewer = std::move(fewer);
    }
    return m;
  };
  return RunOnProfile("--machine-only", machine_only_, path, rounds, step, "this machine's stalls");
}

int CalibrateCli::RunHeldOnly(const std::string& path, int rounds) const {
  const auto step = [](const CalibrateOptions& o, sim::CostModel m,
                       nlohmann::ordered_json* measurements) -> Result<sim::CostModel> {
    Result<sim::CostModel> split = CalibrateHeldSplit(o, m, measurements);
    if (!split.ok()) return split.status();
    (*measurements)["cross_checks"]["held_split_measured_utc"] = UtcNowText();
    if (!split->name.ends_with("-held-split")) split->name += "-held-split";
    return split;
  };
  return RunOnProfile("--held-only", held_only_, path, rounds, step, "a held command's CPU split over its steps");
}

}  // namespace locklab
