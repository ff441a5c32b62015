#include "harness/run/parallel_runs.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace locklab {
namespace {

// What the workers and the consuming thread share; every field under `mu`.
struct Shared {
  std::mutex mu;
  std::condition_variable changed;
  size_t next_run = 0;      // the next index a worker takes
  size_t next_consume = 0;  // the next index consume gets
  std::map<size_t, RunResult> done;  // finished, not yet consumed: at most `window` entries
  std::exception_ptr error;          // the first exception of a run
  bool stop = false;
};

void Worker(Shared& s, size_t count, size_t window, const std::function<RunResult(size_t)>& run) {
  for (;;) {
    size_t i = 0;
    {
      std::unique_lock lock(s.mu);
      s.changed.wait(lock, [&] { return s.stop || s.next_run >= count || s.next_run < s.next_consume + window; });
      if (s.stop || s.next_run >= count) return;
      i = s.next_run++;
    }
    try {
      RunResult r = run(i);
      std::lock_guard lock(s.mu);
      s.done.emplace(i, std::move(r));
    } catch (...) {
      std::lock_guard lock(s.mu);
      if (!s.error) s.error = std::current_exception();
      s.stop = true;
    }
    s.changed.notify_all();
  }
}

}  // namespace

int DefaultJobs() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(std::min<unsigned>(n, kMaxJobs));
}

void RunInOrder(size_t count, int jobs, size_t window_runs, const std::function<RunResult(size_t)>& run,
                const std::function<void(size_t, RunResult&&)>& consume) {
  const size_t threads = std::min(count, static_cast<size_t>(std::clamp(jobs, 1, kMaxJobs)));
  if (threads <= 1) {
    for (size_t i = 0; i < count; ++i) consume(i, run(i));
    return;
  }
  const size_t window = std::max(window_runs, threads);
  Shared s;
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t) pool.emplace_back(Worker, std::ref(s), count, window, std::cref(run));
  std::exception_ptr error;
  for (size_t i = 0; i < count; ++i) {
    RunResult r;
    {
      std::unique_lock lock(s.mu);
      s.changed.wait(lock, [&] { return s.stop || s.done.count(i) > 0; });
      if (s.stop) break;
      auto it = s.done.find(i);
      r = std::move(it->second);
      s.done.erase(it);
    }
    try {
      consume(i, std::move(r));
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard lock(s.mu);
      s.next_consume = i + 1;
      if (error) s.stop = true;
    }
    s.changed.notify_all();
    if (error) break;
  }
  for (std::thread& t : pool) t.join();
  if (!error) error = s.error;
  if (error) std::rethrow_exception(error);
}

}  // namespace locklab
