// wait: the token lock made to wait for its replica: SET key token NX PX ttl, then WAIT
// replicas wait-ms; the lock is held only if that many replicas acknowledged the SET, otherwise
// the SET is taken back (compare-and-delete) and the attempt fails. Redisson deprecated RedLock
// for a lock plus WAIT; Redis documents that WAIT does not make Redis strongly consistent.
//
//   acquire: SET key token NX PX ttl == OK, then WAIT replicas wait-ms >= replicas
//   release: the token lock's (compare-and-delete by default)
//
// What it prevents: a failover that promotes a replica which never received the lock (the
// replica-failover race: the master dies before replicating). What it does not: WAIT only
// waits; a lock acknowledged by its replica can still be lost (a replica restarted empty, a
// failover to another replica), and a holder paused past the TTL is as unprotected as ever.
// It runs on a master with one replica (--replica is implied).
#include <memory>
#include <string>

#include "algorithms/lock.h"
#include "algorithms/token_lock.h"

namespace locklab {
namespace {

class WaitLock : public TokenLock {
 public:
  WaitLock(Env& env, const LockConfig& cfg)
      : TokenLock(env, cfg), replicas_(cfg.options.GetInt("replicas")), wait_ms_(cfg.options.GetInt("wait-ms")) {}

  Task<Outcome> TryAcquire() override {
    const Outcome set = co_await TokenLock::TryAcquire();
    if (set != Outcome::kOk) co_return set;
    Reply w = co_await env_.Send(0, Command::Of("WAIT", std::to_string(replicas_), std::to_string(wait_ms_)));
    if (w.type == Reply::Type::kInteger && w.integer >= replicas_) co_return Outcome::kOk;
    // Not acknowledged (or no answer): give the key back rather than hold a lock a failover
    // could forget.
    co_await Release();
    co_return w.is_timeout() ? Outcome::kUnknown : Outcome::kFail;
  }

 private:
  int64_t replicas_;
  int64_t wait_ms_;
};

}  // namespace

AlgorithmInfo WaitInfo() {
  AlgorithmInfo a;
  a.name = "wait";
  a.summary = "token lock + WAIT replicas timeout after the SET: held only if the replica acknowledged";
  a.needs_replica = true;
  a.options = TokenLock::Specs();
  a.options.push_back(OptionSpec::Int("replicas", 1, 0, 16, "replicas that must acknowledge the SET"));
  a.options.push_back(OptionSpec::Int("wait-ms", 100, 1, kMaxOptionMs, "WAIT's timeout"));
  a.make = [](Env& env, const LockConfig& cfg) -> std::unique_ptr<Lock> { return std::make_unique<WaitLock>(env, cfg); };
  return a;
}

}  // namespace locklab
