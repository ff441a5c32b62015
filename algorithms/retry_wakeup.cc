// Policies whose waiters sleep until a release wakes them, instead of polling on a timer:
//
//   pubsub: waiters SUBSCRIBE to <key>:released; a client that released PUBLISHes there; every
//           subscribed waiter wakes and tries again (and falls back to a timeout-ms sleep, so a
//           message lost before the subscription was confirmed cannot hang it).
//   queue:  waiters BLPOP <key>:wake; a client that released pushes one token there if none is
//           waiting (script notify_one). Redis serves blocked BLPOPs longest-blocked first, so a
//           release wakes exactly one waiter, in FIFO order; timeout-ms bounds each wait.
#include <algorithm>
#include <memory>
#include <string>

#include "algorithms/retry.h"

namespace locklab {
namespace {

// Queued messages a waiter discards after its own release (they announced releases it has
// already seen by holding the lock): a bound, not a loop without end.
constexpr int kMaxStaleMessages = 100'000;

class PubSub : public RetryPolicy {
 public:
  PubSub(std::string channel, int64_t timeout_ms) : channel_(std::move(channel)), timeout_ms_(timeout_ms) {}

  Task<void> Wait(Env& env, int, int64_t, int64_t) override {
    if (!subscribed_) subscribed_ = co_await env.Subscribe(0, channel_);
    if (!subscribed_) {
      co_await env.SleepMs(timeout_ms_);  // no subscription: a plain sleep
      co_return;
    }
    co_await env.WaitMessage(timeout_ms_ * 1000);
  }

  Task<void> AfterRelease(Env& env) override {
    if (subscribed_)
      for (int i = 0; i < kMaxStaleMessages && co_await env.WaitMessage(0); ++i) {
      }
    co_await env.Send(0, Command::Of("PUBLISH", channel_, "released"));
  }
  bool wakes_waiters() const override { return true; }

 private:
  std::string channel_;
  int64_t timeout_ms_;
  bool subscribed_ = false;
};

class Queue : public RetryPolicy {
 public:
  Queue(std::string wake_key, int64_t timeout_ms) : wake_key_(std::move(wake_key)), timeout_ms_(timeout_ms) {}

  Task<void> Wait(Env& env, int, int64_t, int64_t) override {
    // BLPOP takes seconds; a positive timeout (0 would block forever).
    const int64_t ms = std::max<int64_t>(timeout_ms_, 1);
    const std::string seconds = std::to_string(ms / 1000) + "." + std::to_string(1000 + ms % 1000).substr(1);
    co_await env.Send(0, Command::Of("BLPOP", wake_key_, seconds));
  }

  Task<void> AfterRelease(Env& env) override {
    co_await env.Send(0, Command::Run(Script::kNotifyOne, 1, wake_key_));
  }
  bool wakes_waiters() const override { return true; }

 private:
  std::string wake_key_;
  int64_t timeout_ms_;
};

}  // namespace

std::vector<RetryInfo> WakeupRetryPolicies() {
  return {
      {"pubsub",
       "wait for a release announced on pub/sub (<key>:released), timeout-ms at most",
       {OptionSpec::Int("timeout-ms", 200, 0, kMaxOptionMs, "longest wait for a message before trying again")},
       [](const Options& o, const std::string& key) -> std::unique_ptr<RetryPolicy> {
         return std::make_unique<PubSub>(key + ":released", RetryIntOption(o, "timeout-ms"));
       }},
      {"queue",
       "FIFO: BLPOP <key>:wake; each release wakes the longest-waiting client; timeout-ms at most",
       {OptionSpec::Int("timeout-ms", 200, 0, kMaxOptionMs, "longest wait before trying again")},
       [](const Options& o, const std::string& key) -> std::unique_ptr<RetryPolicy> {
         return std::make_unique<Queue>(key + ":wake", RetryIntOption(o, "timeout-ms"));
       }},
  };
}

}  // namespace locklab
