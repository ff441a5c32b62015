// RedisServers: redis-server processes that locklab starts, controls (faults) and stops.
//
// Servers listen on free loopback ports (127.0.0.1 only), keep nothing on disk (--save ''
// --appendonly no) and live in one temporary directory (mkdtemp) that is removed when the
// set is destroyed. Server i < count() - (has_replica() ? 1 : 0) is an independent master;
// with a replica, the last server is an asynchronous replica of server 0.
//
// No orphans, ever:
//  - each child gets PR_SET_PDEATHSIG = SIGKILL, so it dies with the *thread* that forked it
//    (create and control a RedisServers from one long-lived thread, e.g. main);
//  - every live pid is in a process-wide registry; SIGINT/SIGTERM kill them (and remove the
//    directories) and exit with 128+signal; an atexit hook does the same on exit();
//  - the destructor kills and reaps every server.
//
// Node clocks: every server is started with the clock shim (harness/real/shim/clockshim.c) preloaded
// when it can be found, reading its offset from a file in the temporary directory;
// SetClock() moves that server's wall clock at once (Redis expires keys by it).
//
// Not thread-safe: one thread uses a RedisServers. Blocking calls (Start, Restart, the
// failover steps, Query) wait at most a few seconds and say why when they fail.
#pragma once

#include <sched.h>
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/status.h"

namespace locklab {

struct RedisServerOptions {
  int masters = 1;             // independent servers
  bool with_replica = false;   // one more server: an asynchronous replica of server 0
  std::string redis_server_path = "/usr/bin/redis-server";
  // LD_PRELOAD library that moves a node's wall clock; empty = FindClockShim(); when none is
  // found the servers run without it and SetClock() fails with a message.
  std::string clock_shim_path;
  int64_t start_timeout_us = 10'000'000;  // per server, until it answers PING
  // The CPUs every server (and its restarts) may run on, set in the child before exec; none:
  // the scheduler's (cpu_placement.h).
  std::optional<cpu_set_t> cpus;
};

// INFO commandstats text -> calls per command name in upper case
// ("cmdstat_set:calls=5,usec=..." -> {"SET": 5}; sub-commands as "SCRIPT|LOAD").
std::map<std::string, int64_t> ParseCommandStats(const std::string& info);

// fork() for a process that manages its children (RedisServers, the peer benchmark). In the
// child (return 0): it dies with the thread that forked it (PR_SET_PDEATHSIG; _exit(1) when that
// is already gone), has a process group of its own (a terminal's Ctrl-C reaches the parent only,
// which then kills it), default SIGINT, SIGTERM and SIGPIPE, no signal blocked, and stdin from
// `stdin_fd` when it is >= 0, and runs only on `cpus` when given (cpu_placement.h); it may then
// only make async-signal-safe calls (dup2, exec, _exit). Signals stay blocked across the fork,
// so the child never runs the parent's handlers. In the parent: the child's pid, or -1 with
// errno set.
pid_t ForkManagedChild(int stdin_fd, const cpu_set_t* cpus = nullptr);

class RedisServers {
 public:
  // Starts every server and waits until each answers PING (and the replica is in sync).
  // Invalid options, or Failed (with the failing server's log tail); nothing is left running.
  static Result<std::unique_ptr<RedisServers>> Start(const RedisServerOptions& options);
  ~RedisServers();  // kills and reaps every server, removes the directory
  RedisServers(const RedisServers&) = delete;
  RedisServers& operator=(const RedisServers&) = delete;

  int count() const { return static_cast<int>(servers_.size()); }
  bool has_replica() const { return options_.with_replica; }
  int replica_index() const { return options_.with_replica ? count() - 1 : -1; }
  int port(int i) const { return servers_[static_cast<size_t>(i)].port; }
  std::string address(int i) const;  // "127.0.0.1:PORT"
  pid_t pid(int i) const { return servers_[static_cast<size_t>(i)].pid; }  // 0 when not running
  bool running(int i) const { return pid(i) > 0; }
  bool paused(int i) const { return servers_[static_cast<size_t>(i)].paused; }
  const std::string& dir() const { return dir_; }
  bool clock_shim_loaded() const { return !shim_path_.empty(); }
  // The last lines of server i's log, for error messages.
  std::string LogTail(int i, int lines = 15) const;

  // --- Faults. Failed when impossible (server not running, ...). ---

  // SIGKILL: the data is gone (no persistence).
  Status Kill(int i);
  // Kill (if running) and start again on the same port, empty; blocks until it answers PING.
  Status Restart(int i);
  // Non-blocking halves of Restart, for an event loop that must not stall: Respawn() starts
  // the process (after killing it if needed); PingOnce() is true once it answers (INFO server
  // names our process: a server of another process on the same port does not count).
  Status Respawn(int i);
  bool PingOnce(int i);
  // SIGSTOP / SIGCONT.
  Status Pause(int i);
  Status Resume(int i);
  // Server i's wall clock = real wall clock + offset_us, running (1 + drift_ppm/1e6) times as
  // fast from now on. Takes effect immediately (the next clock read in the server).
  Status SetClock(int i, int64_t offset_us, double drift_ppm);
  // Moves server i's wall clock by delta_us now (keeps its drift).
  Status JumpClock(int i, int64_t delta_us);
  int64_t clock_offset_us(int i) const { return servers_[static_cast<size_t>(i)].offset_us; }

  // Failover of server 0 to the replica, in the steps the runtime needs. Between step 1 and
  // step 2, writes acknowledged by server 0 never reach the replica: they are lost when the
  // replica takes over (the race this fault is for).
  //  1. IsolateReplica: SIGSTOP the replica, then CLIENT KILL TYPE replica on the master (a
  //     stopped replica's socket would still buffer the writes and apply them on SIGCONT).
  //  2. PromoteReplica: SIGKILL the master, SIGCONT the replica, REPLICAOF NO ONE on it. On
  //     success the replica's address is where endpoint 0 now lives.
  Status IsolateReplica();
  Status PromoteReplica();
  // Step 2 when Redis Sentinel promotes instead (sentinel.h): SIGKILL `master` (server 0, or
  // whichever server holds its role now), then SIGCONT the replica, which never got what it
  // missed; nothing promotes it here.
  Status KillMasterResumeReplica(int master);

  // QueryRedis() to server i, for setup and cross-checks (Failed when it is not running).
  Result<std::string> Query(int i, const std::vector<std::string>& argv, int64_t timeout_us = 2'000'000) const;
  // redis_version from INFO server of server 0 ("7.0.15"); "" when it cannot be asked.
  std::string Version() const;

 private:
  struct Server {
    int port = 0;
    pid_t pid = 0;
    bool paused = false;
    bool is_replica = false;
    int64_t offset_us = 0;
    std::string node_dir;
    std::string log_path;
    std::string clock_path;
    void* clock_page = nullptr;  // the shared mapping of clock_path
  };

  RedisServers() = default;
  Status Spawn(int i);
  Status WaitReady(int i);  // until start_timeout_us
  void Reap(int i);  // SIGKILL + waitpid, unregisters
  Status WaitReplicaInSync();  // until start_timeout_us
  static Status NotRunning(int i);

  RedisServerOptions options_;
  std::string dir_;
  int dir_slot_ = -1;  // in the process-wide cleanup registry
  std::string shim_path_;
  std::vector<Server> servers_;
};

// The clock shim library: $LOCKLAB_CLOCKSHIM, else the build directory's, else next to the
// running executable. Empty when none exists.
std::string FindClockShim();

// One blocking command to HOST:PORT on a fresh connection (timeout_us for connect and reply).
// The reply as text: status/string verbatim, integers in decimal, arrays one element a line;
// Failed on an error reply or an I/O failure.
Result<std::string> QueryRedis(const std::string& host, int port, const std::vector<std::string>& argv,
                               int64_t timeout_us = 2'000'000);

// "HOST:PORT" -> host, port; false when malformed.
bool ParseHostPort(const std::string& s, std::string* host, int* port);

// A loopback port nobody listens on right now (0 when none could be found). Racy by nature
// (another process may take it before our child binds it): callers retry with a fresh port
// when the bind fails.
int FreeLoopbackPort();

// Raises RLIMIT_NOFILE to its hard limit (a thousand clients need thousands of sockets).
void RaiseFileLimit();

}  // namespace locklab
