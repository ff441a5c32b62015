// Exponential backoff with jitter (the AWS Architecture Blog's "Exponential Backoff And Jitter"):
//
//   full jitter:        sleep = uniform(0, min(cap, base * 2^(attempt-2)))
//   decorrelated jitter: sleep = min(cap, uniform(base, previous sleep * 3)), first = base
//
// Both spread competing clients out in time instead of letting them retry in lockstep.
#include <algorithm>
#include <memory>

#include "algorithms/retry.h"

namespace locklab {
namespace {

constexpr int kMaxDoublings = 40;  // 2^40 µs is far past any cap: no overflow

class FullJitter : public RetryPolicy {
 public:
  FullJitter(int64_t base_ms, int64_t cap_ms) : base_us_(std::max<int64_t>(base_ms, 0) * 1000), cap_us_(cap_ms * 1000) {}
  Task<void> Wait(Env& env, int attempt, int64_t, int64_t) override {
    const int doublings = std::clamp(attempt - 2, 0, kMaxDoublings);
    const int64_t ceiling_us = std::min(cap_us_, base_us_ << doublings);
    co_await env.SleepUs(ceiling_us <= 0 ? 0 : env.Uniform(0, ceiling_us));
  }

 private:
  int64_t base_us_, cap_us_;
};

class Decorrelated : public RetryPolicy {
 public:
  Decorrelated(int64_t base_ms, int64_t cap_ms) : base_us_(std::max<int64_t>(base_ms, 0) * 1000), cap_us_(cap_ms * 1000) {}
  Task<void> Wait(Env& env, int attempt, int64_t, int64_t) override {
    if (attempt <= 2) previous_us_ = base_us_;  // a new acquisition starts from the base
    const int64_t hi = std::max(base_us_, std::min(cap_us_, previous_us_ * 3));
    previous_us_ = std::min(cap_us_, env.Uniform(base_us_, hi));
    co_await env.SleepUs(previous_us_);
  }

 private:
  int64_t base_us_, cap_us_;
  int64_t previous_us_ = 0;
};

}  // namespace

std::vector<RetryInfo> BackoffRetryPolicies() {
  const OptionSpec base =
      OptionSpec::Int("base-ms", 1, 0, kMaxOptionMs, "first ceiling (full) or shortest sleep (decorrelated)");
  const OptionSpec cap = OptionSpec::Int("cap-ms", 100, 0, kMaxOptionMs, "longest sleep");
  return {
      {"backoff", "exponential backoff with full jitter: sleep uniform(0, min(cap, base*2^n))",
       {base, cap},
       [](const Options& o, const std::string&) -> std::unique_ptr<RetryPolicy> {
         return std::make_unique<FullJitter>(RetryIntOption(o, "base-ms"), RetryIntOption(o, "cap-ms"));
       }},
      {"decorrelated", "exponential backoff with decorrelated jitter: sleep min(cap, uniform(base, 3*previous))",
       {base, cap},
       [](const Options& o, const std::string&) -> std::unique_ptr<RetryPolicy> {
         return std::make_unique<Decorrelated>(RetryIntOption(o, "base-ms"), RetryIntOption(o, "cap-ms"));
       }},
  };
}

}  // namespace locklab
