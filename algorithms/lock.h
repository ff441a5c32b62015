// Lock: the interface every lock algorithm implements, and the registry that makes them by name.
//
// One Lock object per client; it remembers what that client needs to release (its token, its
// timestamp, its watchdog). Acquire is one attempt: retrying is the job of a RetryPolicy
// (algorithms/retry.h), so that any algorithm can be paired with any waiting strategy.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/env.h"
#include "algorithms/options.h"
#include "algorithms/task.h"

namespace locklab {

// Jepsen's three outcomes: kUnknown means the attempt may have taken effect (a timeout).
enum class Outcome : uint8_t { kOk, kFail, kUnknown };
const char* OutcomeName(Outcome o);

// The in-process mutexes of the `local` algorithm: one per application server, shared by every
// client of a run (all clients live in one OS process on both backends, so plain memory is
// shared memory). holder[s] is the client holding server s's mutex, or -1.
struct LocalMutexes {
  std::vector<int> holder;
};

struct LockConfig {
  std::string key = "locklab:lock";
  int64_t ttl_ms = 1000;
  Options options;  // already resolved against the algorithm's OptionSpecs
  // `local` only: the application server this client runs on, and the run's mutexes (one per
  // server; the runner creates them once per run). Without them a `local` lock has a mutex of
  // its own, as if its client were alone on its server.
  int app_server = 0;
  std::shared_ptr<LocalMutexes> local_mutexes;
};

class Lock {
 public:
  virtual ~Lock() = default;

  // One attempt. kOk: the caller now holds the lock and may enter its critical section.
  virtual Task<Outcome> TryAcquire() = 0;
  // Gives the lock back. kOk: released what this client held; kFail: the lock was no longer
  // this client's (expired, overwritten), so nothing of it was touched (or, for the broken
  // variants, something was deleted that was not ours: the history shows it).
  virtual Task<Outcome> Release() = 0;
  // Fencing token of the current hold, or -1 when the algorithm has none.
  virtual int64_t fence() const { return -1; }
  // Hint for the retry policy after a failed attempt: how long until the lock may be free,
  // in ms, or -1 when unknown (Redlock returns its random retry delay here).
  virtual int64_t retry_hint_ms() const { return -1; }
};

struct AlgorithmInfo {
  std::string name;
  std::string summary;   // one line, for `locklab list`
  int nodes = 1;         // Redis endpoints it needs by default (Redlock: 5)
  bool uses_ttl = true;  // false for naive (no expiry at all)
  // Whether it promises mutual exclusion among all clients of any run when nothing fails. false
  // for the baselines: `none` (no lock at all) and `local` (an in-process mutex per application
  // server, a correct lock only when every client runs on one server: app_servers = 1). Checks
  // that demand zero violations of every algorithm apply to these only.
  bool is_lock = true;
  // Its TryAcquire waits in a queue of its own in Redis and is handed the lock (fifo): a retry
  // policy's own waiting and wake-ups would only add commands.
  bool waits_in_queue = false;
  std::vector<OptionSpec> options;
  std::unique_ptr<Lock> (*make)(Env& env, const LockConfig& config) = nullptr;
};

// All algorithms, in the order `locklab list` shows them.
const std::vector<AlgorithmInfo>& Algorithms();
// nullptr when unknown.
const AlgorithmInfo* FindAlgorithm(const std::string& name);

}  // namespace locklab
