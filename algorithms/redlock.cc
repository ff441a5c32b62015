// redlock: the Redis documentation's algorithm over N independent masters (sources: the untitled
// note on single-instance, master-replica and Redlock locks, and "Redis interview questions,
// part 2": documents 001 and 004 in the README's "Sources").
//
//   start = monotonic now
//   send SET key token NX PX ttl to all N nodes in parallel; count OKs
//   elapsed = monotonic now - start            (read after the last reply)
//   validity = ttl - elapsed - (ttl * 0.01 + 2)
//   acquired iff OKs >= N/2 + 1 and validity > 0   (validity-check=false skips the second test)
//   fit-work=true also asks validity >= the work the client will do in its critical section
//   otherwise: unlock all nodes (compare-and-delete) and retry after a random delay
//   release: compare-and-delete on all nodes in parallel
//
// fence=on adds Kleppmann's fencing token on top: once the quorum is reached, INCR key:fence on
// node 0 (one linearizable counter, not part of the quorum logic) and hand its value to the
// resource. No integer reply from node 0 (down, timed out, refused) fails the acquisition and
// undoes it. The validity is the one computed after the SETs: the INCR comes after that check.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "algorithms/lock.h"

namespace locklab {
namespace {

class Redlock : public Lock {
 public:
  Redlock(Env& env, const LockConfig& cfg) : env_(env), cfg_(cfg) {
    validity_check_ = cfg.options.GetBool("validity-check");
    fit_work_ = cfg.options.GetBool("fit-work");
    fence_on_ = cfg.options.Get("fence") == "on";
    retry_delay_ms_ = cfg.options.GetInt("retry-delay-ms");
    ttl_ms_text_ = std::to_string(cfg.ttl_ms);
  }

  Task<Outcome> TryAcquire() override {
    const int n = env_.node_count();
    const Env::TokenText token = env_.RandomTokenText();  // a string only once it holds the lock
    const int64_t start_us = env_.MonotonicUs();
    std::vector<std::pair<int, Command>> sets;
    sets.reserve(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
      sets.emplace_back(i, Command::Of("SET", cfg_.key, token.view(), "NX", "PX", ttl_ms_text_));
    std::vector<Reply> replies = co_await env_.SendAll(std::move(sets));
    int oks = 0;
    for (const Reply& r : replies) oks += r.is_ok() ? 1 : 0;
    validity_ms_ = ValidityLeftMs(cfg_.ttl_ms, env_.MonotonicUs() - start_us);
    if (oks >= n / 2 + 1 && (!validity_check_ || validity_ms_ > 0) && (!fit_work_ || validity_ms_ >= work_ms_)) {
      if (!fence_on_) {
        token_ = std::string(token.view());
        co_return Outcome::kOk;
      }
      Reply f = co_await env_.Send(0, Command::Of("INCR", cfg_.key + ":fence"));
      if (f.type == Reply::Type::kInteger) {
        token_ = std::string(token.view());
        fence_ = f.integer;
        co_return Outcome::kOk;
      }
    }
    co_await UnlockAll(token.view());
    co_return Outcome::kFail;
  }

  Task<Outcome> Release() override {
    const std::string token = std::move(token_);
    token_.clear();
    const int deleted = co_await UnlockAll(token);
    co_return deleted >= env_.node_count() / 2 + 1 ? Outcome::kOk : Outcome::kFail;
  }

  int64_t fence() const override { return fence_on_ ? fence_ : -1; }

  int64_t retry_hint_ms() const override { return retry_delay_ms_ == 0 ? 0 : env_.Uniform(0, retry_delay_ms_); }

 private:
  // Returns how many nodes deleted our key.
  Task<int> UnlockAll(std::string_view token) {  // the caller keeps the token's text until it resumes
    std::vector<std::pair<int, Command>> dels;
    dels.reserve(static_cast<size_t>(env_.node_count()));
    for (int i = 0; i < env_.node_count(); ++i)
      dels.emplace_back(i, Command::Run(Script::kCompareAndDelete, 1, cfg_.key, token));
    std::vector<Reply> replies = co_await env_.SendAll(std::move(dels));
    int deleted = 0;
    for (const Reply& r : replies) deleted += r.is_int(1) ? 1 : 0;
    co_return deleted;
  }

  Env& env_;
  LockConfig cfg_;
  bool validity_check_ = true;
  bool fit_work_ = false;
  bool fence_on_ = false;
  int64_t fence_ = -1;  // fence=on: the INCR's value for the current hold
  int64_t retry_delay_ms_ = 200;
  int64_t validity_ms_ = 0;
  std::string ttl_ms_text_;  // the SET's PX argument, written once
  std::string token_;
};

}  // namespace

AlgorithmInfo RedlockInfo() {
  AlgorithmInfo a;
  a.name = "redlock";
  a.summary = "quorum of N/2+1 independent masters, validity = ttl - elapsed - (ttl*0.01 + 2 ms)";
  a.nodes = 5;
  a.options = {
      OptionSpec::Bool("validity-check", true, "reject a quorum reached after the keys may have expired"),
      OptionSpec::Int("retry-delay-ms", 200, 0, kMaxOptionMs,
                      "retry after a random delay in [0, this] (with retry policy auto)"),
      FitWorkOption(),
      OptionSpec::Enum(
          "fence", {"off", "on"},
          "after reaching a quorum, INCR <key>:fence on node 0 (one linearizable counter, not part of the quorum "
          "logic) and hand its value to the resource as the fencing token; if node 0 does not answer the "
          "acquisition fails and is undone"),
  };
  a.make = [](Env& env, const LockConfig& cfg) -> std::unique_ptr<Lock> {
    return std::make_unique<Redlock>(env, cfg);
  };
  return a;
}

}  // namespace locklab
