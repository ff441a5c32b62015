#include "harness/run/workload.h"

#include <algorithm>

namespace locklab {
namespace {

// The critical section. Returns after the write (or after deciding not to write, or when the
// resource refused the read: a stale fence). A reader only reads.
Task<void> CriticalSection(Env& env, Lock& lock, WorkloadState& s, int64_t hold_us, bool read_only) {
  History& h = *s.history;
  const int c = env.client_id();
  int64_t read = 0;
  if (!s.resource.Read(lock.fence(), &read)) {
    h.Add(s.runtime->TrueNowUs(), c, Ev::kReadRejected, lock.fence());
    co_return;
  }
  h.Add(s.runtime->TrueNowUs(), c, Ev::kRead, read);
  if (read_only) {  // a reader: uses what it read for the hold, writes nothing
    co_await env.SleepUs(hold_us);
    co_return;
  }
  if (s.kind == WorkloadKind::kSeckill && read <= 0) co_return;  // sold out: nothing to do
  co_await env.SleepUs(hold_us);
  const int64_t next = s.kind == WorkloadKind::kCounter ? read + 1 : read - 1;
  const int64_t t = s.runtime->TrueNowUs();
  if (!s.resource.Write(next, lock.fence())) {
    h.Add(t, c, Ev::kWriteRejected, lock.fence());
    co_return;
  }
  h.Add(t, c, Ev::kWriteOk, next);
  if (s.kind == WorkloadKind::kSeckill) h.Add(t, c, Ev::kOrder, next);
}

// A lock-free sale (AlgorithmInfo::lock_free) is the whole request: its enter, order, exit
// and release are all at the instant the sale returned, so that holds have no length (no
// overlaps) and the request's latency is the sale's.
void RecordSale(const Lock& lock, WorkloadState& s, int c) {
  History& h = *s.history;
  const int64_t t = s.runtime->TrueNowUs();
  h.Add(t, c, Ev::kEnter, -1);
  if (const int64_t left = lock.stock_left(); left != Lock::kNoSale) {
    h.Add(t, c, Ev::kOrder, left);
    s.resource.value = std::min(s.resource.value, left);
  }
  h.Add(t, c, Ev::kExit);
  h.Add(t, c, Ev::kReleaseStart);
  h.Add(t, c, Ev::kReleaseOk);
}

// Re-entry (reentrant): takes the held lock `depth` more times, nested, and gives each back,
// before the critical section's work (a locked helper called from locked code). A re-entry
// that fails (the lock is no longer ours) is not released. Only the commands show in the
// history.
Task<void> Reenter(Lock& lock, int depth) {
  int taken = 0;
  for (int k = 0; k < depth; ++k) {
    if (co_await lock.TryAcquire() != Outcome::kOk) break;
    ++taken;
  }
  for (int k = 0; k < taken; ++k) co_await lock.Release();
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
  lock.set_work_ms(hold_ms + (plan == nullptr ? s.hold_spread_ms : 0));  // the longest a hold can be
  if (plan != nullptr && plan->start_ms > 0) co_await env.SleepMs(plan->start_ms);
  // Bounded: every pass consumes one request, from the client's own plan or the shared pool.
  while (plan != nullptr ? own_left > 0 : s.requests_left > 0) {
    --(plan != nullptr ? own_left : s.requests_left);
    // A reader or a writer: the plan says, or --read-ratio draws (only when set, so that other
    // runs draw nothing more from the client's random stream).
    const bool read = plan != nullptr ? plan->read
                                      : s.read_ratio > 0 && static_cast<double>(env.Random() % 1'000'000) <
                                                                s.read_ratio * 1'000'000.0;
    lock.set_read(read);
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
    if (s.lock_free) {
      RecordSale(lock, s, c);
      continue;
    }
    h.Add(acquired_us, c, Ev::kEnter, lock.fence(), read ? kReadHold : "");
    if (lock.reentries() > 0) co_await Reenter(lock, lock.reentries());
    // Holds of random length (drawn only when set: other runs draw nothing more).
    const int64_t spread_us = plan == nullptr ? s.hold_spread_ms * 1000 : 0;
    const int64_t this_hold_us = hold_ms * 1000 + (spread_us > 0 ? env.Uniform(-spread_us, spread_us) : 0);
    co_await CriticalSection(env, lock, s, this_hold_us, read);
    const int64_t left_us = s.runtime->TrueNowUs();
    h.Add(left_us, c, Ev::kExit);
    h.Add(left_us, c, Ev::kReleaseStart);
    Outcome o = co_await lock.Release();
    h.Add(s.runtime->TrueNowUs(), c, ReleaseEvent(o));
    if (policy.wakes_waiters()) co_await policy.AfterRelease(env);
  }
}

}  // namespace locklab
