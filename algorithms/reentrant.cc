// reentrant: a lock its owner may take again while holding it, Redisson's RLock design. The
// lock is a hash with one field, the owner's id (this client's process id and thread), whose
// value is how many times the owner holds it.
//
//   acquire (script reentrant_acquire):
//     if not EXISTS lock or HEXISTS lock owner: HINCRBY lock owner 1; PEXPIRE lock ttl -> nil (held)
//     else -> PTTL lock                               (someone else's: how long it may stay)
//   release (script reentrant_release):
//     not HEXISTS lock owner -> -1                    (no longer ours)
//     HINCRBY lock owner -1 > 0 -> PEXPIRE lock ttl   (still held by the outer levels)
//     else DEL lock                                   (the last level: free)
//   release=del (broken: released by the wrong count): a nested release DELetes the whole lock
//     while the outer level still works inside it, and another client gets in.
//
// With `depth` > 0 the workload re-enters: inside each critical section it acquires the lock
// `depth` more times and releases each again before its own work (a locked helper called from
// locked code), then the outer release frees it.
#include <memory>
#include <string>

#include "algorithms/lock.h"

namespace locklab {
namespace {

class ReentrantLock : public Lock {
 public:
  ReentrantLock(Env& env, const LockConfig& cfg)
      : env_(env),
        cfg_(cfg),
        owner_(env.RandomToken(8) + ":" + std::to_string(env.client_id())),
        depth_(static_cast<int>(cfg.options.GetInt("depth"))),
        release_del_(cfg.options.Get("release") == "del") {}

  Task<Outcome> TryAcquire() override {
    Reply r = co_await env_.Send(
        0, Command::Run(Script::kReentrantAcquire, 1, cfg_.key, owner_, std::to_string(cfg_.ttl_ms)));
    if (r.is_timeout()) co_return Outcome::kUnknown;
    // Someone else's: the reply is its PTTL, not used as a retry hint (waiting out the whole
    // TTL would leave the lock idle after an early release).
    if (!r.is_nil()) co_return Outcome::kFail;
    ++held_;
    co_return Outcome::kOk;
  }

  Task<Outcome> Release() override {
    const int level = held_;
    held_ = held_ > 0 ? held_ - 1 : 0;
    if (release_del_ && level > 1) {  // the broken variant's nested release
      Reply d = co_await env_.Send(0, Command::Of("DEL", cfg_.key));
      co_return OutcomeOfOne(d);
    }
    Reply r = co_await env_.Send(
        0, Command::Run(Script::kReentrantRelease, 1, cfg_.key, owner_, std::to_string(cfg_.ttl_ms)));
    if (r.is_timeout()) co_return Outcome::kUnknown;
    co_return r.type == Reply::Type::kInteger && r.integer >= 0 ? Outcome::kOk : Outcome::kFail;
  }

  int reentries() const override { return depth_; }

 private:
  Env& env_;
  LockConfig cfg_;
  std::string owner_;  // this client's process and thread, as Redisson's "<uuid>:<thread id>"
  int depth_;
  bool release_del_;
  int held_ = 0;  // how many levels this client believes it holds
};

}  // namespace

AlgorithmInfo ReentrantInfo() {
  AlgorithmInfo a;
  a.name = "reentrant";
  a.summary = "reentrant lock (Redisson's RLock): a hash owner -> hold count, taken and given back by scripts";
  a.options = {OptionSpec::Int("depth", 1, 0, 10, "re-entries inside each critical section (nested acquire + release)"),
               OptionSpec::Enum("release", {"count", "del"},
                                "decrement the owner's count (free at 0), or DEL the whole lock on a nested release")};
  a.make = [](Env& env, const LockConfig& cfg) -> std::unique_ptr<Lock> {
    return std::make_unique<ReentrantLock>(env, cfg);
  };
  return a;
}

}  // namespace locklab
