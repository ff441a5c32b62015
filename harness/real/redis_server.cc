#include "harness/real/real_clock.h"
#include "harness/run/build_info.h"
#include "harness/real/redis_server.h"
#include "harness/real/process_registry.h"

#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

extern char** environ;

namespace locklab {

namespace {

int64_t MonoUs() { return MonotonicNowUs(); }

int64_t RealUs() { return RealtimeNowUs(); }

void SleepUs(int64_t us) {
  timespec ts{static_cast<time_t>(us / 1'000'000), static_cast<long>((us % 1'000'000) * 1000)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}


// Layout of the clock file; must match struct ClockShimPage in harness/real/shim/clockshim.c.
struct ClockShimPage {
  int64_t seq;
  int64_t offset_us;
  int64_t drift_ppb;
  int64_t anchor_us;
};
constexpr size_t kClockFileBytes = 4096;

void WritePage(void* mapping, int64_t offset_us, int64_t drift_ppb, int64_t anchor_us) {
  auto* p = static_cast<ClockShimPage*>(mapping);
  // Seqlock write: odd while the fields change (the shim retries its read meanwhile).
  const int64_t s = __atomic_load_n(&p->seq, __ATOMIC_RELAXED);
  __atomic_store_n(&p->seq, s + 1, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
  __atomic_store_n(&p->offset_us, offset_us, __ATOMIC_RELAXED);
  __atomic_store_n(&p->drift_ppb, drift_ppb, __ATOMIC_RELAXED);
  __atomic_store_n(&p->anchor_us, anchor_us, __ATOMIC_RELAXED);
  __atomic_store_n(&p->seq, s + 2, __ATOMIC_RELEASE);
}

std::string FormatReply(const redisReply* r) {
  switch (r->type) {
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
      return std::string(r->str, r->len);
    case REDIS_REPLY_INTEGER:
      return std::to_string(r->integer);
    case REDIS_REPLY_ARRAY: {
      std::string s;
      for (size_t i = 0; i < r->elements; ++i) {
        if (i) s += '\n';
        s += FormatReply(r->element[i]);
      }
      return s;
    }
    default:
      return "";
  }
}

}  // namespace

std::map<std::string, int64_t> ParseCommandStats(const std::string& info) {
  std::map<std::string, int64_t> out;
  std::istringstream in(info);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("cmdstat_", 0) != 0) continue;
    size_t colon = line.find(':');
    size_t calls = line.find("calls=");
    if (colon == std::string::npos || calls == std::string::npos) continue;
    std::string name = line.substr(8, colon - 8);
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    out[name] += std::strtoll(line.c_str() + calls + 6, nullptr, 10);
  }
  return out;
}

pid_t ForkManagedChild(int stdin_fd, const cpu_set_t* cpus) {
  const pid_t parent = getpid();
  sigset_t all, old_mask;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, &old_mask);
  const pid_t pid = fork();
  if (pid != 0) {
    const int saved = errno;
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    errno = saved;
    return pid;
  }
  // Die with the thread that forked us; if it is already gone, the signal was missed.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);
  setpgid(0, 0);
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  signal(SIGPIPE, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (stdin_fd >= 0) dup2(stdin_fd, 0);
  if (cpus != nullptr) sched_setaffinity(0, sizeof(cpu_set_t), cpus);  // a plain system call
  return 0;
}

// ---------------------------------------------------------------------------------------------

int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  int port = 0;
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

std::string FindClockShim() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("LOCKLAB_CLOCKSHIM"); env != nullptr && env[0] != '\0') candidates.push_back(env);
  candidates.push_back(std::string(BinaryDir()) + "/liblocklab_clockshim.so");
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    std::string path(exe, static_cast<size_t>(n));
    size_t slash = path.rfind('/');
    if (slash != std::string::npos) candidates.push_back(path.substr(0, slash) + "/liblocklab_clockshim.so");
  }
  for (const auto& c : candidates)
    if (access(c.c_str(), R_OK) == 0) return c;
  return "";
}

bool ParseHostPort(const std::string& s, std::string* host, int* port) {
  size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 >= s.size()) return false;
  int p = 0;
  for (size_t i = colon + 1; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    p = p * 10 + (s[i] - '0');
    if (p > 65535) return false;
  }
  if (p == 0) return false;
  *host = s.substr(0, colon);
  *port = p;
  return true;
}

void RaiseFileLimit() {
  rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

std::string RedisServers::address(int i) const { return "127.0.0.1:" + std::to_string(port(i)); }

std::string RedisServers::LogTail(int i, int lines) const {
  std::ifstream in(servers_[static_cast<size_t>(i)].log_path);
  std::vector<std::string> tail;
  std::string line;
  while (std::getline(in, line)) {
    tail.push_back(line);
    if (static_cast<int>(tail.size()) > lines) tail.erase(tail.begin());
  }
  std::string out;
  for (const auto& l : tail) out += "    | " + l + "\n";
  return out.empty() ? "    | (empty log)\n" : out;
}

Result<std::unique_ptr<RedisServers>> RedisServers::Start(const RedisServerOptions& options) {
  if (options.masters < 1 || options.masters > 64) {
    return Status::Invalid("redis servers: masters must be in [1, 64], got " + std::to_string(options.masters));
  }
  if (access(options.redis_server_path.c_str(), X_OK) != 0) {
    return Status::Failed("redis servers: " + options.redis_server_path +
                          " not found or not executable (install Debian's redis-server, or use --redis HOST:PORT)");
  }
  RaiseFileLimit();
  InstallCleanupHooks();

  std::unique_ptr<RedisServers> s(new RedisServers());
  s->options_ = options;
  s->shim_path_ = options.clock_shim_path.empty() ? FindClockShim() : options.clock_shim_path;
  if (!s->shim_path_.empty() && access(s->shim_path_.c_str(), R_OK) != 0) s->shim_path_.clear();

  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp") + "/locklab-redis-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) {
    return Status::Failed("redis servers: mkdtemp " + templ + ": " + std::strerror(errno));
  }
  s->dir_ = buf.data();
  s->dir_slot_ = RegisterTempDir(s->dir_);

  const int total = options.masters + (options.with_replica ? 1 : 0);
  s->servers_.resize(static_cast<size_t>(total));
  for (int i = 0; i < total; ++i) {
    Server& sv = s->servers_[static_cast<size_t>(i)];
    sv.is_replica = options.with_replica && i == total - 1;
    sv.node_dir = s->dir_ + "/node-" + std::to_string(i);
    sv.log_path = s->dir_ + "/redis-" + std::to_string(i) + ".log";
    sv.clock_path = s->dir_ + "/clock-" + std::to_string(i);
    if (mkdir(sv.node_dir.c_str(), 0700) != 0) {
      return Status::Failed("redis servers: mkdir " + sv.node_dir + ": " + std::strerror(errno));
    }
    int fd = open(sv.clock_path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || ftruncate(fd, kClockFileBytes) != 0) {
      const Status failed = Status::Failed("redis servers: clock file " + sv.clock_path + ": " + std::strerror(errno));
      if (fd >= 0) close(fd);
      return failed;
    }
    void* m = mmap(nullptr, kClockFileBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
      return Status::Failed("redis servers: mmap " + sv.clock_path + ": " + std::strerror(errno));
    }
    sv.clock_page = m;
  }

  constexpr int kPortAttempts = 5;
  for (int i = 0; i < total; ++i) {
    Status last;
    bool ok = false;
    for (int attempt = 0; attempt < kPortAttempts && !ok; ++attempt) {
      s->servers_[static_cast<size_t>(i)].port = FreeLoopbackPort();
      last = s->Spawn(i);
      if (last.ok()) last = s->WaitReady(i);
      ok = last.ok();
      if (!ok) {
        s->Reap(i);
        // Only a lost race for the port is worth another try.
        if (s->LogTail(i, 40).find("Address already in use") == std::string::npos) break;
      }
    }
    if (!ok) return last;  // the destructor stops what was started
  }
  if (options.with_replica)
    if (Status synced = s->WaitReplicaInSync(); !synced.ok()) return synced;
  return s;
}

RedisServers::~RedisServers() {
  for (int i = 0; i < count(); ++i) Reap(i);
  for (auto& sv : servers_)
    if (sv.clock_page != nullptr) munmap(sv.clock_page, kClockFileBytes);
  if (!dir_.empty()) {
    UnregisterTempDir(dir_slot_);
    RemoveTempDirNow(dir_);
  }
}

Status RedisServers::Spawn(int i) {
  Server& sv = servers_[static_cast<size_t>(i)];
  // Everything the child needs is built before fork: after fork only async-signal-safe calls.
  std::vector<std::string> args = {options_.redis_server_path,
                                   "--port", std::to_string(sv.port),
                                   "--bind", "127.0.0.1",
                                   "--save", "",
                                   "--appendonly", "no",
                                   "--dir", sv.node_dir,
                                   "--logfile", sv.log_path,
                                   "--daemonize", "no",
                                   // Disk-based sync: after a diskless one the master holds
                                   // writes back until the replica's first ACK (up to 1 s).
                                   "--repl-diskless-sync", "no",
                                   "--maxclients", "10000",
                                   // a thousand clients connect at once: keep their SYNs
                                   "--tcp-backlog", "4096"};
  if (sv.is_replica) {
    args.insert(args.end(), {"--replicaof", "127.0.0.1", std::to_string(servers_[0].port)});
  }
  std::vector<std::string> envs;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, "LD_PRELOAD=", 11) == 0 || std::strncmp(*e, "LOCKLAB_CLOCK_OFFSET_FILE=", 26) == 0) continue;
    envs.emplace_back(*e);
  }
  if (!shim_path_.empty()) {
    envs.push_back("LD_PRELOAD=" + shim_path_);
    envs.push_back("LOCKLAB_CLOCK_OFFSET_FILE=" + sv.clock_path);
  }
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : envs) envp.push_back(e.data());
  envp.push_back(nullptr);
  const int log_fd = open(sv.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  // Signals stay blocked across fork, so that the child cannot run our SIGINT/SIGTERM handler
  // (which would kill its siblings) before it has reset the dispositions.
  const pid_t pid = ForkManagedChild(null_fd, options_.cpus ? &*options_.cpus : nullptr);
  if (pid < 0) {
    const Status failed = Status::Failed(std::string("redis servers: fork: ") + std::strerror(errno));
    if (log_fd >= 0) close(log_fd);
    if (null_fd >= 0) close(null_fd);
    return failed;
  }
  if (pid == 0) {
    if (log_fd >= 0) {
      dup2(log_fd, 1);
      dup2(log_fd, 2);
    }
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  if (log_fd >= 0) close(log_fd);
  if (null_fd >= 0) close(null_fd);
  if (!RegisterChildPid(pid)) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return Status::Failed("redis servers: too many live servers in this process");
  }
  sv.pid = pid;
  sv.paused = false;
  return Status::Ok();
}

bool RedisServers::PingOnce(int i) {
  if (!running(i)) return false;
  // Not just PING: the answer must come from our process. Two test binaries may pick the same
  // free port at once; the loser's redis-server exits ("Address already in use"), but until it
  // does, the winner's server would answer a PING on that port and we would run against it.
  const Result<std::string> info = Query(i, {"INFO", "server"}, 200'000);
  return info.ok() &&
         info->find("process_id:" + std::to_string(servers_[static_cast<size_t>(i)].pid) + "\r") != std::string::npos;
}

Status RedisServers::WaitReady(int i) {
  Server& sv = servers_[static_cast<size_t>(i)];
  const int64_t deadline = MonoUs() + options_.start_timeout_us;
  while (true) {
    int status = 0;
    pid_t r = waitpid(sv.pid, &status, WNOHANG);
    if (r == sv.pid) {
      UnregisterChildPid(sv.pid);
      sv.pid = 0;
      return Status::Failed("redis server " + std::to_string(i) + " (port " + std::to_string(sv.port) +
                            ") exited at start-up (status " + std::to_string(status) + "); its log ends with:\n" +
                            LogTail(i));
    }
    if (PingOnce(i)) return Status::Ok();
    if (MonoUs() > deadline) {
      return Status::Failed("redis server " + std::to_string(i) + " (port " + std::to_string(sv.port) +
                            ") did not answer PING within " + std::to_string(options_.start_timeout_us / 1000) +
                            " ms; its log ends with:\n" + LogTail(i));
    }
    SleepUs(2'000);
  }
}

Status RedisServers::WaitReplicaInSync() {
  const int r = replica_index();
  const int64_t deadline = MonoUs() + options_.start_timeout_us;
  const std::string probe = "locklab:replica-probe";
  bool probe_set = false;
  while (true) {  // bounded by the deadline
    // "master_link_status:up" is not enough: a master may still hold writes back from a replica
    // it calls online (after a diskless sync, until the replica's first ACK). Only a write seen
    // on the replica proves that writes stream, which is what a failover test relies on.
    if (!probe_set) {
      const Result<std::string> info = Query(r, {"INFO", "replication"});
      if (info.ok() && info->find("master_link_status:up") != std::string::npos)
        probe_set = Query(0, {"SET", probe, "1"}).ok();
    }
    if (probe_set) {
      const Result<std::string> seen = Query(r, {"EXISTS", probe});
      if (seen.ok() && *seen == "1") {
        (void)Query(0, {"DEL", probe});
        return Status::Ok();
      }
    }
    if (MonoUs() > deadline) {
      return Status::Failed("redis replica (port " + std::to_string(port(r)) + ") did not sync with its master within " +
                            std::to_string(options_.start_timeout_us / 1000) + " ms; its log ends with:\n" + LogTail(r));
    }
    SleepUs(5'000);
  }
}

void RedisServers::Reap(int i) {
  Server& sv = servers_[static_cast<size_t>(i)];
  if (sv.pid <= 0) return;
  if (!IsChildPidRegistered(sv.pid)) {  // the signal hook already killed and reaped it: the pid is stale
    sv.pid = 0;
    return;
  }
  kill(sv.pid, SIGKILL);  // also ends a SIGSTOPped server
  while (waitpid(sv.pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  UnregisterChildPid(sv.pid);
  sv.pid = 0;
  sv.paused = false;
}

Status RedisServers::NotRunning(int i) { return Status::Failed("redis server " + std::to_string(i) + " is not running"); }

Status RedisServers::Kill(int i) {
  if (!running(i)) return NotRunning(i);
  Reap(i);
  return Status::Ok();
}

Status RedisServers::Respawn(int i) {
  Reap(i);
  return Spawn(i);
}

Status RedisServers::Restart(int i) {
  if (Status s = Respawn(i); !s.ok()) return s;
  if (Status s = WaitReady(i); !s.ok()) {
    Reap(i);
    return s;
  }
  return Status::Ok();
}

Status RedisServers::Pause(int i) {
  Server& sv = servers_[static_cast<size_t>(i)];
  if (!running(i)) return NotRunning(i);
  if (sv.paused) return Status::Ok();
  kill(sv.pid, SIGSTOP);
  // Wait until it really stopped, so that what the caller does next meets a frozen server.
  int status = 0;
  pid_t r;
  while ((r = waitpid(sv.pid, &status, WUNTRACED)) < 0 && errno == EINTR) {
  }
  if (r == sv.pid && !WIFSTOPPED(status)) {  // it had died: now it is reaped
    UnregisterChildPid(sv.pid);
    sv.pid = 0;
    return Status::Failed("redis server " + std::to_string(i) + " had exited before it could be paused");
  }
  sv.paused = true;
  return Status::Ok();
}

Status RedisServers::Resume(int i) {
  Server& sv = servers_[static_cast<size_t>(i)];
  if (!running(i)) return NotRunning(i);
  kill(sv.pid, SIGCONT);
  sv.paused = false;
  return Status::Ok();
}

Status RedisServers::SetClock(int i, int64_t offset_us, double drift_ppm) {
  Server& sv = servers_[static_cast<size_t>(i)];
  if (shim_path_.empty()) {
    return Status::Failed("redis server " + std::to_string(i) +
                          ": cannot move its clock: the clock shim (liblocklab_clockshim.so) was not found; "
                          "build the locklab_clockshim target or set LOCKLAB_CLOCKSHIM");
  }
  sv.offset_us = offset_us;
  WritePage(sv.clock_page, offset_us, static_cast<int64_t>(drift_ppm * 1000.0), RealUs());
  return Status::Ok();
}

Status RedisServers::JumpClock(int i, int64_t delta_us) {
  Server& sv = servers_[static_cast<size_t>(i)];
  if (shim_path_.empty()) return SetClock(i, 0, 0);  // produces the message
  auto* p = static_cast<ClockShimPage*>(sv.clock_page);
  sv.offset_us += delta_us;
  WritePage(sv.clock_page, sv.offset_us, __atomic_load_n(&p->drift_ppb, __ATOMIC_RELAXED),
            __atomic_load_n(&p->anchor_us, __ATOMIC_RELAXED));
  return Status::Ok();
}

Status RedisServers::IsolateReplica() {
  const int r = replica_index();
  if (r < 0) return Status::Failed("failover: there is no replica (start the servers with a replica)");
  if (!running(0) || !running(r)) return Status::Failed("failover: the master or its replica is not running");
  if (Status s = Pause(r); !s.ok()) return s;
  if (Result<std::string> killed = Query(0, {"CLIENT", "KILL", "TYPE", "replica"}); !killed.ok())
    return killed.status().Prefixed("failover: CLIENT KILL TYPE replica on the master");
  return Status::Ok();
}

Status RedisServers::PromoteReplica() {
  const int r = replica_index();
  if (r < 0 || !running(r)) return Status::Failed("failover: there is no running replica to promote");
  Reap(0);
  if (Status s = Resume(r); !s.ok()) return s;
  if (Result<std::string> promoted = Query(r, {"REPLICAOF", "NO", "ONE"}); !promoted.ok())
    return promoted.status().Prefixed("failover: REPLICAOF NO ONE on the replica");
  servers_[static_cast<size_t>(r)].is_replica = false;  // a later Restart() starts it as a master
  return Status::Ok();
}

Status RedisServers::KillMasterResumeReplica(int master) {
  if (replica_index() < 0) return Status::Failed("failover: there is no replica (start the servers with a replica)");
  LOCKLAB_RETURN_IF_ERROR(Kill(master));  // killed first, resumed second
  return Resume(replica_index());
}

Result<std::string> RedisServers::Query(int i, const std::vector<std::string>& argv, int64_t timeout_us) const {
  if (!running(i)) return NotRunning(i);
  return QueryRedis("127.0.0.1", port(i), argv, timeout_us);
}

std::string RedisServers::Version() const {
  const Result<std::string> info = Query(0, {"INFO", "server"});
  if (!info.ok()) return "";
  const size_t at = info->find("redis_version:");
  if (at == std::string::npos) return "";
  const size_t end = info->find_first_of("\r\n", at);
  return info->substr(at + 14, end == std::string::npos ? std::string::npos : end - at - 14);
}

Result<std::string> QueryRedis(const std::string& host, int port, const std::vector<std::string>& argv,
                               int64_t timeout_us) {
  const std::string where = host + ":" + std::to_string(port);
  timeval tv{static_cast<time_t>(timeout_us / 1'000'000), static_cast<suseconds_t>(timeout_us % 1'000'000)};
  redisContext* c = redisConnectWithTimeout(host.c_str(), port, tv);
  if (c == nullptr || c->err) {
    const Status failed = Status::Failed("connect to " + where + ": " + (c != nullptr ? c->errstr : "out of memory"));
    if (c != nullptr) redisFree(c);
    return failed;
  }
  redisSetTimeout(c, tv);
  std::vector<const char*> words;
  std::vector<size_t> lens;
  for (const auto& a : argv) {
    words.push_back(a.data());
    lens.push_back(a.size());
  }
  auto* reply = static_cast<redisReply*>(
      redisCommandArgv(c, static_cast<int>(words.size()), words.data(), lens.data()));
  const std::string name = argv.empty() ? std::string() : argv[0];
  Result<std::string> out = Status::Failed(name + " on " + where + ": " + (reply == nullptr ? c->errstr : ""));
  if (reply != nullptr && reply->type == REDIS_REPLY_ERROR) {
    out = Status::Failed(name + " on " + where + ": " + FormatReply(reply));
  } else if (reply != nullptr) {
    out = FormatReply(reply);
  }
  if (reply != nullptr) freeReplyObject(reply);
  redisFree(c);
  return out;
}

}  // namespace locklab
