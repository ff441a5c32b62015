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
// The usual reading of a lock command's integer reply: a timeout is unknown, 1 is done, anything
// else (0, nil, an error) failed.
Outcome OutcomeOfOne(const Reply& r);
// An optimistic transaction (WATCH ... MULTI ... EXEC) whose reply never came: the connection
// may still be inside MULTI or watching. Sends DISCARD (ends a MULTI and its WATCH) and UNWATCH
// (a WATCH alone) on connection `node`, whatever they answer; always kUnknown.
Task<Outcome> AbandonTransaction(Env& env, int node);

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
  // The lock-free seckill baselines only: the stock's key in Redis and the initial stock, which
  // each client sets with SET NX before its first sale (the first one wins).
  std::string stock_key = "locklab:stock";
  int64_t stock = 0;
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
  // The next acquisition is for reading (a shared hold) or writing; only rwlock tells them apart
  // (the others take their one exclusive lock either way).
  virtual void set_read(bool read) {}
  // The work the client will do in the critical section it is acquiring for (its hold, or the
  // longest hold a spread can draw), in ms; the workload sets it once, before the client's first
  // acquisition (it is the same for every request of a client). Locks
  // with fit-work=true enter only when the lease left after acquiring covers it.
  void set_work_ms(int64_t work_ms) { work_ms_ = work_ms; }
  // Re-entry (reentrant): after entering, the workload acquires this many more times, nested,
  // inside its critical section, and releases each before it leaves (0: no re-entry).
  virtual int reentries() const { return 0; }
  // The lock-free seckill baselines (AlgorithmInfo::lock_free): a kOk TryAcquire is a whole
  // request, a sale attempted in Redis; this is the stock left after the unit it sold (below
  // zero when a broken variant oversold), or kNoSale when it sold nothing (sold out). There is
  // nothing to release.
  static constexpr int64_t kNoSale = INT64_MIN;
  virtual int64_t stock_left() const { return kNoSale; }

 protected:
  int64_t work_ms_ = 0;
};

// The lease left after an acquisition that took elapsed_us on the client's monotonic clock, as
// Redlock's description computes it: ttl - elapsed - (ttl/100 + 2 ms) allowed for clock drift.
int64_t ValidityLeftMs(int64_t ttl_ms, int64_t elapsed_us);
// fit-work=true: after acquiring, enter only if ValidityLeftMs covers the work to do
// (Lock::set_work_ms); otherwise give the lock back and fail the attempt. It closes the race of
// a client frozen or delayed while it acquires, which enters with its lease (nearly) gone.
// Written into reports only when set.
OptionSpec FitWorkOption();

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
  // It runs on a master with a replica (wait): ResolveSpec turns RunSpec::replica on.
  bool needs_replica = false;
  // No lock at all but a lock-free way to sell the seckill stock kept in Redis (Lock::stock_left):
  // runs only with the seckill workload.
  bool lock_free = false;
  // The name of its option that says how many clients may hold it at once (semaphore: "permits");
  // empty: one. The mutual-exclusion checker allows that many.
  std::string holders_option;
  std::vector<OptionSpec> options;
  std::unique_ptr<Lock> (*make)(Env& env, const LockConfig& config) = nullptr;
};

// All algorithms, in the order `locklab list` shows them.
const std::vector<AlgorithmInfo>& Algorithms();
// nullptr when unknown.
const AlgorithmInfo* FindAlgorithm(const std::string& name);

}  // namespace locklab
