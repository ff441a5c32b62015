// naive and naive-expire: the first locks of "Solving overselling with a distributed lock: a SETNX
// implementation" and "Redis interview questions, part 2" (documents 002, 004: README "Sources").
//
//   naive:         SETNX key me          ... critical section ...   DEL key
//   naive-expire:  SETNX key me; EXPIRE key ttl (a second command) ... DEL key
//
// naive has no expiry at all: a holder that crashes keeps the lock forever. naive-expire adds
// one, but in a second command: a crash between the two leaves a lock with no TTL.
#include <string>

#include "algorithms/lock.h"

namespace locklab {
namespace {

class NaiveLock : public Lock {
 public:
  NaiveLock(Env& env, const LockConfig& cfg, bool expire) : env_(env), cfg_(cfg), expire_(expire) {}

  Task<Outcome> TryAcquire() override {
    Reply r = co_await env_.Send(0, Command::Of("SETNX", cfg_.key, "client-" + std::to_string(env_.client_id())));
    if (r.is_timeout()) co_return Outcome::kUnknown;
    if (!r.is_int(1)) co_return Outcome::kFail;
    if (expire_) {
      // EXPIRE takes whole seconds: round the TTL up.
      const int64_t ttl_s = (cfg_.ttl_ms + 999) / 1000;
      Reply e = co_await env_.Send(0, Command::Of("EXPIRE", cfg_.key, std::to_string(ttl_s)));
      (void)e;  // the documents' code ignores it too: we hold the lock either way
    }
    co_return Outcome::kOk;
  }

  Task<Outcome> Release() override {
    Reply r = co_await env_.Send(0, Command::Of("DEL", cfg_.key));
    co_return OutcomeOfOne(r);
  }

 private:
  Env& env_;
  LockConfig cfg_;
  bool expire_;
};

}  // namespace

AlgorithmInfo NaiveInfo() {
  AlgorithmInfo a;
  a.name = "naive";
  a.summary = "SETNX / DEL, no expiry: a crashed holder keeps the lock forever";
  a.uses_ttl = false;
  a.make = [](Env& env, const LockConfig& cfg) -> std::unique_ptr<Lock> {
    return std::make_unique<NaiveLock>(env, cfg, false);
  };
  return a;
}

AlgorithmInfo NaiveExpireInfo() {
  AlgorithmInfo a;
  a.name = "naive-expire";
  a.summary = "SETNX, then EXPIRE (ttl rounded up to seconds) as a second command; DEL to release";
  a.make = [](Env& env, const LockConfig& cfg) -> std::unique_ptr<Lock> {
    return std::make_unique<NaiveLock>(env, cfg, true);
  };
  return a;
}

}  // namespace locklab
