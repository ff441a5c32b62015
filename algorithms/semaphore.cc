// semaphore: a counting semaphore of `permits` holders in one sorted set, redis-semaphore's
// design (its Semaphore: the members are the holders' ids, the scores the times they acquired).
//
//   acquire (one script, semaphore_acquire):
//     ZREMRANGEBYSCORE sem -inf (now - ttl)     drop the holders whose time is up
//     if ZCARD sem < permits:
//       ZADD sem now id; PEXPIRE sem ttl        take a permit
//   release: ZREM sem id                        0 removed: the permit had expired
//
// `now` is this client's wall clock, as redis-semaphore passes Date.now(): a client whose clock
// runs ahead drops other holders before their time (the clock-skew preset shows it), and a
// holder paused past the TTL is dropped while it still believes it holds (over-admission).
#include <memory>
#include <string>

#include "algorithms/lock.h"

namespace locklab {
namespace {

class Semaphore : public Lock {
 public:
  Semaphore(Env& env, const LockConfig& cfg)
      : env_(env), cfg_(cfg), permits_(cfg.options.GetInt("permits")) {}

  Task<Outcome> TryAcquire() override {
    const Env::TokenText id = env_.RandomTokenText();  // a string only once it holds a permit
    const int64_t now_ms = env_.WallMs();
    Reply r = co_await env_.Send(
        0, Command::Run(Script::kSemaphoreAcquire, 1, cfg_.key, id.view(), std::to_string(now_ms),
                        std::to_string(now_ms - cfg_.ttl_ms), std::to_string(permits_), std::to_string(cfg_.ttl_ms)));
    if (r.is_timeout()) co_return Outcome::kUnknown;
    if (!r.is_int(1)) co_return Outcome::kFail;
    id_ = std::string(id.view());
    co_return Outcome::kOk;
  }

  Task<Outcome> Release() override {
    const std::string id = std::move(id_);
    id_.clear();
    Reply r = co_await env_.Send(0, Command::Of("ZREM", cfg_.key, id));
    co_return OutcomeOfOne(r);
  }

 private:
  Env& env_;
  LockConfig cfg_;
  int64_t permits_;
  std::string id_;  // our member of the set while we believe we hold a permit
};

}  // namespace

AlgorithmInfo SemaphoreInfo() {
  AlgorithmInfo a;
  a.name = "semaphore";
  a.summary = "counting semaphore: holders in a sorted set scored by acquire time (redis-semaphore)";
  a.holders_option = "permits";
  a.options = {OptionSpec::Int("permits", 1, 1, 10'000, "how many clients may hold it at once")};
  a.make = [](Env& env, const LockConfig& cfg) -> std::unique_ptr<Lock> {
    return std::make_unique<Semaphore>(env, cfg);
  };
  return a;
}

}  // namespace locklab
