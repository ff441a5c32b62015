// fencing: a token lock that also hands out a strictly increasing fencing token (Kleppmann's
// fix). Acquisition is one script: SET lock token NX PX ttl and, if that succeeded, INCR a
// counter key; the counter's value is the fence. The protected resource remembers the highest
// fence it has seen and rejects writes that carry a lower one, so a holder that was paused past
// its TTL cannot damage what its successor wrote.
#include <memory>
#include <string>

#include "algorithms/lock.h"

namespace locklab {
namespace {

class FencingLock : public Lock {
 public:
  FencingLock(Env& env, const LockConfig& cfg) : env_(env), cfg_(cfg) {}

  Task<Outcome> TryAcquire() override {
    const Env::TokenText token = env_.RandomTokenText();  // a string only once it holds the lock
    Reply r = co_await env_.Send(0, Command::Run(Script::kSetNxPxIncrFence, 2, cfg_.key, cfg_.key + ":fence",
                                                 token.view(), std::to_string(cfg_.ttl_ms)));
    if (r.is_timeout()) co_return Outcome::kUnknown;
    if (r.type != Reply::Type::kInteger) co_return Outcome::kFail;
    token_ = std::string(token.view());
    fence_ = r.integer;
    co_return Outcome::kOk;
  }

  Task<Outcome> Release() override {
    const std::string token = std::move(token_);
    token_.clear();
    Reply r = co_await env_.Send(0, Command::Run(Script::kCompareAndDelete, 1, cfg_.key, token));
    co_return OutcomeOfOne(r);
  }

  int64_t fence() const override { return fence_; }

 private:
  Env& env_;
  LockConfig cfg_;
  std::string token_;
  int64_t fence_ = -1;
};

}  // namespace

AlgorithmInfo FencingInfo() {
  AlgorithmInfo a;
  a.name = "fencing";
  a.summary = "token lock + strictly increasing fencing token (INCR) checked by the protected resource";
  a.make = [](Env& env, const LockConfig& cfg) -> std::unique_ptr<Lock> {
    return std::make_unique<FencingLock>(env, cfg);
  };
  return a;
}

}  // namespace locklab
