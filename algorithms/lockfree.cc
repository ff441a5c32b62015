// The lock-free seckill baselines: no lock at all, the stock kept in Redis and sold one unit at
// a time by Redis itself (document 002 in the README's "Sources" ends at the question whether
// the stock needs a lock). Their throughput is the bar a lock has to justify itself against.
//
//   lockfree-lua:   EVAL stock_decrement: if tonumber(GET stock) > 0 then DECR stock
//                   (one command, atomic; -1 when sold out)
//   lockfree-watch: WATCH stock; GET stock; if > 0: MULTI; DECR stock; EXEC
//                   (optimistic: EXEC answers nil when another client wrote the stock since
//                   the WATCH; the attempt fails and the retry policy tries again)
//   lockfree-watch:watch=off: the same without WATCH, the broken check-then-act: two buyers
//                   who both read 1 both DECR, and the stock goes below zero (oversold)
//
// Each client first creates the stock with SET stock N NX (the first one wins); one request is
// one sale attempt. Every command of the WATCH variant goes on this client's one connection to
// the node, which is what WATCH and MULTI are bound to (both runtimes keep one per client).
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "algorithms/lock.h"

namespace locklab {
namespace {

class StockSeller : public Lock {
 public:
  StockSeller(Env& env, const LockConfig& cfg) : env_(env), cfg_(cfg) {}

  Task<Outcome> Release() override { co_return Outcome::kOk; }
  int64_t stock_left() const override { return left_; }

 protected:
  // SET stock N NX once per client: kOk when the stock exists now.
  Task<Outcome> EnsureStock() {
    if (stock_set_) co_return Outcome::kOk;
    Reply r = co_await env_.Send(0, Command::Of("SET", cfg_.stock_key, std::to_string(cfg_.stock), "NX"));
    if (r.is_timeout()) co_return Outcome::kUnknown;
    if (r.is_error()) co_return Outcome::kFail;
    stock_set_ = true;
    co_return Outcome::kOk;
  }

  Env& env_;
  LockConfig cfg_;
  int64_t left_ = kNoSale;

 private:
  bool stock_set_ = false;
};

class LuaSeller : public StockSeller {
 public:
  using StockSeller::StockSeller;

  Task<Outcome> TryAcquire() override {
    left_ = kNoSale;
    if (Outcome o = co_await EnsureStock(); o != Outcome::kOk) co_return o;
    Reply r = co_await env_.Send(0, Command::Run(Script::kStockDecrement, 1, cfg_.stock_key));
    if (r.is_timeout()) co_return Outcome::kUnknown;
    if (r.type != Reply::Type::kInteger) co_return Outcome::kFail;
    if (r.integer >= 0) left_ = r.integer;  // sold one; -1: none left
    co_return Outcome::kOk;
  }
};

class WatchSeller : public StockSeller {
 public:
  WatchSeller(Env& env, const LockConfig& cfg) : StockSeller(env, cfg), watch_(cfg.options.GetBool("watch")) {}

  Task<Outcome> TryAcquire() override {
    left_ = kNoSale;
    if (Outcome o = co_await EnsureStock(); o != Outcome::kOk) co_return o;
    if (watch_) {
      Reply w = co_await env_.Send(0, Command::Of("WATCH", cfg_.stock_key));
      if (w.is_timeout()) co_return co_await AbandonTransaction(env_, 0);
    }
    Reply g = co_await env_.Send(0, Command::Of("GET", cfg_.stock_key));
    if (g.is_timeout()) co_return co_await AbandonTransaction(env_, 0);
    const int64_t stock = g.is_string() ? std::strtoll(g.str.c_str(), nullptr, 10) : 0;
    if (stock <= 0) {  // sold out: nothing to buy
      if (!watch_) co_return Outcome::kOk;
      Reply u = co_await env_.Send(0, Command::Of("UNWATCH"));
      co_return u.is_timeout() ? Outcome::kUnknown : Outcome::kOk;
    }
    Reply m = co_await env_.Send(0, Command::Of("MULTI"));
    if (m.is_timeout()) co_return co_await AbandonTransaction(env_, 0);
    Reply d = co_await env_.Send(0, Command::Of("DECR", cfg_.stock_key));
    if (d.is_timeout()) co_return co_await AbandonTransaction(env_, 0);
    Reply e = co_await env_.Send(0, Command::Of("EXEC"));
    if (e.is_timeout()) co_return co_await AbandonTransaction(env_, 0);
    if (e.is_nil()) co_return Outcome::kFail;  // a watched key changed: try again
    if (e.type != Reply::Type::kArray || e.elements.size() != 1 || e.elements[0].type != Reply::Type::kInteger)
      co_return Outcome::kFail;
    left_ = e.elements[0].integer;
    co_return Outcome::kOk;
  }

  // An optimistic retry may start at once (the auto policy's delay).
  int64_t retry_hint_ms() const override { return 0; }

 private:
  bool watch_;
};

}  // namespace

AlgorithmInfo LockfreeLuaInfo() {
  AlgorithmInfo a;
  a.name = "lockfree-lua";
  a.summary = "no lock (seckill only): one Lua script decrements the stock in Redis if positive";
  a.uses_ttl = false;
  a.is_lock = false;
  a.lock_free = true;
  a.make = [](Env& env, const LockConfig& cfg) -> std::unique_ptr<Lock> { return std::make_unique<LuaSeller>(env, cfg); };
  return a;
}

AlgorithmInfo LockfreeWatchInfo() {
  AlgorithmInfo a;
  a.name = "lockfree-watch";
  a.summary = "no lock (seckill only): WATCH stock, GET, MULTI, DECR, EXEC; retried when EXEC aborts";
  a.uses_ttl = false;
  a.is_lock = false;
  a.lock_free = true;
  a.options = {OptionSpec::Bool("watch", true, "WATCH the stock before reading it (off: check-then-act, oversells)")};
  a.make = [](Env& env, const LockConfig& cfg) -> std::unique_ptr<Lock> {
    return std::make_unique<WatchSeller>(env, cfg);
  };
  return a;
}

}  // namespace locklab
