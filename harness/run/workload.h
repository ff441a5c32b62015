// Workloads: what each client does in a loop: take a request, acquire (with retries), work on
// the protected resource inside the critical section, release; every step goes into the
// history in true time.
//
//   counter: read the value, think hold_ms, write value+1   (a lost update is damage)
//   seckill: read the stock, if > 0 think hold_ms, write stock-1 and record an order
//            (more orders than the initial stock is oversell); with a lock-free algorithm
//            (lockfree-lua, lockfree-watch) the stock lives in Redis and a request is one
//            sale made there, recorded as an order with the stock Redis says is left
//   either, with --read-ratio (or a scenario client's mode "read"): that share of requests only
//            reads, for hold_ms, under a read lock (Lock::set_read); its kEnter carries the
//            detail "read" (sim/history.h kReadHold), which the checkers judge as shared
//
// The protected resource lives in the harness's memory (like a database row next to the lock
// service). When the lock hands out fencing tokens, the resource checks the token on every
// access (Kleppmann's storage): a read or a write carrying a token lower than the highest it
// has seen is rejected, so two overlapping fenced holders cannot both read and then write.
// A rejected read ends the critical section without writing.
#pragma once

#include <cstdint>
#include <string>

#include "algorithms/env.h"
#include "algorithms/lock.h"
#include "algorithms/retry.h"
#include "sim/history.h"
#include "harness/run/runtime.h"
#include "harness/run/run_spec.h"

namespace locklab {

enum class WorkloadKind { kCounter, kSeckill };
bool ParseWorkload(const std::string& name, WorkloadKind* out);

struct Resource {
  int64_t value = 0;      // the counter, or the stock left
  int64_t max_fence = -1; // highest fencing token seen on an accepted read or write

  // A read with fence >= 0 below max_fence is refused (returns false); an accepted one sets
  // *out and raises max_fence to its fence, so older holders can no longer write.
  bool Read(int64_t fence, int64_t* out) {
    if (fence >= 0 && fence < max_fence) return false;
    if (fence > max_fence) max_fence = fence;
    *out = value;
    return true;
  }

  // A write with fence >= 0 below max_fence is refused (returns false).
  bool Write(int64_t new_value, int64_t fence) {
    if (fence >= 0 && fence < max_fence) return false;
    if (fence > max_fence) max_fence = fence;
    value = new_value;
    return true;
  }
};

// Shared by all clients of one run.
struct WorkloadState {
  WorkloadKind kind = WorkloadKind::kCounter;
  int64_t requests_left = 0;
  int64_t next_request = 0;
  int64_t hold_ms = 0;
  int64_t hold_spread_ms = 0;  // shared-pool holds uniform in [hold_ms - this, hold_ms + this] ms
  int64_t acquire_timeout_ms = 0;
  bool lock_free = false;  // the algorithm sells the stock in Redis (AlgorithmInfo::lock_free)
  double read_ratio = 0;   // share of requests that only read, under a read lock (rwlock)
  Resource resource;
  History* history = nullptr;
  Runtime* runtime = nullptr;
};

// The main task of one client. `lock`, `policy`, `state` and `plan` must outlive the task.
// plan == nullptr: take requests from the shared pool (state.requests_left) with state.hold_ms;
// otherwise wait plan->start_ms, then make plan->requests requests of its own.
Task<void> ClientLoop(Env& env, Lock& lock, RetryPolicy& policy, WorkloadState& state,
                      const ClientPlan* plan = nullptr);

}  // namespace locklab
