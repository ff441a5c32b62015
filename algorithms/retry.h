// RetryPolicy: how a client waits between failed acquisition attempts, and the loop that
// combines a Lock with a policy under an acquisition deadline.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/env.h"
#include "algorithms/lock.h"
#include "algorithms/options.h"

namespace locklab {

class RetryPolicy {
 public:
  virtual ~RetryPolicy() = default;
  // Waits before attempt number `attempt` (2, 3, ...). `waited_us` is how long this acquisition
  // has been going on (monotonic). `hint_ms` is the lock's retry_hint_ms(). May return without
  // suspending (a spin: the next attempt follows at once).
  virtual Task<void> Wait(Env& env, int attempt, int64_t waited_us, int64_t hint_ms) = 0;
  // false: give up after the first attempt (policy "once").
  virtual bool retries() const { return true; }
  // Called by the workload after this client released the lock (whatever the outcome), so that
  // a policy whose waiters sleep until a release can wake them (PUBLISH, a push to a list); only
  // for policies whose wakes_waiters() is true (the others would spend a coroutine on nothing).
  virtual Task<void> AfterRelease(Env& env) { co_return; }
  virtual bool wakes_waiters() const { return false; }
};

struct RetryInfo {
  std::string name;
  std::string summary;
  std::vector<OptionSpec> options;
  // `lock_key`: the lock's key; wake-up policies derive their channel / list names from it.
  std::unique_ptr<RetryPolicy> (*make)(const Options& resolved, const std::string& lock_key) = nullptr;
};

// An integer option of a resolved policy (0 when absent or not a number: Resolve checks them).
int64_t RetryIntOption(const Options& o, const std::string& name);

const std::vector<RetryInfo>& RetryPolicies();
const RetryInfo* FindRetryPolicy(const std::string& name);

struct AcquireResult {
  Outcome outcome = Outcome::kFail;  // kOk acquired; kFail gave up; kUnknown last attempt timed out
  int attempts = 0;
};

// Tries lock.TryAcquire() until it succeeds or `timeout_ms` of this process's monotonic time
// has passed (then the last attempt's outcome decides between kFail and kUnknown).
// The number of attempts is also capped at `max_attempts` (a limit on every loop).
Task<AcquireResult> AcquireWithRetry(Env& env, Lock& lock, RetryPolicy& policy, int64_t timeout_ms,
                                     int max_attempts = 1000000);

}  // namespace locklab
