// `locklab scorecard`: see scorecard.h. The parts: scorecard_plan (implementations, faults,
// timelines), scorecard_trial and scorecard_locklab (one trial), scorecard_judge (its history
// through the checkers), scorecard_report (cells, table, JSON).
#include "harness/bench/scorecard.h"

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <thread>

#include "harness/bench/bench_env.h"
#include "harness/bench/peer_driver.h"
#include "harness/bench/scorecard_report.h"
#include "harness/bench/scorecard_trial.h"
#include "harness/real/real_clock.h"
#include "harness/real/redis_server.h"
#include "harness/report/report.h"

namespace locklab {
namespace {

using scorecard::Cell;
using scorecard::FaultInfo;
using scorecard::ScImpl;

template <typename T>
std::vector<T> Chosen(const std::vector<T>& all, const std::vector<std::string>& ids) {
  std::vector<T> out;
  for (const T& x : all)
    if (ids.empty() || std::find(ids.begin(), ids.end(), x.id) != ids.end()) out.push_back(x);
  return out;
}

void Progress(const ScorecardOptions& o, const std::string& line) {
  if (o.progress) std::fprintf(stderr, "scorecard: %s\n", line.c_str());
}

// The peers' versions (or why they cannot run): {"node": ..., "python": ...}.
nlohmann::json ProbeVersions(const scorecard::TrialEnv& env) {
  const std::vector<std::string> extra = {"NODE_PATH=" + env.modules + "/node_modules"};
  Result<std::string> node =
      Probe({env.node, "-e",
             "const fs=require('fs');const v=p=>{for(const d of process.env.NODE_PATH.split(':'))"
             "{try{return JSON.parse(fs.readFileSync(d+'/'+p+'/package.json','utf8')).version}catch(e){}}return '?'};"
             "process.stdout.write(['redlock','@sesamecare-oss/redlock','redis-semaphore','redlock-universal','ioredis']"
             ".map(p=>p+' '+v(p)).join(', ')+', node '+process.version)"},
            extra, env.tmp);
  Result<std::string> py = Probe({env.python, "-c", "import redis,sys; sys.stdout.write(redis.__version__)"}, {}, env.tmp);
  return {{"node", node.ok() ? *node : "unavailable: " + node.status().message()},
          {"python_redis", py.ok() ? "redis-py " + *py : "unavailable: " + py.status().message()},
          {"locklab", bench_peers::LocklabVersion()}};
}

Cell RunCell(const ScorecardOptions& o, const scorecard::TrialEnv& env, const ScImpl& impl, const FaultInfo& f) {
  Cell c{impl.id, f.id, scorecard::NotApplicable(impl, f.fault), {}};
  if (!c.not_applicable.empty()) return c;
  const int64_t start_us = MonotonicNowUs();
  for (int i = 0; i < env.servers->count(); ++i) (void)env.servers->Query(i, {"FLUSHALL"});
  const bool at_once = impl.runner != scorecard::Runner::kLocklab && scorecard::OwnProcessesOnly(f.fault);
  const int batch = at_once ? o.parallel : 1;
  c.trials.resize(static_cast<size_t>(o.trials));
  auto run = [&](int trial) {
    const scorecard::Timeline t = scorecard::TimelineFor(impl, f.fault, o.ttl_ms, trial);
    c.trials[static_cast<size_t>(trial)] = scorecard::RunTrial(env, impl, f.fault, t, trial);
  };
  for (int first = 0; first < o.trials; first += batch) {
    if (batch == 1) {  // on this thread: a server a restart starts dies with the thread that forked it
      run(first);
      continue;
    }
    std::vector<std::thread> threads;  // each trial's keys, files, proxies and processes are its own
    for (int trial = first; trial < std::min(o.trials, first + batch); ++trial) threads.emplace_back(run, trial);
    for (std::thread& th : threads) th.join();
  }
  for (int trial = 0; trial < o.trials; ++trial) {  // a trial that could not run: once more, alone
    scorecard::TrialOutcome& out = c.trials[static_cast<size_t>(trial)];
    if (out.ran) continue;
    const std::string first_error = out.error;
    out = scorecard::RunTrial(env, impl, f.fault, scorecard::TimelineFor(impl, f.fault, o.ttl_ms, trial), trial);
    out.retried_after = first_error;
  }
  const scorecard::CellSummary s = scorecard::Summarize(c);
  std::string line = f.id + " x " + impl.id + ": two holders " + std::to_string(s.two_holders_k) + "/" +
                     std::to_string(s.n) + ", learned " + std::to_string(s.learned_k) + "/" + std::to_string(s.n);
  if (s.errors > 0) {
    for (const auto& t : c.trials)
      if (!t.ran) {
        line += ", " + std::to_string(s.errors) + " not run (" + t.error.substr(0, 160) + ")";
        break;
      }
  }
  Progress(o, line + " (" + std::to_string((MonotonicNowUs() - start_us) / 1000) + " ms)");
  return c;
}

nlohmann::json ReportJson(const ScorecardOptions& o, const std::vector<Cell>& cells, const std::vector<ScImpl>& impls,
                          const std::vector<FaultInfo>& faults, const nlohmann::json& versions, double seconds) {
  nlohmann::json ji = nlohmann::json::array(), jf = nlohmann::json::array(), jc = nlohmann::json::array();
  for (const ScImpl& i : impls)
    ji.push_back({{"id", i.id}, {"name", i.name}, {"nodes", i.nodes}, {"extends", i.extends}, {"how", i.how}});
  for (const FaultInfo& f : faults) {
    const scorecard::Timeline t = scorecard::TimelineFor(impls.front(), f.fault, o.ttl_ms, 0);
    jf.push_back({{"id", f.id},
                  {"label", f.label},
                  {"ttl_ms", t.ttl_ms},
                  {"a_hold_ms", t.a_hold_ms},
                  {"fault_at_ms", t.fault_at_ms},
                  {"fault_ms", t.fault_ms},
                  {"b_go_ms", t.b_go_ms}});
  }
  for (const Cell& c : cells) jc.push_back(scorecard::CellJson(c));
  return {{"schema", "locklab.scorecard/1"},
          {"config", {{"trials_per_cell", o.trials}, {"ttl_ms", o.ttl_ms}, {"parallel", o.parallel}, {"seed", o.seed}}},
          {"versions", versions},
          {"seconds", std::round(seconds * 10) / 10},
          {"implementations", ji},
          {"faults", jf},
          {"cells", jc},
          {"replay", "locklab scorecard --trials " + std::to_string(o.trials)}};
}

}  // namespace

Status CheckScorecardOptions(const ScorecardOptions& o) {
  if (o.trials < 1 || o.trials > 1000) return Status::Invalid("--trials must be in [1, 1000]");
  // The Redlock rows' crashed-client keys expire 150 ms in and B asks at 250 ms, inside A's hold.
  if (o.ttl_ms < 300 || o.ttl_ms > 10'000) return Status::Invalid("--ttl-ms must be in [300, 10000]");
  for (const std::string& id : o.impls)
    if (scorecard::FindScImpl(id) == nullptr) {
      std::string all;
      for (const ScImpl& i : scorecard::ScImpls()) all += (all.empty() ? "" : ", ") + i.id;
      return Status::Invalid("--impls: unknown implementation '" + id + "' (" + all + ")");
    }
  for (const std::string& id : o.faults)
    if (scorecard::FindFault(id) == nullptr) {
      std::string all;
      for (const FaultInfo& f : scorecard::Faults()) all += (all.empty() ? "" : ", ") + f.id;
      return Status::Invalid("--faults: unknown fault '" + id + "' (" + all + ")");
    }
  if (o.parallel < 1 || o.parallel > 8) return Status::Invalid("--parallel must be in [1, 8]");
  if (o.out.empty()) return Status::Invalid("--out: give a file");
  return Status::Ok();
}

Status RunScorecard(const ScorecardOptions& o, std::ostream& out) {
  LOCKLAB_RETURN_IF_ERROR(CheckScorecardOptions(o));
  const std::vector<ScImpl> impls = Chosen(scorecard::ScImpls(), o.impls);
  const std::vector<FaultInfo> faults = Chosen(scorecard::Faults(), o.faults);
  RedisServerOptions so;
  so.masters = 5;
  Result<std::unique_ptr<RedisServers>> servers = RedisServers::Start(so);
  if (!servers.ok()) return servers.status();
  scorecard::TrialEnv env;
  env.servers = servers->get();
  env.tmp = env.servers->dir() + "/scorecard";
  std::filesystem::create_directories(env.tmp);
  env.drivers = o.drivers_dir.empty() ? DefaultPeerDriversDir() : o.drivers_dir;
  env.modules = o.peers_dir.empty() ? DefaultPeerModulesDir() : o.peers_dir;
  env.node = o.node;
  env.python = o.python;
  env.seed = o.seed;
  env.keep_histories = o.keep_histories;
  const nlohmann::json versions = ProbeVersions(env);
  Progress(o, std::string(versions["node"]) + "; " + std::string(versions["python_redis"]));
  const int64_t start_us = MonotonicNowUs();
  std::vector<Cell> cells;
  for (const FaultInfo& f : faults)
    for (const ScImpl& i : impls) cells.push_back(RunCell(o, env, i, f));
  const double seconds = static_cast<double>(MonotonicNowUs() - start_us) / 1e6;
  if (o.keep_histories) {
    std::error_code ec;
    const std::string keep = std::filesystem::path(o.out).replace_extension("").string() + "-histories";
    std::filesystem::create_directories(keep, ec);
    for (const auto& e : std::filesystem::directory_iterator(env.tmp, ec))  // the merged histories only
      if (e.path().extension() == ".jsonl")
        std::filesystem::copy_file(e.path(), keep + "/" + e.path().filename().string(),
                                   std::filesystem::copy_options::overwrite_existing, ec);
  }
  servers->reset();
  if (!o.quiet) out << scorecard::ScorecardTables(cells, impls, faults);
  LOCKLAB_RETURN_IF_ERROR(WriteFileAtomic(o.out, ReportText(ReportJson(o, cells, impls, faults, versions, seconds))));
  out << "\nreport: " << o.out << " (" << static_cast<int64_t>(seconds) << " s)\n";
  for (const Cell& c : cells)
    for (const auto& t : c.trials)
      if (!t.ran) return Status::Failed("some trials could not run (see the table's errors and the report)");
  return Status::Ok();
}

void AddScorecardFlags(CLI::App* app, ScorecardOptions* o) {
  app->add_option("--out", o->out, "JSON report (written atomically)")->capture_default_str()->type_name("FILE");
  app->add_option("--trials", o->trials, "trials per cell")->capture_default_str();
  app->add_option("--ttl-ms", o->ttl_ms, "the lock's TTL in the short rows (clock-jump, restart, extend-race: 2.5x)")
      ->capture_default_str();
  app->add_option("--parallel", o->parallel,
                  "a peer's trials at once under pause, release-delay, partition, extend-race (1: one by one)")
      ->capture_default_str();
  app->add_option("--impls", o->impls, "implementations (comma list; default all, see the footer)")
      ->delimiter(',')
      ->type_name("ID,...");
  app->add_option("--faults", o->faults, "faults (comma list; default all)")->delimiter(',')->type_name("ID,...");
  app->add_option("--peers-dir", o->peers_dir, "where node_modules is (default BUILD/peers)")->type_name("DIR");
  app->add_option("--drivers-dir", o->drivers_dir, "where the driver scripts are (default harness/bench/peers)")
      ->type_name("DIR");
  app->add_option("--node", o->node, "node executable")->capture_default_str();
  app->add_option("--python", o->python, "Python with redis-py (Debian's python3-redis)")->capture_default_str();
  app->add_option("--seed", o->seed, "seed of locklab's runs")->capture_default_str();
  app->add_flag("--keep-histories", o->keep_histories, "keep every trial's history (OUT without .json + -histories/)");
  app->add_flag("--quiet", o->quiet, "no table on stdout");
  app->add_flag("--no-progress", [o](int64_t) { o->progress = false; }, "no progress lines on stderr");
  std::string impls, faults;
  for (const ScImpl& i : scorecard::ScImpls()) impls += "  " + i.id + ": " + i.how + "\n";
  for (const FaultInfo& f : scorecard::Faults()) faults += "  " + f.id + ": " + f.label + "\n";
  app->footer("\nImplementations:\n" + impls + "Faults:\n" + faults +
              "Examples:\n  locklab scorecard                          every cell, 10 trials each (make scorecard)\n"
              "  locklab scorecard --impls node-redlock,locklab-token --faults pause --trials 5\n"
              "Exit status: 0 every trial ran, 1 some could not (see the report), 2 bad input.\n");
}

int ScorecardCommand(const ScorecardOptions& o) {
  const Status s = RunScorecard(o, std::cout);
  std::cout.flush();
  return bench_peers::CommandExit(s);
}

}  // namespace locklab
