// bench-peers' parts (internal to harness/bench): the implementations and workloads it compares,
// and the environment every row runs in (the started redis-servers, a directory for the logs, the
// installed peers), with the small helpers the rows share.
#pragma once

#include <sched.h>
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/status.h"
#include "harness/bench/bench_peers.h"
#include "harness/bench/idle_poll.h"
#include "harness/real/redis_server.h"
#include "harness/run/run_spec.h"

namespace locklab::bench_peers {

using nlohmann::json;

enum class Kind { kLocklab, kNode, kPython };

// The setting of a row that runs an implementation as it comes (locklab: `locklab run`'s retry).
inline constexpr const char* kDefaultSetting = "default";

struct Impl {
  std::string id;         // what --only takes
  std::string name;       // shown in the table
  Kind kind;
  std::string algorithm;  // locklab: algorithm; node: --lib
  std::vector<int> nodes;
  int64_t default_retry_ms;  // the library's default retry delay; > tuned: a tuned row too
  bool watchdog = false;     // refreshes the lock by itself (the pause test also holds past a refresh)
};
const std::vector<Impl>& Impls();
const Impl* FindImpl(const std::string& id);  // nullptr when unknown
// A locklab lock that waits in its own Redis queue (fifo): no retry policy of ours to vary.
bool WaitsInQueue(const Impl& impl);

struct Workload {
  std::string id;
  std::string label;
  int clients;
  bool per_key;  // one key per client
  bool timed;    // duration_ms; else count
};
// uncontended-1, uncontended-keys, contended.
std::vector<Workload> Workloads(const BenchPeersOptions& o);

struct BenchEnv {
  explicit BenchEnv(const BenchPeersOptions& opts) : o(opts) {}
  const BenchPeersOptions& o;
  RedisServers* servers = nullptr;
  std::string tmp;                            // the logs' directory, inside the servers'
  std::string drivers, modules;
  std::string node_versions, python_version;  // "" when not available
  std::string node_missing, python_missing;   // why not
  int row_counter = 0;
  std::string redis_version;
  std::string placement;  // where the processes run (the report's config.placement)
  std::string idle;       // what idle CPUs do (config.idle_cpus)
  std::vector<std::string> notes;  // the report's notes
};

// Options out of range or unknown: Invalid naming the flag.
Status CheckOptions(const BenchPeersOptions& o);

// Finds the peers' versions (or why they are missing), pins the processes to CPUs and asks idle
// CPUs to poll, as the options say, with a progress line each. Restore() undoes the pinning and
// the idle polling (also done by the destructor).
class BenchSetUp {
 public:
  BenchSetUp(BenchEnv* env);
  ~BenchSetUp() { Restore(); }
  BenchSetUp(const BenchSetUp&) = delete;
  BenchSetUp& operator=(const BenchSetUp&) = delete;
  void Restore();

 private:
  void ProbePeers();
  void Pin();
  void HoldIdlePoll();
  void Progress(const std::string& line) const;

  BenchEnv* env_;
  cpu_set_t own_cpus_;
  bool have_own_ = false;
  std::optional<IdlePollHold> idle_poll_;
};

double R3(double v);  // rounded to 3 decimals
std::string Join(const std::vector<std::string>& v, const std::string& sep);
std::vector<std::string> Addresses(const RedisServers& s, int n);  // of the first n servers
std::string Ports(const RedisServers& s, int n);                   // "p1,p2,..."
bool Selected(const BenchPeersOptions& o, const std::string& id);  // by --only
// INFO commandstats of every server.
Result<std::vector<std::map<std::string, int64_t>>> SnapshotStats(const RedisServers& s);
Status FlushAll(const RedisServers& s);
// --retry and --retry-opt into the spec; Invalid naming the bad --retry-opt.
Status ApplyRetry(const BenchPeersOptions& o, RunSpec* s);
std::string RetryText(const BenchPeersOptions& o);  // "retry=NAME[,k=v...]"
// A RunSpec for locklab on the first `nodes` servers with the bench's TTL and timeouts.
RunSpec LocklabSpec(const BenchEnv& env, const std::string& algorithm, int nodes, int clients);
// The driver's program and environment, for a peer implementation.
std::vector<std::string> DriverArgv(const BenchEnv& env, const Impl& impl);
std::vector<std::string> DriverEnv(const BenchEnv& env);
// Why a peer cannot run ("" when it can).
std::string Unavailable(const BenchEnv& env, const Impl& impl);
// The library's version from the driver's summary line.
std::string PeerVersion(const BenchEnv& env, const Impl& impl, const json& summary);
std::string LocklabVersion();  // "VERSION (SHA)"
// The end of a command (bench-peers, scorecard): on failure "locklab: MESSAGE" on stderr; the
// exit status, 0 ok, 2 bad input, 1 anything else (as harness/cli's kExit* codes).
int CommandExit(const Status& s);

}  // namespace locklab::bench_peers
