// none: no lock at all, the baseline for the seckill race (source: "Solving overselling with a
// distributed lock: a SETNX implementation", document 002 in the README's "Sources": stock
// oversold without a distributed lock). Every request enters at once, after one yield, so that
// acquiring is still a suspension point and clients interleave as they would on a network. No
// Redis command.
#include <memory>

#include "algorithms/lock.h"

namespace locklab {
namespace {

class NoLock : public Lock {
 public:
  explicit NoLock(Env& env) : env_(env) {}

  Task<Outcome> TryAcquire() override {
    co_await env_.Yield();
    co_return Outcome::kOk;
  }

  Task<Outcome> Release() override { co_return Outcome::kOk; }

 private:
  Env& env_;
};

}  // namespace

AlgorithmInfo NoneInfo() {
  AlgorithmInfo a;
  a.name = "none";
  a.summary = "no lock at all (baseline): every request enters at once";
  a.uses_ttl = false;
  a.is_lock = false;
  a.make = [](Env& env, const LockConfig&) -> std::unique_ptr<Lock> { return std::make_unique<NoLock>(env); };
  return a;
}

}  // namespace locklab
