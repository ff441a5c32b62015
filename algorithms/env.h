// Env: the only way an algorithm reaches the world (LevelDB's Env, FoundationDB's INetwork).
//
// One Env per client process. The simulator (sim/) and the real-Redis runtime (harness/real/)
// implement it; algorithms are coroutines written against it and never learn which one runs
// them. Everything an algorithm may do that depends on the world is here: send a command to
// Redis node i, sleep, yield, read this process's clocks, draw a random number, start a
// background task that belongs to this process, and subscribe to channels and wait for messages.
//
// Process semantics every implementation must honour:
//  - a paused process (stop-the-world GC) resumes none of its coroutines until the pause ends,
//    background tasks included; replies and timers that come due meanwhile are delivered after;
//  - a crashed process never resumes anything again; its frames are destroyed by the runtime;
//  - every command completes exactly once: with the node's reply, with kError when the node
//    surely did not run it (unreachable, refused), or with kTimeout when the outcome is unknown.
#pragma once

#include <coroutine>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "algorithms/command.h"
#include "algorithms/reply.h"
#include "algorithms/task.h"

namespace locklab {

class Env;

// One in-flight command. It lives in the awaiting coroutine's frame; the runtime fills `reply`
// and calls Finish() exactly once (never after the owning process crashed).
struct PendingCall {
  int node = 0;
  Command cmd;
  Reply reply;
  std::coroutine_handle<> waiter;
  int* group_left = nullptr;  // for SendAll: resume the waiter when the last call finishes

  void Finish(Reply&& r) {
    reply = std::move(r);
    if (group_left == nullptr || --*group_left == 0) waiter.resume();
  }
};

// One Subscribe in flight, in the awaiting coroutine's frame; the runtime calls Finish once.
struct SubscribeCall {
  int node = 0;
  std::string channel;
  bool ok = false;
  std::coroutine_handle<> waiter;

  void Finish(bool r) {
    ok = r;
    waiter.resume();
  }
};

// One WaitMessage in flight, in the awaiting coroutine's frame; the runtime calls Finish once.
struct MessageWait {
  int64_t timeout_us = 0;
  bool got = false;
  std::coroutine_handle<> waiter;

  void Finish(bool r) {
    got = r;
    waiter.resume();
  }
};

class Env {
 public:
  virtual ~Env() = default;

  // --- Primitives each runtime implements. Algorithms use the awaitables below instead. ---

  // Starts sending call->cmd to node call->node; the runtime calls call->Finish later, from its
  // event loop, never from inside StartCall.
  virtual void StartCall(PendingCall* call) = 0;
  // Resumes h after `us` microseconds of this process's monotonic time (0 = yield: after
  // everything else that is ready now).
  virtual void StartSleep(int64_t us, std::coroutine_handle<> h) = 0;

  // Number of Redis endpoints this client can address (1, or N for Redlock).
  virtual int node_count() const = 0;
  // Small integer naming this client in histories and reports.
  virtual int client_id() const = 0;
  // This process's monotonic clock (never jumps, may drift), microseconds.
  virtual int64_t MonotonicUs() = 0;
  // This process's wall clock (may be offset, drift and jump), microseconds since the epoch
  // of the run (the simulator starts at a fixed date so that runs are reproducible).
  virtual int64_t WallUs() = 0;
  // Seeded random source: the same seed gives the same sequence.
  virtual uint64_t Random() = 0;
  // Runs `task` in the background as part of this process (it pauses and dies with it).
  virtual void Spawn(Task<void> task) = 0;

  // Pub/sub (see Subscribe and WaitMessage below for what they promise). Both complete from
  // the event loop, never from inside the Start call. The defaults are a runtime without
  // pub/sub: a subscription cannot be made (false) and no message ever comes (false after
  // the timeout); the simulator and the real runtime override them.
  static constexpr int kMaxSubscriptions = 64;         // channels per process (all nodes)
  static constexpr int64_t kMaxQueuedMessages = 1024;  // per process; later ones are dropped
  virtual void StartSubscribe(SubscribeCall* call);
  virtual void StartWaitMessage(MessageWait* wait);

  // --- What algorithms call. ---

  struct CallAwaiter {
    Env* env;
    PendingCall call;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) {
      call.waiter = h;
      env->StartCall(&call);
    }
    Reply await_resume() { return std::move(call.reply); }
  };

  struct AllAwaiter {
    Env* env;
    std::vector<PendingCall> calls;
    int left = 0;
    bool await_ready() const noexcept { return calls.empty(); }
    void await_suspend(std::coroutine_handle<> h) {
      left = static_cast<int>(calls.size());
      for (auto& c : calls) {
        c.waiter = h;
        c.group_left = &left;
      }
      for (auto& c : calls) env->StartCall(&c);
    }
    std::vector<Reply> await_resume() {
      std::vector<Reply> out;
      out.reserve(calls.size());
      for (auto& c : calls) out.push_back(std::move(c.reply));
      return out;
    }
  };

  struct SleepAwaiter {
    Env* env;
    int64_t us;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) { env->StartSleep(us, h); }
    void await_resume() noexcept {}
  };

  struct SubscribeAwaiter {
    Env* env;
    SubscribeCall call;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) {
      call.waiter = h;
      env->StartSubscribe(&call);
    }
    bool await_resume() const noexcept { return call.ok; }
  };

  struct MessageAwaiter {
    Env* env;
    MessageWait wait;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) {
      wait.waiter = h;
      env->StartWaitMessage(&wait);
    }
    bool await_resume() const noexcept { return wait.got; }
  };

  // co_await env.Send(i, cmd) -> Reply.
  //
  // Blocking pop: Command::Of("BLPOP", key, "0.5") waits at the node until an element is pushed
  // to `key` (LPUSH, RPUSH, or a script such as Script::kNotifyOne) or its timeout passes. The
  // timeout is a decimal number of seconds as Redis reads it and must be positive: 0 (block
  // forever, or a negative amount Redis rounds up to 0) is refused with an error reply by both
  // runtimes. The reply is [key, element], or nil once the timeout has passed by the node's
  // clock (the simulator answers then; a real redis-server 7.0 notices it at its next cron
  // tick, up to ~100 ms later). The runtime's command timeout does not cut it short: a BLPOP's deadline is the
  // command timeout plus its own timeout. Parked BLPOPs on one key are served in the order they
  // blocked, one element each. While a BLPOP is parked, this process's later commands to the
  // same node wait behind it (one connection per client and node, and a blocked Redis
  // connection reads nothing more); a node crash ends it without a reply: kTimeout at once.
  CallAwaiter Send(int node, Command cmd) { return CallAwaiter{this, PendingCall{node, std::move(cmd), {}, {}, nullptr}}; }
  // co_await env.SendAll({{0, cmd}, {1, cmd}, ...}) -> replies in the same order, sent in parallel.
  AllAwaiter SendAll(std::vector<std::pair<int, Command>> cmds) {
    AllAwaiter a{this, {}, 0};
    a.calls.reserve(cmds.size());
    for (auto& [node, cmd] : cmds) a.calls.emplace_back(node, std::move(cmd));  // each command moved once
    return a;
  }

  // co_await env.Subscribe(node, channel) -> bool.
  // Subscribes this process to `channel` on node `node` over a connection of its own (as a
  // client library opens one for SUBSCRIBE). Completes when the subscription is confirmed
  // (true) or cannot be made (false: node unreachable, or no confirmation within the command
  // timeout). Subscribing twice to the same channel on the same node is a no-op that returns
  // true; a second Subscribe while the first is still unconfirmed shares its outcome. At most
  // kMaxSubscriptions per process (false beyond). A subscription whose connection is lost (node
  // crash, restart, failover) delivers nothing more: waiters time out; Subscribe again to make
  // a new one. Counted as a SUBSCRIBE command. PUBLISH is an ordinary command (Send).
  SubscribeAwaiter Subscribe(int node, std::string channel) {
    return SubscribeAwaiter{this, SubscribeCall{node, std::move(channel), false, {}}};
  }
  // co_await env.WaitMessage(timeout_us) -> bool.
  // Completes with true as soon as a message published on a subscribed channel is queued for
  // this process (messages that arrived since the last wait count: nothing is lost after the
  // subscription is confirmed but what injected network loss or a partition drops; the queue
  // keeps at most kMaxQueuedMessages, later ones are counted as dropped), or with false after timeout_us of this process's monotonic time (a
  // timer of this process: a pause holds it, as it holds sleeps; timeout_us <= 0 only polls).
  // Consumes one queued message. Several coroutines of one process may wait at once: each
  // message wakes the one that has waited longest.
  MessageAwaiter WaitMessage(int64_t timeout_us) { return MessageAwaiter{this, MessageWait{timeout_us, false, {}}}; }

  SleepAwaiter SleepUs(int64_t us) { return SleepAwaiter{this, us < 0 ? 0 : us}; }
  SleepAwaiter SleepMs(int64_t ms) { return SleepUs(ms * 1000); }
  SleepAwaiter Yield() { return SleepAwaiter{this, 0}; }

  int64_t MonotonicMs() { return MonotonicUs() / 1000; }
  int64_t WallMs() { return WallUs() / 1000; }
  // Uniform in [lo, hi], both inclusive; lo <= hi.
  int64_t Uniform(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Random() % static_cast<uint64_t>(hi - lo + 1));
  }
  // A random token of 2*bytes hex digits (unguessable across clients of one run).
  std::string RandomToken(int bytes = 16);
  // RandomToken()'s digits (16 bytes: the same Random() draws, the same text), held in place: no
  // allocation for a lock that sends its token and keeps it only when it acquires.
  struct TokenText {
    char digits[32];
    std::string_view view() const { return {digits, sizeof digits}; }
  };
  TokenText RandomTokenText();
};

}  // namespace locklab
