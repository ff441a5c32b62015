// Sentinels: redis-sentinel processes (Debian's redis-sentinel) that locklab starts next to a
// master and its replica (RedisServers with a replica), so that a failover is Redis Sentinel's
// own: the sentinels notice the dead master, agree (quorum), elect a leader and promote the
// replica with REPLICAOF NO ONE, then announce +switch-master. Nothing in locklab promotes.
//
// Each sentinel listens on a free 127.0.0.1 port, keeps its config file and log in a directory
// of its own under the directory it is given (the servers' temporary directory), and is started
// knowing the replica and the other sentinels (`sentinel known-replica`, `known-sentinel` with
// ids locklab chose), so it is ready at once instead of after its first hello messages.
//
// No orphans, as for RedisServers (redis_server.h): every sentinel dies with the thread that
// started it (PR_SET_PDEATHSIG), sits in the process-wide registry (process_registry.h: killed on
// SIGINT/SIGTERM/exit), and the destructor kills and reaps each. Start() leaves nothing running
// when it fails.
//
// Not thread-safe: one thread starts, asks and destroys a Sentinels.
#pragma once

#include <sched.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/status.h"

namespace locklab {

struct SentinelOptions {
  int count = 3;
  int quorum = 2;
  // Short, so that a failover takes about a second or two instead of half a minute.
  int64_t down_after_ms = 200;
  int64_t failover_timeout_ms = 1000;
  std::string master_name = "locklab";
  std::string sentinel_path = "/usr/bin/redis-sentinel";
  int64_t start_timeout_us = 10'000'000;  // all sentinels up and agreeing on the group
  std::optional<cpu_set_t> cpus;           // the CPUs each sentinel may run on; none: the scheduler's
};

class Sentinels {
 public:
  // Starts options.count sentinels watching the master on 127.0.0.1:master_port (with its one
  // replica on replica_port), their files under `dir` (which must exist), and waits until each
  // one sees the master up, the replica linked and every other sentinel. Invalid options, or
  // Failed with the failing sentinel's log tail; nothing is left running.
  static Result<std::unique_ptr<Sentinels>> Start(const SentinelOptions& options, const std::string& dir,
                                                  int master_port, int replica_port);
  ~Sentinels();  // kills and reaps every sentinel
  Sentinels(const Sentinels&) = delete;
  Sentinels& operator=(const Sentinels&) = delete;

  int count() const { return static_cast<int>(procs_.size()); }
  int port(int i) const { return procs_[static_cast<size_t>(i)].port; }
  pid_t pid(int i) const { return procs_[static_cast<size_t>(i)].pid; }  // 0 when not running
  const SentinelOptions& options() const { return options_; }
  // The last lines of sentinel i's log, for error messages.
  std::string LogTail(int i, int lines = 15) const;

  // SENTINEL get-master-addr-by-name, from the first sentinel that answers: "127.0.0.1", port.
  Status MasterAddress(std::string* host, int* port) const;
  // One blocking command to sentinel i (QueryRedis's reply text).
  Result<std::string> Query(int i, const std::vector<std::string>& argv, int64_t timeout_us = 1'000'000) const;

 private:
  struct Proc {
    int port = 0;
    pid_t pid = 0;
    std::string id;  // 40 hex digits (sentinel myid)
    std::string dir;
    std::string conf_path;
    std::string log_path;
  };

  Sentinels() = default;
  Status WriteConfig(int i, int master_port, int replica_port) const;
  Status Spawn(int i);
  Status WaitAnswers(int i, int64_t deadline_us);
  Status WaitAgreed(int64_t deadline_us);  // every sentinel sees the master, the replica, the others
  Status StartAll(int master_port, int replica_port);
  void Reap(int i);

  SentinelOptions options_;
  std::vector<Proc> procs_;
};

// "k1\nv1\nk2\nv2..." (a SENTINEL MASTER / REPLICAS reply as QueryRedis gives it) -> the value
// of `key`, or "" when absent.
std::string SentinelField(const std::string& reply, const std::string& key);

}  // namespace locklab
