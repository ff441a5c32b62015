// watchdog: the token lock plus a renewal task (Redisson's watchdog; source: "Redis
// distributed locks (2): renewing the lock so that several threads do not hold it after it
// times out", document 003 in the README's "Sources").
//
//   on acquire: spawn renew(token):
//       every renew-every-ms (default ttl/3):
//           renew=checked: EVAL "if GET(key) == token then PEXPIRE(key, ttl)"; stop when 0
//           renew=blind:   PEXPIRE key ttl        (extends whoever holds the lock)
//   on release: stop renewing (stop-on-release=true), then release as `token` does.
//
// The renewal task runs inside the client's process: a stop-the-world pause freezes it too.
#include <cstdint>
#include <memory>
#include <string>

#include "algorithms/token_lock.h"

namespace locklab {
namespace {

// Renewals per hold are bounded so that a forgotten watchdog cannot run a simulation forever.
constexpr int kMaxRenewals = 1'000'000;

class WatchdogLock : public TokenLock {
 public:
  WatchdogLock(Env& env, const LockConfig& cfg) : TokenLock(env, cfg) {
    blind_ = cfg.options.Get("renew") == "blind";
    stop_on_release_ = cfg.options.GetBool("stop-on-release");
    int64_t every = cfg.options.GetInt("renew-every-ms");
    if (every <= 0) every = cfg.ttl_ms / 3;
    every_ms_ = every > 0 ? every : 1;
  }

 protected:
  void OnAcquired() override {
    ++hold_;
    env_.Spawn(Renew(hold_, token()));
  }
  void BeforeRelease() override {
    if (stop_on_release_) ++hold_;  // the running renewal sees a newer hold and stops
  }

 private:
  Task<void> Renew(uint64_t hold, std::string token) {
    for (int i = 0; i < kMaxRenewals; ++i) {
      co_await env_.SleepMs(every_ms_);
      if (stop_on_release_ && hold != hold_) co_return;
      if (blind_) {
        co_await env_.Send(0, Command::Of("PEXPIRE", cfg_.key, std::to_string(cfg_.ttl_ms)));
        continue;
      }
      Reply r = co_await env_.Send(0, Command::Run(Script::kCompareAndPexpire, 1, cfg_.key, token,
                                                   std::to_string(cfg_.ttl_ms)));
      if (r.is_int(0)) co_return;  // the lock is no longer ours: nothing left to renew
    }
  }

  bool blind_ = false;
  bool stop_on_release_ = true;
  int64_t every_ms_ = 1;
  uint64_t hold_ = 0;  // counts acquisitions (and releases, when renewal stops on release)
};

}  // namespace

AlgorithmInfo WatchdogInfo() {
  AlgorithmInfo a;
  a.name = "watchdog";
  a.summary = "token lock + a renewal task every ttl/3 (compare-and-pexpire), frozen with its client";
  a.options = TokenLock::Specs();
  a.options.push_back(OptionSpec::Enum("renew", {"checked", "blind"}, "renew only our own token, or PEXPIRE blindly"));
  a.options.push_back(OptionSpec::Bool("stop-on-release", true, "stop renewing when the lock is released"));
  a.options.push_back(OptionSpec::Int("renew-every-ms", 0, 0, kMaxOptionMs, "renewal period; 0 = ttl/3"));
  a.make = [](Env& env, const LockConfig& cfg) -> std::unique_ptr<Lock> {
    return std::make_unique<WatchdogLock>(env, cfg);
  };
  return a;
}

}  // namespace locklab
