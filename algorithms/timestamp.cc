// timestamp: the v1 lock of "The right way to implement a distributed lock with Redis, part 2"
// (document 000 in the README's "Sources"). The value is the holder's expiry time on its own
// wall clock; an expired lock is taken over with GETSET (or, in the broken variant, DEL + SETNX).
//
//   expiry = now + ttl + 1
//   if SETNX key expiry == 1            -> acquired
//   current = GET key
//   if current is nil                   -> fail (the lock was just released: retry SETNX)
//   if current >= now                   -> fail (held and not expired)
//   recovery=getset: old = GETSET key expiry
//       old == current                  -> acquired
//       old is nil                      -> acquired (getset-nil=acquired) / fail (=fail)
//   recovery=del:    DEL key; SETNX key expiry == 1 -> acquired
//   recovery=watch:  WATCH key before the GET; expired: MULTI; SET key expiry; EXEC
//       EXEC answers nil (the key changed since the GET) -> fail: a loser never overwrites
//   release: if GET key == my expiry then DEL key   (two commands: a holder stalled between them
//            deletes the lock of whoever took it over; lua-release=true: one compare-and-delete)
//   fresh-expiry=true: the takeover's expiry is read from the clock when it is sent. Without it a
//            client stalled after its GET writes an expiry already past with its losing GETSET,
//            and the lock it overwrote looks expired to everyone: a second takeover overlaps.
//   fit-work=true: enter only if ttl - elapsed - (ttl/100 + 2 ms) covers the work to do, on the
//                  monotonic clock from before the first SETNX; else release and fail
//
// It trusts client clocks (skew breaks it), lets GETSET overwrite a winner's value (the
// winner then cannot recognise its lock at release), and DEL-based recovery lets two
// clients in. WATCH-based recovery does neither: the takeover is one optimistic transaction.
#include <charconv>
#include <string>

#include "algorithms/lock.h"

namespace locklab {
namespace {

bool ParseMs(const std::string& s, int64_t* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

enum class Recovery : uint8_t { kGetset, kDel, kWatch };
Recovery RecoveryOf(const std::string& name) {  // the option's values, checked by ResolveSpec
  return name == "del" ? Recovery::kDel : name == "watch" ? Recovery::kWatch : Recovery::kGetset;
}

class TimestampLock : public Lock {
 public:
  TimestampLock(Env& env, const LockConfig& cfg)
      : env_(env), cfg_(cfg),
        recovery_(RecoveryOf(cfg.options.Get("recovery"))),
        nil_acquires_(cfg.options.Get("getset-nil") == "acquired"),
        fit_work_(cfg.options.GetBool("fit-work")),
        lua_release_(cfg.options.GetBool("lua-release")),
        fresh_expiry_(cfg.options.GetBool("fresh-expiry")) {}

  Task<Outcome> TryAcquire() override {
    const int64_t start_us = fit_work_ ? env_.MonotonicUs() : 0;
    const Outcome o = co_await Attempt();
    if (o != Outcome::kOk || !fit_work_ || ValidityLeftMs(cfg_.ttl_ms, env_.MonotonicUs() - start_us) >= work_ms_)
      co_return o;
    co_await Release();
    co_return Outcome::kFail;
  }

  Task<Outcome> Release() override {
    if (mine_.empty()) co_return Outcome::kFail;
    const std::string mine = std::move(mine_);
    mine_.clear();
    if (lua_release_) {
      Reply r = co_await env_.Send(0, Command::Run(Script::kCompareAndDelete, 1, cfg_.key, mine));
      co_return OutcomeOfOne(r);
    }
    Reply cur = co_await env_.Send(0, Command::Of("GET", cfg_.key));
    if (cur.is_timeout()) co_return Outcome::kUnknown;
    if (!cur.is_string() || cur.str != mine) co_return Outcome::kFail;  // not ours any more
    Reply d = co_await env_.Send(0, Command::Of("DEL", cfg_.key));
    co_return OutcomeOfOne(d);
  }

 private:
  Task<Outcome> Attempt() {
    const std::string first = std::to_string(env_.WallMs() + cfg_.ttl_ms + 1);
    Reply r = co_await env_.Send(0, Command::Of("SETNX", cfg_.key, first));
    if (r.is_timeout()) co_return Outcome::kUnknown;
    if (r.is_int(1)) co_return Held(first);

    const bool watch = recovery_ == Recovery::kWatch;
    if (watch) {
      Reply w = co_await env_.Send(0, Command::Of("WATCH", cfg_.key));
      if (w.is_timeout()) co_return co_await AbandonTransaction(env_, 0);
    }
    Reply cur = co_await env_.Send(0, Command::Of("GET", cfg_.key));
    if (cur.is_timeout()) co_return watch ? co_await AbandonTransaction(env_, 0) : Outcome::kUnknown;
    int64_t cur_ms = 0;
    if (!cur.is_string() || !ParseMs(cur.str, &cur_ms) || cur_ms >= env_.WallMs()) {  // gone, or held
      if (watch) co_await env_.Send(0, Command::Of("UNWATCH"));
      co_return Outcome::kFail;
    }
    // fresh-expiry: the takeover writes an expiry from now, not from before the SETNX and GET.
    const std::string mine = fresh_expiry_ ? std::to_string(env_.WallMs() + cfg_.ttl_ms + 1) : first;

    if (watch) co_return co_await TakeOverWatched(mine);
    if (recovery_ == Recovery::kDel) {
      Reply d = co_await env_.Send(0, Command::Of("DEL", cfg_.key));
      if (d.is_timeout()) co_return Outcome::kUnknown;
      Reply s = co_await env_.Send(0, Command::Of("SETNX", cfg_.key, mine));
      if (s.is_timeout()) co_return Outcome::kUnknown;
      co_return s.is_int(1) ? Held(mine) : Outcome::kFail;
    }
    Reply old = co_await env_.Send(0, Command::Of("GETSET", cfg_.key, mine));
    if (old.is_timeout()) co_return Outcome::kUnknown;
    if (old.is_nil()) co_return nil_acquires_ ? Held(mine) : Outcome::kFail;
    co_return (old.is_string() && old.str == cur.str) ? Held(mine) : Outcome::kFail;
  }

  // MULTI; SET key mine; EXEC on the connection that WATCHes the key: nil when it changed.
  Task<Outcome> TakeOverWatched(const std::string& mine) {
    Reply m = co_await env_.Send(0, Command::Of("MULTI"));
    if (m.is_timeout()) co_return co_await AbandonTransaction(env_, 0);
    Reply s = co_await env_.Send(0, Command::Of("SET", cfg_.key, mine));
    if (s.is_timeout()) co_return co_await AbandonTransaction(env_, 0);
    Reply e = co_await env_.Send(0, Command::Of("EXEC"));
    if (e.is_timeout()) co_return co_await AbandonTransaction(env_, 0);
    co_return e.type == Reply::Type::kArray && e.elements.size() == 1 && e.elements[0].is_ok() ? Held(mine)
                                                                                                : Outcome::kFail;
  }

  Outcome Held(const std::string& mine) {
    mine_ = mine;
    return Outcome::kOk;
  }

  Env& env_;
  LockConfig cfg_;
  Recovery recovery_;
  bool nil_acquires_;
  bool fit_work_;
  bool lua_release_;
  bool fresh_expiry_;
  std::string mine_;  // the expiry value we wrote, while we believe we hold the lock
};

}  // namespace

AlgorithmInfo TimestampInfo() {
  AlgorithmInfo a;
  a.name = "timestamp";
  a.summary = "SETNX expiry-timestamp, GETSET to take over an expired lock (document 000's first version); trusts client clocks";
  a.options = {
      OptionSpec::Enum("recovery", {"getset", "del", "watch"},
                       "take over an expired lock by GETSET + compare, by DEL + SETNX (racy), or by WATCH, GET, "
                       "MULTI, SET, EXEC (a loser never overwrites)"),
      OptionSpec::Enum("getset-nil", {"acquired", "fail"}, "what a nil GETSET reply means"),
      FitWorkOption(),
      OptionSpec::LaterBool("lua-release", "release with one compare-and-delete script instead of GET, then DEL"),
      OptionSpec::LaterBool("fresh-expiry",
                            "a takeover (GETSET, or DEL + SETNX) writes an expiry computed when it is sent, not one "
                            "from before the SETNX and GET (a stale one written after a stall is already past)"),
  };
  a.make = [](Env& env, const LockConfig& cfg) -> std::unique_ptr<Lock> {
    return std::make_unique<TimestampLock>(env, cfg);
  };
  return a;
}

}  // namespace locklab
