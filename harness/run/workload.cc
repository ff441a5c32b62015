#include "harness/run/workload.h"

namespace locklab {
namespace {

// The critical section. Returns after the write (or after deciding not to write, or when the
// resource refused the read: a stale fence).
Task<void> CriticalSection(Env& env, Lock& lock, WorkloadState& s, int64_t hold_ms) {
  History& h = *s.history;
  const int c = env.client_id();
  int64_t read = 0;
  if (!s.resource.Read(lock.fence(), &read)) {
    h.Add(s.runtime->TrueNowUs(), c, Ev::kReadRejected, lock.fence());
    co_return;
  }
  h.Add(s.runtime->TrueNowUs(), c, Ev::kRead, read);
  if (s.kind == WorkloadKind::kSeckill && read <= 0) co_return;  // sold out: nothing to do
  co_await env.SleepMs(hold_ms);
  const int64_t next = s.kind == WorkloadKind::kCounter ? read + 1 : read - 1;
  const int64_t t = s.runtime->TrueNowUs();
  if (!s.resource.Write(next, lock.fence())) {
    h.Add(t, c, Ev::kWriteRejected, lock.fence());
    co_return;
  }
  h.Add(t, c, Ev::kWriteOk, next);
  if (s.kind == WorkloadKind::kSeckill) h.Add(t, c, Ev::kOrder, next);
}

Ev ReleaseEvent(Outcome o) {
  return o == Outcome::kOk ? Ev::kReleaseOk : o == Outcome::kFail ? Ev::kReleaseFail : Ev::kReleaseUnknown;
}

}  // namespace

bool ParseWorkload(const std::string& name, WorkloadKind* out) {
  if (name == "counter") *out = WorkloadKind::kCounter;
  else if (name == "seckill") *out = WorkloadKind::kSeckill;
  else return false;
  return true;
}

Task<void> ClientLoop(Env& env, Lock& lock, RetryPolicy& policy, WorkloadState& s, const ClientPlan* plan) {
  History& h = *s.history;
  const int c = env.client_id();
  const int64_t hold_ms = plan != nullptr ? plan->hold_ms : s.hold_ms;
  const int64_t timeout_ms =
      plan != nullptr && plan->acquire_timeout_ms >= 0 ? plan->acquire_timeout_ms : s.acquire_timeout_ms;
  int64_t own_left = plan != nullptr ? plan->requests : 0;
  if (plan != nullptr && plan->start_ms > 0) co_await env.SleepMs(plan->start_ms);
  // Bounded: every pass consumes one request, from the client's own plan or the shared pool.
  while (plan != nullptr ? own_left > 0 : s.requests_left > 0) {
    --(plan != nullptr ? own_left : s.requests_left);
    h.Add(s.runtime->TrueNowUs(), c, Ev::kAcquireStart, s.next_request++);
    AcquireResult r = co_await AcquireWithRetry(env, lock, policy, timeout_ms);
    if (r.outcome != Outcome::kOk) {
      h.Add(s.runtime->TrueNowUs(), c, r.outcome == Outcome::kFail ? Ev::kAcquireFail : Ev::kAcquireUnknown,
            r.attempts);
      continue;
    }
    // An acquisition's ok is its enter, and leaving is starting the release: one instant each
    // (the history files' operations, jepsen_history.h, have one time for both).
    const int64_t acquired_us = s.runtime->TrueNowUs();
    h.Add(acquired_us, c, Ev::kAcquireOk, r.attempts);
    h.Add(acquired_us, c, Ev::kEnter, lock.fence());
    co_await CriticalSection(env, lock, s, hold_ms);
    const int64_t left_us = s.runtime->TrueNowUs();
    h.Add(left_us, c, Ev::kExit);
    h.Add(left_us, c, Ev::kReleaseStart);
    Outcome o = co_await lock.Release();
    h.Add(s.runtime->TrueNowUs(), c, ReleaseEvent(o));
    if (policy.wakes_waiters()) co_await policy.AfterRelease(env);
  }
}

}  // namespace locklab
