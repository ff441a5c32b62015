// The retry-policy registry and the loop that pairs a lock with a policy. The policies live in
// retry_basic.cc (once, fixed, auto, random), retry_seed.cc (No1..No5 of "The right way to
// implement a distributed lock with Redis, part 2", document 000 in the README's "Sources"),
// retry_backoff.cc (exponential backoff with jitter) and retry_wakeup.cc (wait for a release).
#include "algorithms/retry.h"

namespace locklab {

std::vector<RetryInfo> BasicRetryPolicies();
std::vector<RetryInfo> SeedRetryPolicies();
std::vector<RetryInfo> BackoffRetryPolicies();
std::vector<RetryInfo> WakeupRetryPolicies();

int64_t RetryIntOption(const Options& o, const std::string& name) { return o.GetInt(name); }

const std::vector<RetryInfo>& RetryPolicies() {
  static const std::vector<RetryInfo> all = [] {
    std::vector<RetryInfo> v;
    for (auto* family : {&BasicRetryPolicies, &SeedRetryPolicies, &BackoffRetryPolicies, &WakeupRetryPolicies})
      for (auto& r : family()) v.push_back(std::move(r));
    return v;
  }();
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
