// bench-peers' implementations, workloads and environment: see bench_env.h.
#include "harness/bench/bench_env.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "algorithms/lock.h"
#include "algorithms/options.h"
#include "harness/bench/peer_driver.h"
#include "harness/run/build_info.h"

namespace locklab::bench_peers {

const std::vector<Impl>& Impls() {
  static const std::vector<Impl> all = {
      {"locklab-token", "locklab token", Kind::kLocklab, "token", {1}, -1},
      {"locklab-redlock", "locklab redlock", Kind::kLocklab, "redlock", {1, 5}, -1},
      // The retry study's winner: waiters queue in Redis and each release hands the lock over.
      {"locklab-fifo", "locklab fifo", Kind::kLocklab, "fifo", {1}, -1},
      {"node-redlock", "node-redlock", Kind::kNode, "redlock", {1, 5}, 200},
      {"redis-semaphore", "redis-semaphore Mutex", Kind::kNode, "semaphore-mutex", {1}, 10, true},
      {"redis-semaphore-redlock", "redis-semaphore RedlockMutex", Kind::kNode, "semaphore-redlock", {5}, 10, true},
      {"redis-py", "redis-py Lock", Kind::kPython, "", {1}, 100},
  };
  return all;
}

const Impl* FindImpl(const std::string& id) {
  for (const Impl& i : Impls())
    if (i.id == id) return &i;
  return nullptr;
}

bool WaitsInQueue(const Impl& impl) {
  const AlgorithmInfo* a = impl.kind == Kind::kLocklab ? FindAlgorithm(impl.algorithm) : nullptr;
  return a != nullptr && a->waits_in_queue;
}

std::vector<Workload> Workloads(const BenchPeersOptions& o) {
  const std::string n = std::to_string(o.clients);
  return {
      {"uncontended-1", "uncontended, 1 client", 1, false, true},
      {"uncontended-keys", "uncontended, " + n + " clients on " + n + " keys", o.clients, true, true},
      {"contended", "contended, " + n + " clients on 1 key", o.clients, false, false},
  };
}

Status CheckOptions(const BenchPeersOptions& o) {
  if (o.clients < 2 || o.clients > 500) return Status::Invalid("--clients must be in [2, 500]");
  if (o.duration_ms < 100 || o.duration_ms > 60'000) return Status::Invalid("--duration-ms must be in [100, 60000]");
  if (o.count < 1 || o.count > 1'000'000) return Status::Invalid("--count must be in [1, 1000000]");
  if (o.rounds < 1 || o.rounds > 20) return Status::Invalid("--rounds must be in [1, 20]");
  if (o.ttl_ms < 100 || o.pause_ttl_ms < 10 || o.pause_ms <= o.pause_ttl_ms || o.tuned_retry_ms < 0 ||
      o.acquire_timeout_ms < 1)
    return Status::Invalid("--ttl-ms >= 100, --pause-ms > --pause-ttl-ms, --tuned-retry-ms >= 0, --acquire-timeout-ms >= 1");
  for (const std::string& id : o.only) {
    if (FindImpl(id) != nullptr) continue;
    std::vector<std::string> ids;
    for (const Impl& i : Impls()) ids.push_back(i.id);
    return Status::Invalid("--only: unknown implementation '" + id + "' (" + Join(ids, ", ") + ")");
  }
  RunSpec probe;
  probe.backend = "redis";
  if (Status s = ApplyRetry(o, &probe); !s.ok()) return s;
  return ResolveSpec(&probe);
}

double R3(double v) { return std::round(v * 1000.0) / 1000.0; }

std::string Join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::vector<std::string> Addresses(const RedisServers& s, int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(s.address(i));
  return out;
}

std::string Ports(const RedisServers& s, int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(std::to_string(s.port(i)));
  return Join(out, ",");
}


bool Selected(const BenchPeersOptions& o, const std::string& id) {
  return o.only.empty() || std::find(o.only.begin(), o.only.end(), id) != o.only.end();
}

Result<std::vector<std::map<std::string, int64_t>>> SnapshotStats(const RedisServers& s) {
  std::vector<std::map<std::string, int64_t>> out;
  for (int i = 0; i < s.count(); ++i) {
    const Result<std::string> text = s.Query(i, {"INFO", "commandstats"});
    if (!text.ok()) return text.status();
    out.push_back(ParseCommandStats(*text));
  }
  return out;
}

Status FlushAll(const RedisServers& s) {
  for (int i = 0; i < s.count(); ++i)
    if (const Result<std::string> r = s.Query(i, {"FLUSHALL"}); !r.ok()) return r.status();
  return Status::Ok();
}

Status ApplyRetry(const BenchPeersOptions& o, RunSpec* s) {
  s->retry = o.retry;
  for (const std::string& text : o.retry_opts) {
    Result<Options> opt = Options::Parse(text);
    if (!opt.ok()) return opt.status().Prefixed("--retry-opt " + text);
    for (const auto& [k, v] : opt->values()) s->retry_options.Set(k, v);
  }
  return Status::Ok();
}

std::string RetryText(const BenchPeersOptions& o) {
  std::string s = "retry=" + o.retry;
  for (const auto& t : o.retry_opts) s += "," + t;
  return s;
}

RunSpec LocklabSpec(const BenchEnv& env, const std::string& algorithm, int nodes, int clients) {
  RunSpec s;
  s.backend = "redis";
  s.algorithm = algorithm;
  s.nodes = nodes;
  s.redis = Addresses(*env.servers, nodes);
  s.clients = clients;
  s.hold_ms = 0;
  s.ttl_ms = env.o.ttl_ms;
  s.acquire_timeout_ms = env.o.acquire_timeout_ms;
  s.max_duration_ms = 120'000;
  s.seed = env.o.seed;
  return s;
}

std::vector<std::string> DriverArgv(const BenchEnv& env, const Impl& impl) {
  if (impl.kind == Kind::kNode) return {env.o.node, env.drivers + "/node_peer.js", "--lib", impl.algorithm};
  return {env.o.python, env.drivers + "/py_peer.py"};
}

std::vector<std::string> DriverEnv(const BenchEnv& env) {
  return {"NODE_PATH=" + env.modules + "/node_modules", "PYTHONDONTWRITEBYTECODE=1"};
}

std::string Unavailable(const BenchEnv& env, const Impl& impl) {
  if (impl.kind == Kind::kNode && !env.node_missing.empty()) return env.node_missing;
  if (impl.kind == Kind::kPython && !env.python_missing.empty()) return env.python_missing;
  return "";
}

std::string PeerVersion(const BenchEnv& env, const Impl& impl, const json& summary) {
  if (summary.is_object() && summary.contains("version") && summary["version"].is_string()) {
    std::string v = summary["version"].get<std::string>();
    if (summary.contains("ioredis") && summary["ioredis"].is_string())
      v += " (ioredis " + summary["ioredis"].get<std::string>() + ")";
    return v;
  }
  return impl.kind == Kind::kPython ? env.python_version : "";
}

std::string LocklabVersion() { return std::string(ToolVersion()) + " (" + GitSha() + ")"; }

int CommandExit(const Status& s) {
  if (!s.ok()) std::fprintf(stderr, "locklab: %s\n", s.message().c_str());
  return s.ok() ? 0 : s.invalid() ? 2 : 1;
}

namespace {

// Pins every thread of process `pid` (0: this thread) to `cpu`. false when it cannot.
bool PinTo(pid_t pid, int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (pid == 0) return sched_setaffinity(0, sizeof set, &set) == 0;
  bool ok = true;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec))
    ok = sched_setaffinity(static_cast<pid_t>(std::atoi(task.path().filename().c_str())), sizeof set, &set) == 0 && ok;
  return ok && !ec;
}

}  // namespace

BenchSetUp::BenchSetUp(BenchEnv* env) : env_(env) {
  ProbePeers();
  env_->redis_version = env_->servers->Version();
  Pin();
  HoldIdlePoll();
  Progress("5 redis-server " + env_->redis_version + " on 127.0.0.1 ports " + Ports(*env_->servers, 5));
}

void BenchSetUp::Progress(const std::string& line) const {
  if (env_->o.progress) std::fprintf(stderr, "bench-peers: %s\n", line.c_str());
}

void BenchSetUp::ProbePeers() {
  BenchEnv& env = *env_;
  const BenchPeersOptions& o = env.o;
  Result<std::string> node =
      Probe({o.node, "-e",
             "const v=p=>require(p+'/package.json').version;"
             "process.stdout.write('node '+process.version+', redlock '+v('redlock')+', redis-semaphore '+"
             "v('redis-semaphore')+', ioredis '+v('ioredis'))"},
            DriverEnv(env), env.tmp);
  if (node.ok()) env.node_versions = *node;
  else
    env.node_missing = "node peers not installed (" + node.status().message() + "): run `make bench-peers`, or npm ci in " +
                       env.modules;
  Result<std::string> python =
      Probe({o.python, "-c", "import redis,sys; sys.stdout.write(redis.__version__)"}, DriverEnv(env), env.tmp);
  if (python.ok()) env.python_version = *python;
  else
    env.python_missing =
        "redis-py not importable by " + o.python + " (" + python.status().message() + "): apt-get install python3-redis";
  Progress(env.node_versions.empty() ? env.node_missing : env.node_versions);
  Progress(env.python_version.empty() ? env.python_missing : "redis-py " + env.python_version);
}

void BenchSetUp::Pin() {
  BenchEnv& env = *env_;
  env.placement = "not pinned (--no-pin or fewer than 2 CPUs)";
  have_own_ = sched_getaffinity(0, sizeof own_cpus_, &own_cpus_) == 0;
  if (env.o.pin && have_own_ && CPU_ISSET(0, &own_cpus_) && CPU_ISSET(1, &own_cpus_)) {
    bool ok = true;
    for (int i = 0; i < env.servers->count(); ++i) ok = PinTo(env.servers->pid(i), 0) && ok;
    ok = PinTo(0, 1) && ok;  // locklab's own clients; the drivers and redis-benchmark inherit it
    env.placement = ok ? "redis-servers on CPU 0, clients (locklab, drivers, redis-benchmark) on CPU 1"
                       : "pinning failed: scheduler's placement";
    if (!ok) env.notes.push_back("could not pin the processes to CPUs: the scheduler placed them");
  }
  Progress(env.placement);
}

// Idle CPUs poll rather than halt for the whole run (every row and the limit alike).
void BenchSetUp::HoldIdlePoll() {
  BenchEnv& env = *env_;
  env.idle = "idle CPUs halt (--no-idle-poll)";
  if (env.o.idle_poll) {
    idle_poll_.emplace();
    env.idle = idle_poll_->active() ? "idle CPUs poll (/dev/cpu_dma_latency held at 0 us)"
                                    : "idle CPUs halt: " + idle_poll_->why_not();
    if (!idle_poll_->active())
      env.notes.push_back("idle CPUs halt (" + idle_poll_->why_not() +
                          "): on a VM each wake-up of a halted vCPU adds tens of us, so the one-client rows are "
                          "slower and move by about 10% from run to run");
  }
  Progress(env.idle);
}

void BenchSetUp::Restore() {
  if (have_own_) sched_setaffinity(0, sizeof own_cpus_, &own_cpus_);
  have_own_ = false;
  idle_poll_.reset();
}

}  // namespace locklab::bench_peers
