#include "harness/real/sentinel.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "harness/real/process_registry.h"
#include "harness/real/real_clock.h"
#include "harness/real/redis_server.h"

extern char** environ;

namespace locklab {

namespace {

void SleepUs(int64_t us) {
  timespec ts{static_cast<time_t>(us / 1'000'000), static_cast<long>((us % 1'000'000) * 1000)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

// 40 hex digits, different for every sentinel of every group this machine runs at once.
std::string SentinelId(int port, int i) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%08x%08x%08x%016llx", static_cast<unsigned>(getpid()), static_cast<unsigned>(port),
                static_cast<unsigned>(i), static_cast<unsigned long long>(MonotonicNowUs()));
  return std::string(buf, 40);
}

constexpr int kGroupAttempts = 5;  // a lost race for a port starts the whole group again

}  // namespace

std::string SentinelField(const std::string& reply, const std::string& key) {
  std::istringstream in(reply);
  std::string k, v;
  for (int i = 0; i < 1000 && std::getline(in, k); ++i) {
    if (!std::getline(in, v)) return "";
    if (k == key) return v;
  }
  return "";
}

Result<std::unique_ptr<Sentinels>> Sentinels::Start(const SentinelOptions& options, const std::string& dir,
                                                   int master_port, int replica_port) {
  if (options.count < 1 || options.count > 9)
    return Status::Invalid("sentinels: count must be in [1, 9], got " + std::to_string(options.count));
  if (options.quorum < 1 || options.quorum > options.count)
    return Status::Invalid("sentinels: quorum must be in [1, count], got " + std::to_string(options.quorum));
  if (options.down_after_ms < 1 || options.failover_timeout_ms < 1)
    return Status::Invalid("sentinels: down_after_ms and failover_timeout_ms must be >= 1");
  if (access(options.sentinel_path.c_str(), X_OK) != 0) {
    return Status::Failed("sentinels: " + options.sentinel_path +
                          " not found or not executable (install Debian's redis-sentinel: make deps)");
  }
  InstallCleanupHooks();
  std::unique_ptr<Sentinels> s(new Sentinels());
  s->options_ = options;
  s->procs_.resize(static_cast<size_t>(options.count));
  for (int i = 0; i < options.count; ++i) {
    Proc& p = s->procs_[static_cast<size_t>(i)];
    p.dir = dir + "/sentinel-" + std::to_string(i);
    p.conf_path = p.dir + "/sentinel.conf";
    p.log_path = p.dir + "/sentinel.log";
    if (mkdir(p.dir.c_str(), 0700) != 0 && errno != EEXIST)
      return Status::Failed("sentinels: mkdir " + p.dir + ": " + std::strerror(errno));
  }
  Status last;
  for (int attempt = 0; attempt < kGroupAttempts; ++attempt) {
    last = s->StartAll(master_port, replica_port);
    if (last.ok()) return s;
    bool port_race = false;
    for (int i = 0; i < s->count(); ++i) {
      port_race = port_race || s->LogTail(i, 40).find("Address already in use") != std::string::npos;
      s->Reap(i);
    }
    if (!port_race) break;
  }
  return last;  // the destructor stops what was started
}

Status Sentinels::StartAll(int master_port, int replica_port) {
  for (int i = 0; i < count(); ++i) {
    Proc& p = procs_[static_cast<size_t>(i)];
    p.port = FreeLoopbackPort();
    p.id = SentinelId(p.port, i);
  }
  for (int i = 0; i < count(); ++i) {
    if (Status s = WriteConfig(i, master_port, replica_port); !s.ok()) return s;
    if (Status s = Spawn(i); !s.ok()) return s;
  }
  const int64_t deadline = MonotonicNowUs() + options_.start_timeout_us;
  for (int i = 0; i < count(); ++i)
    if (Status s = WaitAnswers(i, deadline); !s.ok()) return s;
  return WaitAgreed(deadline);
}

Sentinels::~Sentinels() {
  for (int i = 0; i < count(); ++i) Reap(i);
}

Status Sentinels::WriteConfig(int i, int master_port, int replica_port) const {
  const Proc& p = procs_[static_cast<size_t>(i)];
  const std::string& name = options_.master_name;
  std::ostringstream c;
  c << "port " << p.port << "\nbind 127.0.0.1\ndaemonize no\nlogfile " << p.log_path << "\ndir " << p.dir
    << "\nsentinel myid " << p.id << "\nsentinel monitor " << name << " 127.0.0.1 " << master_port << " "
    << options_.quorum << "\nsentinel down-after-milliseconds " << name << " " << options_.down_after_ms
    << "\nsentinel failover-timeout " << name << " " << options_.failover_timeout_ms << "\nsentinel parallel-syncs "
    << name << " 1\nsentinel known-replica " << name << " 127.0.0.1 " << replica_port << "\n";
  for (int j = 0; j < count(); ++j) {
    if (j == i) continue;
    const Proc& o = procs_[static_cast<size_t>(j)];
    c << "sentinel known-sentinel " << name << " 127.0.0.1 " << o.port << " " << o.id << "\n";
  }
  // Written whole each attempt; the sentinel rewrites it while it runs (it must be writable).
  std::ofstream out(p.conf_path, std::ios::trunc);
  out << c.str();
  out.close();
  if (!out) return Status::Failed("sentinels: cannot write " + p.conf_path);
  return Status::Ok();
}

Status Sentinels::Spawn(int i) {
  Proc& p = procs_[static_cast<size_t>(i)];
  // Everything the child needs is built before fork: after fork only async-signal-safe calls.
  std::vector<std::string> args = {options_.sentinel_path, p.conf_path};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int log_fd = open(p.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t pid = ForkManagedChild(null_fd, options_.cpus ? &*options_.cpus : nullptr);
  if (pid == 0) {
    if (log_fd >= 0) {
      dup2(log_fd, 1);
      dup2(log_fd, 2);
    }
    execve(argv[0], argv.data(), environ);
    _exit(127);
  }
  const int fork_errno = errno;
  if (log_fd >= 0) close(log_fd);
  if (null_fd >= 0) close(null_fd);
  if (pid < 0) return Status::Failed(std::string("sentinels: fork: ") + std::strerror(fork_errno));
  if (!RegisterChildPid(pid)) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return Status::Failed("sentinels: too many live children in this process");
  }
  p.pid = pid;
  return Status::Ok();
}

Status Sentinels::WaitAnswers(int i, int64_t deadline_us) {
  Proc& p = procs_[static_cast<size_t>(i)];
  const std::string mine = "process_id:" + std::to_string(p.pid) + "\r";
  for (int round = 0; round < 100'000; ++round) {  // bounded by the deadline
    int status = 0;
    if (waitpid(p.pid, &status, WNOHANG) == p.pid) {
      UnregisterChildPid(p.pid);
      p.pid = 0;
      return Status::Failed("sentinel " + std::to_string(i) + " (port " + std::to_string(p.port) +
                            ") exited at start-up (status " + std::to_string(status) + "); its log ends with:\n" +
                            LogTail(i));
    }
    // Our process, not another one that took the port first.
    const Result<std::string> info = Query(i, {"INFO", "server"}, 200'000);
    if (info.ok() && info->find(mine) != std::string::npos) return Status::Ok();
    if (MonotonicNowUs() > deadline_us) break;
    SleepUs(2'000);
  }
  return Status::Failed("sentinel " + std::to_string(i) + " (port " + std::to_string(p.port) +
                        ") did not answer in time; its log ends with:\n" + LogTail(i));
}

Status Sentinels::WaitAgreed(int64_t deadline_us) {
  const std::string& name = options_.master_name;
  std::string why;
  for (int round = 0; round < 100'000; ++round) {  // bounded by the deadline
    int agreed = 0;
    for (int i = 0; i < count(); ++i) {
      const Result<std::string> m = Query(i, {"SENTINEL", "MASTER", name});
      const Result<std::string> r = Query(i, {"SENTINEL", "REPLICAS", name});
      const Result<std::string> o = Query(i, {"SENTINEL", "SENTINELS", name});
      if (!m.ok() || !r.ok() || !o.ok()) {
        why = !m.ok() ? m.status().message() : !r.ok() ? r.status().message() : o.status().message();
        continue;
      }
      // Each one links to the others too (they start out judged down until they first answer):
      // a failover needs their votes.
      const bool others_up = o->find("s_down") == std::string::npos && o->find("disconnected") == std::string::npos;
      const bool ok = SentinelField(*m, "flags") == "master" &&
                      SentinelField(*m, "num-other-sentinels") == std::to_string(count() - 1) && others_up &&
                      SentinelField(*r, "flags") == "slave" && SentinelField(*r, "master-link-status") == "ok";
      if (ok) ++agreed;
      else why = "sentinel " + std::to_string(i) + " sees master flags '" + SentinelField(*m, "flags") + "', " +
                 SentinelField(*m, "num-other-sentinels") + " other sentinels (" + (others_up ? "up" : "not all up") +
                 "), replica flags '" + SentinelField(*r, "flags") + "' link '" +
                 SentinelField(*r, "master-link-status") + "'";
    }
    if (agreed == count()) return Status::Ok();
    if (MonotonicNowUs() > deadline_us) break;
    SleepUs(10'000);
  }
  return Status::Failed("sentinels did not agree on the master, its replica and each other within " +
                        std::to_string(options_.start_timeout_us / 1000) + " ms (" + why +
                        "); sentinel 0's log ends with:\n" + LogTail(0));
}

void Sentinels::Reap(int i) {
  Proc& p = procs_[static_cast<size_t>(i)];
  if (p.pid <= 0) return;
  if (!IsChildPidRegistered(p.pid)) {  // a cleanup hook already killed and reaped it
    p.pid = 0;
    return;
  }
  kill(p.pid, SIGKILL);
  while (waitpid(p.pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  UnregisterChildPid(p.pid);
  p.pid = 0;
}

std::string Sentinels::LogTail(int i, int lines) const {
  std::ifstream in(procs_[static_cast<size_t>(i)].log_path);
  std::vector<std::string> tail;
  std::string line;
  for (int n = 0; n < 1'000'000 && std::getline(in, line); ++n) {
    tail.push_back(line);
    if (static_cast<int>(tail.size()) > lines) tail.erase(tail.begin());
  }
  std::string out;
  for (const auto& l : tail) out += "    | " + l + "\n";
  return out.empty() ? "    | (empty log)\n" : out;
}

Status Sentinels::MasterAddress(std::string* host, int* port) const {
  Status last = Status::Failed("sentinels: none is running");
  for (int i = 0; i < count(); ++i) {
    const Result<std::string> r = Query(i, {"SENTINEL", "GET-MASTER-ADDR-BY-NAME", options_.master_name});
    if (!r.ok()) {
      last = r.status();
      continue;
    }
    const size_t nl = r->find('\n');
    if (nl != std::string::npos && ParseHostPort(r->substr(0, nl) + ":" + r->substr(nl + 1), host, port))
      return Status::Ok();
    last = Status::Failed("sentinel " + std::to_string(i) + ": unexpected reply to GET-MASTER-ADDR-BY-NAME: '" +
                          *r + "'");
  }
  return last;
}

Result<std::string> Sentinels::Query(int i, const std::vector<std::string>& argv, int64_t timeout_us) const {
  const Proc& p = procs_[static_cast<size_t>(i)];
  if (p.pid <= 0) return Status::Failed("sentinel " + std::to_string(i) + " is not running");
  return QueryRedis("127.0.0.1", p.port, argv, timeout_us);
}

}  // namespace locklab
