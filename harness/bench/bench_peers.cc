// `locklab bench-peers`: see bench_peers.h. The parts: peer_log (a driver's event log),
// row_check (judging a row), peer_driver (running a driver), bench_env (implementations,
// workloads, set-up), bench_rows (the rows and the limit), pause_trial (the pause test),
// bench_report.
#include "harness/bench/bench_peers.h"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "harness/bench/bench_env.h"
#include "harness/bench/bench_report.h"
#include "harness/bench/bench_rows.h"
#include "harness/bench/pause_trial.h"
#include "harness/bench/peer_driver.h"
#include "harness/real/redis_server.h"
#include "harness/report/report.h"

namespace locklab {
namespace {

using bench_peers::BenchEnv;

// The servers, and a directory for the logs inside theirs (removed with it, also on SIGINT/SIGTERM).
Result<std::unique_ptr<RedisServers>> StartServers(BenchEnv* env) {
  RedisServerOptions so;
  so.masters = 5;
  Result<std::unique_ptr<RedisServers>> started = RedisServers::Start(so);
  if (!started.ok()) return started.status();
  std::unique_ptr<RedisServers> servers = std::move(started).value();
  env->servers = servers.get();
  env->tmp = servers->dir() + "/bench-peers";
  std::error_code ec;
  std::filesystem::create_directory(env->tmp, ec);
  if (ec) return Status::Failed("cannot create " + env->tmp + ": " + ec.message());
  env->drivers = env->o.drivers_dir.empty() ? DefaultPeerDriversDir() : env->o.drivers_dir;
  env->modules = env->o.peers_dir.empty() ? DefaultPeerModulesDir() : env->o.peers_dir;
  return servers;
}

}  // namespace

Status RunBenchPeers(const BenchPeersOptions& o, std::ostream& out) {
  if (Status s = bench_peers::CheckOptions(o); !s.ok()) return s;
  BenchEnv env(o);
  Result<std::unique_ptr<RedisServers>> servers = StartServers(&env);
  if (!servers.ok()) return servers.status();
  bench_peers::BenchOutcome outcome;
  {
    bench_peers::BenchSetUp set_up(&env);
    outcome.rows = bench_peers::RunRows(env, &outcome.limits);
    if (o.pause) outcome.pauses = bench_peers::RunPauseTests(env);
    servers->reset();  // stops the servers before the report is written
    env.servers = nullptr;
    set_up.Restore();
  }
  const nlohmann::json report = bench_peers::ReportJson(env, outcome);
  bool all_ran = true;
  for (const bench_peers::Row& r : outcome.rows) all_ran = all_ran && r.ran;
  for (const bench_peers::PauseRow& p : outcome.pauses) all_ran = all_ran && p.ran;
  if (!o.quiet) bench_peers::PrintTables(env, outcome, out);
  if (Status st = WriteFileAtomic(o.out, ReportText(report)); !st.ok()) return st;
  out << "\nreport: " << o.out << "\n";
  out.flush();
  if (!all_ran) return Status::Failed("some rows could not run (see the table and the report's \"error\" fields)");
  return Status::Ok();
}

void AddBenchPeersFlags(CLI::App* app, BenchPeersOptions* o) {
  app->add_option("--out", o->out, "JSON report (written atomically)")->capture_default_str()->type_name("FILE");
  app->add_option("--retry", o->retry, "locklab's retry policy in extra contended rows (the \"default\" rows use `locklab run`'s; see `locklab list`)")
      ->capture_default_str();
  app->add_option("--retry-opt", o->retry_opts, "locklab retry policy option k=v (repeatable)")
      ->type_name("K=V")
      ->allow_extra_args(false);
  app->add_option("--only", o->only,
                  "implementations to run (repeatable): locklab-token, locklab-redlock, locklab-fifo, node-redlock, redis-semaphore, "
                  "redis-semaphore-redlock, redis-py")
      ->type_name("ID")
      ->allow_extra_args(false)
      ->delimiter(',');
  app->add_option("--clients", o->clients, "clients in the many-client rows")->capture_default_str();
  app->add_option("--duration-ms", o->duration_ms, "length of each uncontended row, ms")->capture_default_str();
  app->add_option("--count", o->count, "acquisitions in each contended row")->capture_default_str();
  app->add_option("--rounds", o->rounds,
                  "uncontended locklab token and redis-benchmark's limit: measured alternately this many times, "
                  "medians shown")
      ->capture_default_str();
  app->add_option("--ttl-ms", o->ttl_ms, "lock TTL in the speed rows, ms")->capture_default_str();
  app->add_option("--acquire-timeout-ms", o->acquire_timeout_ms, "a request gives up after this long, ms")
      ->capture_default_str();
  app->add_option("--tuned-retry-ms", o->tuned_retry_ms,
                  "retry delay of the peers' tuned rows (node-redlock retryDelay, redis-py sleep), ms")
      ->capture_default_str();
  app->add_option("--pause-ttl-ms", o->pause_ttl_ms, "pause test: lock TTL, ms")->capture_default_str();
  app->add_option("--pause-ms", o->pause_ms, "pause test: how long the holder is stopped, ms")->capture_default_str();
  app->add_flag("--no-pause", [o](int64_t) { o->pause = false; }, "skip the pause test");
  app->add_flag("--no-limit", [o](int64_t) { o->limit = false; }, "skip redis-benchmark");
  app->add_flag("--no-idle-poll", [o](int64_t) { o->idle_poll = false; },
                "let idle CPUs halt (without it, when run as root, /dev/cpu_dma_latency is held at 0 us so that they poll)");
  app->add_flag("--no-pin", [o](int64_t) { o->pin = false; },
                "let the scheduler place servers and clients (default: servers on CPU 0, clients on CPU 1)");
  app->add_option("--peers-dir", o->peers_dir, "where node_modules is (default BUILD/peers)")->type_name("DIR");
  app->add_option("--drivers-dir", o->drivers_dir, "where the driver scripts are (default harness/bench/peers)")
      ->type_name("DIR");
  app->add_option("--node", o->node, "node executable")->capture_default_str();
  app->add_option("--python", o->python, "Python with redis-py (Debian's python3-redis)")->capture_default_str();
  app->add_flag("--quiet", o->quiet, "no table on stdout");
  app->add_flag("--no-progress", [o](int64_t) { o->progress = false; }, "no progress lines on stderr");
}

int BenchPeersCommand(const BenchPeersOptions& o) {
  const Status s = RunBenchPeers(o, std::cout);
  std::cout.flush();
  return bench_peers::CommandExit(s);
}

}  // namespace locklab
