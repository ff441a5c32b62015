// fifo: a token lock with a wait queue in Redis and hand-off on release (the idea of Redisson's
// fair lock): waiters are served strictly in the order they queued, and the lock passes from
// holder to waiter inside one script, so a contended acquisition costs 3 commands.
//
//   acquire:  fifo_acquire(lock, queue, token, ttl): SET lock token NX PX ttl -> 1 (held);
//             else RPUSH queue token -> 0 (queued)
//             queued: BLPOP <lock>:wake:<token> wait-ms -> an element: the lock is ours (the
//             releaser already set it to our token, PX ttl from the hand-off)
//             no element in wait-ms: fifo_leave(lock, queue, token): the lock is ours after
//             all (handed off as we gave up) -> 1, else LREM queue token -> 0 (failed)
//   release:  fifo_release(lock, queue, token, ttl): if GET lock != token -> 0; else LPOP queue:
//             a waiter -> SET lock <its token> PX ttl, RPUSH its wake key -> 1; none -> DEL -> 1
//
// A waiter that crashed while queued is handed the lock anyway: it is lost for at most one TTL.
// Safety is the token lock's: a holder paused past its TTL still overlaps its successor. And a
// hold that ends by expiry (a paused or dead holder) wakes nobody: the queued waiters wait out
// their wait-ms before they queue again (the suite's gc-pause row shows what that costs).
#include <algorithm>
#include <memory>
#include <string>

#include "algorithms/lock.h"

namespace locklab {
namespace {

// "1.500" seconds for BLPOP (which takes seconds); at least 1 ms (0 would block forever).
std::string Seconds(int64_t ms) {
  ms = std::max<int64_t>(ms, 1);
  return std::to_string(ms / 1000) + "." + std::to_string(1000 + ms % 1000).substr(1);
}

class FifoLock : public Lock {
 public:
  FifoLock(Env& env, const LockConfig& cfg) : env_(env), cfg_(cfg), queue_(cfg.key + ":queue") {
    wait_ms_ = cfg.options.GetInt("wait-ms");
    if (wait_ms_ <= 0) wait_ms_ = cfg.ttl_ms;
  }

  Task<Outcome> TryAcquire() override {
    const Env::TokenText token = env_.RandomTokenText();  // a string only once it holds the lock
    const std::string ttl = std::to_string(cfg_.ttl_ms);
    Reply r = co_await env_.Send(0, Command::Run(Script::kFifoAcquire, 2, cfg_.key, queue_, token.view(), ttl));
    if (r.is_timeout()) co_return Outcome::kUnknown;
    if (r.is_int(1)) co_return Held(token);
    if (!r.is_int(0)) co_return Outcome::kFail;  // an error: not queued
    const std::string wake_key = cfg_.key + ":wake:" + std::string(token.view());
    Reply woken = co_await env_.Send(0, Command::Of("BLPOP", wake_key, Seconds(wait_ms_)));
    if (woken.type == Reply::Type::kArray) co_return Held(token);
    // Not woken in time (or the reply was lost): leave the queue, unless the lock came to us.
    Reply left = co_await env_.Send(0, Command::Run(Script::kFifoLeave, 2, cfg_.key, queue_, token.view()));
    if (left.is_int(1)) co_return Held(token);
    co_return left.is_timeout() ? Outcome::kUnknown : Outcome::kFail;
  }

  Task<Outcome> Release() override {
    const std::string token = std::move(token_);
    token_.clear();
    Reply r = co_await env_.Send(
        0, Command::Run(Script::kFifoRelease, 2, cfg_.key, queue_, token, std::to_string(cfg_.ttl_ms)));
    co_return OutcomeOfOne(r);
  }

 private:
  Outcome Held(const Env::TokenText& token) {
    token_ = std::string(token.view());
    return Outcome::kOk;
  }

  Env& env_;
  LockConfig cfg_;
  std::string queue_;
  int64_t wait_ms_ = 0;
  std::string token_;
};

}  // namespace

AlgorithmInfo FifoInfo() {
  AlgorithmInfo a;
  a.name = "fifo";
  a.summary = "token lock with a FIFO wait queue in Redis: release hands the lock to the next waiter (BLPOP)";
  a.waits_in_queue = true;
  a.options = {OptionSpec::Int("wait-ms", 0, 0, kMaxOptionMs,
                               "longest one attempt waits in the queue before leaving it; 0 = ttl")};
  a.make = [](Env& env, const LockConfig& cfg) -> std::unique_ptr<Lock> {
    return std::make_unique<FifoLock>(env, cfg);
  };
  return a;
}

}  // namespace locklab
