// RunInOrder: the runs of a sweep on several threads, their results handed back in sweep order.
//
// Each simulator run is self-contained (its own Simulator, History and RNG; the algorithm,
// retry, field and backend tables are const after main registered the backends), so runs may
// go on at the same time. The real backend starts servers and binds ports per run: callers keep
// `jobs` at 1 for it (`locklab run` does).
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "harness/run/run_spec.h"

namespace locklab {

constexpr int kMaxJobs = 256;  // threads of one sweep: more is a typing error

// The default --jobs: this machine's hardware threads (1 when the library cannot tell), at most
// kMaxJobs.
int DefaultJobs();

namespace internal {

// The finished runs waiting for consume, and the indices workers take; all under one mutex.
template <typename T>
class OrderedQueue {
 public:
  OrderedQueue(size_t count, size_t window) : count_(count), window_(window) {}

  // A worker: takes the next index while the window allows, runs it, files the result.
  void Work(const std::function<T(size_t)>& run) {
    for (;;) {
      size_t i = 0;
      {
        std::unique_lock lock(mu_);
        changed_.wait(lock, [&] { return stop_ || next_run_ >= count_ || next_run_ < next_consume_ + window_; });
        if (stop_ || next_run_ >= count_) return;
        i = next_run_++;
      }
      try {
        T r = run(i);
        std::lock_guard lock(mu_);
        done_.emplace(i, std::move(r));
      } catch (...) {
        std::lock_guard lock(mu_);
        if (!error_) error_ = std::current_exception();
        stop_ = true;
      }
      changed_.notify_all();
    }
  }
  // Run i's result once it is there; nullopt when the runs stopped (a run threw).
  std::optional<T> Take(size_t i) {
    std::unique_lock lock(mu_);
    changed_.wait(lock, [&] { return stop_ || done_.count(i) > 0; });
    if (stop_) return std::nullopt;
    auto it = done_.find(i);
    std::optional<T> r(std::move(it->second));
    done_.erase(it);
    return r;
  }
  // consume(i) returned (or threw: `stop`); the window moves on.
  void Consumed(size_t i, bool stop) {
    {
      std::lock_guard lock(mu_);
      next_consume_ = i + 1;
      stop_ = stop_ || stop;
    }
    changed_.notify_all();
  }
  std::exception_ptr error() {
    std::lock_guard lock(mu_);
    return error_;
  }

 private:
  const size_t count_, window_;
  std::mutex mu_;
  std::condition_variable changed_;
  size_t next_run_ = 0, next_consume_ = 0;
  std::map<size_t, T> done_;  // at most window_ entries
  std::exception_ptr error_;
  bool stop_ = false;
};

}  // namespace internal

// Calls run(i) for every i in [0, count) on min(jobs, count) threads, and consume(i, result) on
// the calling thread for i = 0, 1, 2, ... in that order, each as soon as runs 0..i are done.
// jobs <= 1: run and consume alternate on the calling thread, no thread is started.
// At most `window_runs` results (at least `jobs`) wait for consume at a time: a thread does not
// start run i before consume has been called for i - window_runs. `run` must be safe to call
// from several threads at once; `consume` is never called concurrently. An exception from
// either stops the remaining runs (those under way finish) and is rethrown here.
// T: what a run gives (a RunResult, or more that a worker computes beside it).
template <typename T>
void RunInOrder(size_t count, int jobs, size_t window_runs, const std::function<T(size_t)>& run,
                const std::function<void(size_t, T&&)>& consume) {
  const size_t threads = std::min(count, static_cast<size_t>(std::clamp(jobs, 1, kMaxJobs)));
  if (threads <= 1) {
    for (size_t i = 0; i < count; ++i) consume(i, run(i));
    return;
  }
  internal::OrderedQueue<T> q(count, std::max(window_runs, threads));
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t) pool.emplace_back([&] { q.Work(run); });
  std::exception_ptr error;
  for (size_t i = 0; i < count && !error; ++i) {
    std::optional<T> r = q.Take(i);
    if (!r) break;  // a run threw
    try {
      consume(i, std::move(*r));
    } catch (...) {
      error = std::current_exception();
    }
    q.Consumed(i, error != nullptr);
  }
  for (std::thread& t : pool) t.join();
  if (!error) error = q.error();
  if (error) std::rethrow_exception(error);
}

inline void RunInOrder(size_t count, int jobs, size_t window_runs, const std::function<RunResult(size_t)>& run,
                       const std::function<void(size_t, RunResult&&)>& consume) {
  RunInOrder<RunResult>(count, jobs, window_runs, run, consume);
}

}  // namespace locklab
