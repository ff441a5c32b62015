// token: SET key <random token> NX PX ttl; release by a Lua compare-and-delete (the
// "optimised" lock of "The right way to implement a distributed lock with Redis, part 2",
// document 000 in the README's "Sources"; the Redis documentation's single-instance lock).
//
//   acquire: SET key token NX PX ttl == OK
//   release=lua:          EVAL "if GET(key) == token then DEL(key)" (atomic)
//   release=del:          DEL key                       (deletes whoever's lock is there)
//   release=get-then-del: if GET key == token then DEL key   (two commands: racy)
//   fit-work=true: enter only if ttl - elapsed - (ttl/100 + 2 ms) covers the work to do, else
//                  compare-and-delete and fail the attempt (Redlock's validity check, one node)
#include <string>

#include "algorithms/lock.h"
#include "algorithms/token_lock.h"

namespace locklab {

TokenLock::TokenLock(Env& env, const LockConfig& cfg) : env_(env), cfg_(cfg) {
  const std::string& r = cfg.options.Get("release");
  release_ = r == "del" ? ReleaseMode::kDel : r == "get-then-del" ? ReleaseMode::kGetThenDel : ReleaseMode::kLua;
  fit_work_ = cfg.options.GetBool("fit-work");
  ttl_ms_text_ = std::to_string(cfg.ttl_ms);
}

Task<Outcome> TokenLock::TryAcquire() {
  const Env::TokenText token = env_.RandomTokenText();  // a string only once it holds the lock
  const int64_t start_us = fit_work_ ? env_.MonotonicUs() : 0;
  Reply r = co_await env_.Send(0, Command::Of("SET", cfg_.key, token.view(), "NX", "PX", ttl_ms_text_));
  if (r.is_timeout()) co_return Outcome::kUnknown;
  if (!r.is_ok()) co_return Outcome::kFail;
  if (fit_work_ && ValidityLeftMs(cfg_.ttl_ms, env_.MonotonicUs() - start_us) < work_ms_) {
    co_await env_.Send(0, Command::Run(Script::kCompareAndDelete, 1, cfg_.key, token.view()));
    co_return Outcome::kFail;
  }
  token_ = std::string(token.view());
  OnAcquired();
  co_return Outcome::kOk;
}

Task<Outcome> TokenLock::Release() {
  BeforeRelease();
  const std::string token = std::move(token_);
  token_.clear();
  switch (release_) {
    case ReleaseMode::kLua: {
      Reply r = co_await env_.Send(0, Command::Run(Script::kCompareAndDelete, 1, cfg_.key, token));
      co_return OutcomeOfOne(r);
    }
    case ReleaseMode::kDel: {
      Reply r = co_await env_.Send(0, Command::Of("DEL", cfg_.key));
      co_return OutcomeOfOne(r);
    }
    case ReleaseMode::kGetThenDel: {
      Reply g = co_await env_.Send(0, Command::Of("GET", cfg_.key));
      if (g.is_timeout()) co_return Outcome::kUnknown;
      if (!g.is_string() || g.str != token) co_return Outcome::kFail;
      Reply d = co_await env_.Send(0, Command::Of("DEL", cfg_.key));
      co_return OutcomeOfOne(d);
    }
  }
  co_return Outcome::kFail;
}

std::vector<OptionSpec> TokenLock::Specs() {
  return {OptionSpec::Enum("release", {"lua", "del", "get-then-del"},
                           "compare-and-delete in one Lua script, plain DEL, or GET then DEL")};
}

AlgorithmInfo TokenInfo() {
  AlgorithmInfo a;
  a.name = "token";
  a.summary = "SET key token NX PX ttl; release by Lua compare-and-delete";
  a.options = TokenLock::Specs();
  a.options.push_back(FitWorkOption());
  a.make = [](Env& env, const LockConfig& cfg) -> std::unique_ptr<Lock> {
    return std::make_unique<TokenLock>(env, cfg);
  };
  return a;
}

}  // namespace locklab
