#include "algorithms/retry.h"

#include <memory>

namespace locklab {
namespace {

int64_t IntOption(const Options& o, const std::string& name) {
  int64_t v = 0;
  std::string err;
  return o.GetInt(name, &v, &err) ? v : 0;
}

class Once : public RetryPolicy {
 public:
  Task<void> Wait(Env&, int, int64_t, int64_t) override { co_return; }
  bool retries() const override { return false; }
};

// Sleep a fixed time between attempts (the seed's No3 with sleep-ms=200).
class Fixed : public RetryPolicy {
 public:
  explicit Fixed(int64_t sleep_ms) : sleep_ms_(sleep_ms) {}
  Task<void> Wait(Env& env, int, int64_t, int64_t) override { co_await env.SleepMs(sleep_ms_); }

 private:
  int64_t sleep_ms_;
};

// The algorithm's own delay when it has one (Redlock's random retry delay), else fixed.
class Auto : public RetryPolicy {
 public:
  explicit Auto(int64_t sleep_ms) : sleep_ms_(sleep_ms) {}
  Task<void> Wait(Env& env, int, int64_t, int64_t hint_ms) override {
    co_await env.SleepMs(hint_ms >= 0 ? hint_ms : sleep_ms_);
  }

 private:
  int64_t sleep_ms_;
};

// Uniformly random sleep in [min-ms, max-ms].
class Random : public RetryPolicy {
 public:
  Random(int64_t lo, int64_t hi) : lo_(lo), hi_(hi < lo ? lo : hi) {}
  Task<void> Wait(Env& env, int, int64_t, int64_t) override { co_await env.SleepMs(env.Uniform(lo_, hi_)); }

 private:
  int64_t lo_, hi_;
};

}  // namespace

const std::vector<RetryInfo>& RetryPolicies() {
  static const std::vector<RetryInfo> all = {
      {"auto", "the algorithm's own retry delay if it has one (Redlock: random), else sleep-ms",
       {{"sleep-ms", "10", {}, "sleep between attempts when the algorithm has no delay of its own"}},
       [](const Options& o) -> std::unique_ptr<RetryPolicy> { return std::make_unique<Auto>(IntOption(o, "sleep-ms")); }},
      {"once", "a single attempt, no retry", {},
       [](const Options&) -> std::unique_ptr<RetryPolicy> { return std::make_unique<Once>(); }},
      {"fixed", "sleep a fixed time between attempts",
       {{"sleep-ms", "10", {}, "sleep between attempts"}},
       [](const Options& o) -> std::unique_ptr<RetryPolicy> { return std::make_unique<Fixed>(IntOption(o, "sleep-ms")); }},
      {"random", "sleep a uniformly random time between attempts",
       {{"min-ms", "0", {}, "shortest sleep"}, {"max-ms", "20", {}, "longest sleep"}},
       [](const Options& o) -> std::unique_ptr<RetryPolicy> {
         return std::make_unique<Random>(IntOption(o, "min-ms"), IntOption(o, "max-ms"));
       }},
  };
  return all;
}

const RetryInfo* FindRetryPolicy(const std::string& name) {
  for (const auto& r : RetryPolicies())
    if (r.name == name) return &r;
  return nullptr;
}

Task<AcquireResult> AcquireWithRetry(Env& env, Lock& lock, RetryPolicy& policy, int64_t timeout_ms,
                                     int max_attempts) {
  const int64_t start_us = env.MonotonicUs();
  const int64_t timeout_us = timeout_ms * 1000;
  AcquireResult result;
  Outcome last = Outcome::kFail;
  while (result.attempts < max_attempts) {
    ++result.attempts;
    last = co_await lock.TryAcquire();
    if (last == Outcome::kOk) {
      result.outcome = Outcome::kOk;
      co_return result;
    }
    if (!policy.retries() || env.MonotonicUs() - start_us >= timeout_us) break;
    co_await policy.Wait(env, result.attempts + 1, env.MonotonicUs() - start_us, lock.retry_hint_ms());
    if (env.MonotonicUs() - start_us >= timeout_us) break;
  }
  result.outcome = last == Outcome::kUnknown ? Outcome::kUnknown : Outcome::kFail;
  co_return result;
}

}  // namespace locklab
