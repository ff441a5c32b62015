// The plain policies: a single attempt, a fixed sleep, the algorithm's own delay, a random sleep.
#include <memory>

#include "algorithms/retry.h"

namespace locklab {
namespace {

class Once : public RetryPolicy {
 public:
  Task<void> Wait(Env&, int, int64_t, int64_t) override { co_return; }
  bool retries() const override { return false; }
};

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

class Random : public RetryPolicy {
 public:
  Random(int64_t lo, int64_t hi) : lo_(lo), hi_(hi < lo ? lo : hi) {}
  Task<void> Wait(Env& env, int, int64_t, int64_t) override { co_await env.SleepMs(env.Uniform(lo_, hi_)); }

 private:
  int64_t lo_, hi_;
};

}  // namespace

std::vector<RetryInfo> BasicRetryPolicies() {
  return {
      {"auto",
       "the algorithm's own retry delay if it has one (Redlock: random), else sleep-ms",
       {OptionSpec::Int("sleep-ms", 10, 0, kMaxOptionMs,
                        "sleep between attempts when the algorithm has no delay of its own")},
       [](const Options& o, const std::string&) -> std::unique_ptr<RetryPolicy> {
         return std::make_unique<Auto>(RetryIntOption(o, "sleep-ms"));
       }},
      {"once",
       "a single attempt, no retry",
       {},
       [](const Options&, const std::string&) -> std::unique_ptr<RetryPolicy> { return std::make_unique<Once>(); }},
      {"fixed",
       "sleep a fixed time between attempts",
       {OptionSpec::Int("sleep-ms", 10, 0, kMaxOptionMs, "sleep between attempts")},
       [](const Options& o, const std::string&) -> std::unique_ptr<RetryPolicy> {
         return std::make_unique<Fixed>(RetryIntOption(o, "sleep-ms"));
       }},
      {"random",
       "sleep a uniformly random time between attempts",
       {OptionSpec::Int("min-ms", 0, 0, kMaxOptionMs, "shortest sleep"),
        OptionSpec::Int("max-ms", 20, 0, kMaxOptionMs, "longest sleep")},
       [](const Options& o, const std::string&) -> std::unique_ptr<RetryPolicy> {
         return std::make_unique<Random>(RetryIntOption(o, "min-ms"), RetryIntOption(o, "max-ms"));
       }},
  };
}

}  // namespace locklab
