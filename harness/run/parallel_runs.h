// RunInOrder: the runs of a sweep on several threads, their results handed back in sweep order.
//
// Each simulator run is self-contained (its own Simulator, History and RNG; the algorithm,
// retry, field and backend tables are const after main registered the backends), so runs may
// go on at the same time. The real backend starts servers and binds ports per run: callers keep
// `jobs` at 1 for it (`locklab run` does).
#pragma once

#include <cstddef>
#include <functional>

#include "harness/run/run_spec.h"

namespace locklab {

constexpr int kMaxJobs = 256;  // threads of one sweep: more is a typing error

// The default --jobs: this machine's hardware threads (1 when the library cannot tell), at most
// kMaxJobs.
int DefaultJobs();

// Calls run(i) for every i in [0, count) on min(jobs, count) threads, and consume(i, result) on
// the calling thread for i = 0, 1, 2, ... in that order, each as soon as runs 0..i are done.
// jobs <= 1: run and consume alternate on the calling thread, no thread is started.
// At most `window_runs` results (at least `jobs`) wait for consume at a time: a thread does not
// start run i before consume has been called for i - window_runs. `run` must be safe to call
// from several threads at once; `consume` is never called concurrently. An exception from
// either stops the remaining runs (those under way finish) and is rethrown here.
void RunInOrder(size_t count, int jobs, size_t window_runs, const std::function<RunResult(size_t)>& run,
                const std::function<void(size_t, RunResult&&)>& consume);

}  // namespace locklab
