// Env: the only way an algorithm reaches the world (LevelDB's Env, FoundationDB's INetwork).
//
// One Env per client process. The simulator (sim/) and the real-Redis runtime (harness/)
// implement it; algorithms are coroutines written against it and never learn which one runs
// them. Everything an algorithm may do that depends on the world is here: send a command to
// Redis node i, sleep, yield, read this process's clocks, draw a random number, and start a
// background task that belongs to this process.
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

  void Finish(Reply r) {
    reply = std::move(r);
    if (group_left == nullptr || --*group_left == 0) waiter.resume();
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

  // co_await env.Send(i, cmd) -> Reply.
  CallAwaiter Send(int node, Command cmd) { return CallAwaiter{this, PendingCall{node, std::move(cmd), {}, {}, nullptr}}; }
  // co_await env.SendAll({{0, cmd}, {1, cmd}, ...}) -> replies in the same order, sent in parallel.
  AllAwaiter SendAll(std::vector<std::pair<int, Command>> cmds) {
    AllAwaiter a{this, {}, 0};
    a.calls.reserve(cmds.size());
    for (auto& [node, cmd] : cmds) a.calls.push_back(PendingCall{node, std::move(cmd), {}, {}, nullptr});
    return a;
  }
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
};

}  // namespace locklab
