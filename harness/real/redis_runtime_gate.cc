// The real runtime's gate (every resumption of a client goes through Dispatch), its ready
// queue, sleeps, background tasks and timers (redis_runtime_impl.h).
#include "harness/real/redis_runtime_impl.h"

#include <algorithm>

namespace locklab {

// The gate: every resumption of a client's coroutine goes through Dispatch.

void RedisRuntime::Impl::Dispatch(Item item, bool direct) {
  Client& c = *clients[static_cast<size_t>(item.client)];
  if (c.crashed || run_over) {
    Drop(item);
    return;
  }
  if (c.paused) {
    if (c.held.size() >= kMaxHeld) {
      Fail("redis runtime: client " + std::to_string(c.id) + " has more than " + std::to_string(kMaxHeld) +
           " resumptions held during its pause");
      Drop(item);
      return;
    }
    if (item.deliver()) static_cast<CallRec*>(item.ptr)->in_queue = true;
    c.held.push_back(item);
    return;
  }
  if (direct) {
    Execute(item);
  } else {
    PushReady(item);
  }
}

void RedisRuntime::Impl::Execute(Item item) {
  switch (item.kind) {
    case Item::kDeliver:
      Deliver(static_cast<CallRec*>(item.ptr));
      return;
    case Item::kResume:
      std::coroutine_handle<>::from_address(item.ptr).resume();
      return;
    case Item::kMessage:
      OnMessageItem(item.client);
      return;
    case Item::kWaitTimeout: {
      Client& c = *clients[static_cast<size_t>(item.client)];
      for (auto it = c.waiters.begin(); it != c.waiters.end(); ++it) {
        if (it->id != item.id) continue;
        MessageWait* w = it->wait;
        c.waiters.erase(it);
        w->Finish(false);
        return;
      }
      return;  // a message came first
    }
    case Item::kSubscribed: {
      auto* rec = static_cast<SubRec*>(item.ptr);
      if (rec->gen != static_cast<uint32_t>(item.id >> 1)) return;  // started over since
      const bool ok = (item.id & 1) != 0;
      if (ok) rec->state = SubRec::State::kConfirmed;
      FinishSubscribers(rec, ok, /*only_due=*/false);
      return;
    }
    case Item::kSubDeadline:
      FinishSubscribers(static_cast<SubRec*>(item.ptr), false, /*only_due=*/true);
      return;
  }
}

void RedisRuntime::Impl::Drop(Item item) {
  if (!item.deliver()) return;  // the frame is destroyed with its client
  auto* rec = static_cast<CallRec*>(item.ptr);
  rec->call = nullptr;
  rec->delivered = true;
  TryFree(rec);
}

void RedisRuntime::Impl::PushReady(Item item) {
  if (ready.size() >= kMaxReady) {
    Fail("redis runtime: more than " + std::to_string(kMaxReady) + " resumptions ready at once");
    Drop(item);
    return;
  }
  if (item.deliver()) static_cast<CallRec*>(item.ptr)->in_queue = true;
  ready.push_back(item);
  ScheduleReady();
}

void RedisRuntime::Impl::ScheduleReady() {
  if (ready_scheduled) return;
  ready_scheduled = true;
  // A zero timer rather than event_active: the loop polls the sockets before it runs the
  // batch, so that clients spinning on Yield() cannot starve replies.
  const timeval zero = Tv(0);
  event_add(ready_ev, &zero);
}

void RedisRuntime::Impl::OnReadyEv(evutil_socket_t, short, void* arg) {
  auto* rt = static_cast<Impl*>(arg);
  rt->ready_scheduled = false;
  rt->RunReadyBatch();
}

void RedisRuntime::Impl::RunReadyBatch() {
  if (!running) return;  // the loop also turns before Run() (connecting): nothing resumes then
  // Only what was ready when the batch began: a yield inside it runs in the next batch.
  for (size_t n = ready.size(); n > 0 && !ready.empty(); --n) {
    Item item = ready.front();
    ready.pop_front();
    if (item.deliver()) static_cast<CallRec*>(item.ptr)->in_queue = false;
    Dispatch(item, /*direct=*/true);
  }
  if (!ready.empty()) {
    ScheduleReady();
  } else if (ready_scheduled) {
    event_del(ready_ev);  // nothing left for the zero timer: spare the loop a turn
    ready_scheduled = false;
  }
}


// Sleeps and tasks.

int64_t RedisRuntime::Impl::OnClientClockUs(int client, int64_t us) const {
  const int64_t now = TrueNowUs();
  return clients[static_cast<size_t>(client)]->clock.TrueAfterUs(now, us) - now;
}

void RedisRuntime::Impl::StartSleep(int client, int64_t us, std::coroutine_handle<> h) {
  if (us <= 0) {
    PushReady(Item{Item::kResume, client, h.address()});
    return;
  }
  const Item item{Item::kResume, client, h.address()};
  const int64_t in_us = OnClientClockUs(client, us);
  const int64_t due_us = loop_log != nullptr || wake_samples != nullptr ? TrueNowUs() + in_us : 0;
  After(in_us, [this, item, due_us] {
    SleepFired(item.client, due_us);
    Dispatch(item, /*direct=*/true);
  });
}

void RedisRuntime::Impl::SleepFired(int client, int64_t due_us) {
  if (loop_log != nullptr)
    LoopLog('T', client, (std::to_string(due_us) + " " + std::to_string(ClockUs(CLOCK_THREAD_CPUTIME_ID))).c_str());
  // A wake-up: the pass's first step, due after the last pass ended.
  if (wake_samples != nullptr && PassSteps() == 0 && due_us > pass_end_us &&
      wake_samples->size() < RedisRuntime::kMaxWakeSamples)
    wake_samples->push_back({static_cast<double>(due_us - pass_end_us), static_cast<double>(TrueNowUs() - due_us)});
  ++pass_steps[kStepTimer];
}

void RedisRuntime::Impl::Spawn(int client, Task<void> task) {
  auto& spawned = clients[static_cast<size_t>(client)]->spawned;
  std::erase_if(spawned, [](const Task<void>& t) { return t.done(); });
  if (spawned.size() >= kMaxSpawned) {
    Fail("redis runtime: client " + std::to_string(client) + " has more than " + std::to_string(kMaxSpawned) +
         " background tasks");
    return;
  }
  PushReady(Item{Item::kResume, client, task.handle().address()});
  spawned.push_back(std::move(task));
}


void RedisRuntime::Impl::After(int64_t us, std::function<void()> fn) {
  auto* l = new Later{this, nullptr, std::move(fn)};
  l->ev = event_new(base, -1, 0, &Impl::OnLater, l);
  laters.insert(l);
  const timeval tv = Tv(us);
  event_add(l->ev, &tv);
}

void RedisRuntime::Impl::OnLater(evutil_socket_t, short, void* arg) {
  auto* l = static_cast<Later*>(arg);
  Impl* rt = l->rt;
  std::function<void()> fn = std::move(l->fn);
  rt->laters.erase(l);
  event_free(l->ev);
  delete l;
  if (!rt->run_over) fn();
}


Task<void> RedisRuntime::Impl::RunMain(int client, Task<void> main) {
  co_await main;
  clients[static_cast<size_t>(client)]->main_done = true;
  if (--mains_left == 0) event_base_loopbreak(base);
}


}  // namespace locklab
