// Checkers: pure functions from a History to the figures a report carries.
//
// A holder is a client between its kEnter and its kExit (or its kCrash, or the end of the
// run). A pause does not end a hold: a frozen client still believes it holds the lock. A
// reader's hold (kEnter detail kReadHold) may overlap other readers' but not a writer's.
//
// Locks: by default every client uses one shared lock. CheckInput::lock_of_client names the lock
// of each client when they use several (one key per client, or a recorded history whose
// operations name their lock); then mutual exclusion, stale writes and stuck stretches are judged
// among the clients of each lock, and the one counter is not judged (no one lock guards it).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/history.h"

namespace locklab {

struct Violation {
  int64_t start_us = 0;  // first instant with two holders of one lock
  int64_t end_us = 0;    // back to at most one holder
  std::vector<int> clients;    // every client that held during the overlap, ascending
  std::vector<Event> timeline;  // the involved clients' events around the overlap, in order
  std::string lock;             // the lock they overlapped on ("": the shared lock)
};

// With several locks: the sums (and maximum) over the locks. "Too many" holders is 2 or more,
// or more than CheckInput::holders_allowed (a semaphore's permits), with a writer among them
// (readers alone never are): a writer overlapping anyone, for a read-write lock.
struct SafetyResult {
  int64_t violations = 0;           // overlap episodes: times a lock's holder count rose to too many
  double overlap_ms_total = 0;      // total true time with too many holders, summed over the locks
  int max_concurrent_holders = 0;   // of any one lock
  // Every unordered pair of clients {a, b} (a < b) that held at the same instant while there were
  // too many holders, at least once (a zero-length hold inside another counts; a handoff at one
  // instant does not), sorted, unique. With one holder allowed: every pair that held together.
  std::vector<std::pair<int, int>> overlapping_pairs;
  std::vector<Violation> examples;  // the first few violations (by start), with timelines
};

struct ResourceResult {
  // counter workload: increments acknowledged (kWriteOk) vs how far the value moved (0 when the
  // clients use several locks: the one counter is behind no single lock)
  int64_t writes_accepted = 0;
  int64_t lost_updates = 0;
  // seckill workload
  int64_t orders = 0;
  int64_t oversold = 0;  // orders beyond the initial stock
  // fencing: a write is stale when another client of the writer's lock entered its critical
  // section after the writer entered and before the write landed.
  int64_t stale_writes_accepted = 0;
  int64_t stale_writes_rejected = 0;
  int64_t stale_reads_rejected = 0;  // reads the resource refused (a fence below one it saw)
  // rwlock: writes accepted while a reader of the writer's lock was inside its critical section
  // (what it read changed under it: damage), and how many read holds there were.
  int64_t stale_reads = 0;
  int64_t read_holds = 0;
  // The study's, the maps', the suite's and validation's damage: lost updates + oversold. (The
  // scenarios and explore also count stale writes and reads; they say so where they add them.)
  int64_t LostOrOversold() const { return lost_updates + oversold; }
};

struct LivenessResult {
  int64_t acquired = 0;
  int64_t failed = 0;
  int64_t unknown = 0;
  int64_t releases_failed = 0;   // the lock was no longer ours at release
  int64_t releases_unknown = 0;
  double stuck_ms_max = 0;       // longest stretch with a waiter and no live holder (of one lock)
};

// Where the latency CDF is sampled, in permille (0 = min, 1000 = max).
inline constexpr int kCdfPermille[] = {0,   10,  25,  50,  75,  100, 125, 150, 175, 200, 225, 250, 275, 300, 325,
                                       350, 375, 400, 425, 450, 475, 500, 525, 550, 575, 600, 625, 650, 675, 700,
                                       725, 750, 775, 800, 825, 850, 875, 900, 925, 950, 975, 990, 999, 1000};

struct LatencySummary {
  int64_t count = 0;
  double p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;  // milliseconds
  std::vector<double> cdf;  // the value at each kCdfPermille (empty when count == 0)
};

struct LatencyResult {
  LatencySummary acquire;  // kAcquireStart -> kAcquireOk
  LatencySummary hold;     // kEnter -> kExit
  LatencySummary release;  // kReleaseStart -> kReleaseOk/Fail/Unknown
  LatencySummary request;  // kAcquireStart -> end of the request (release done, or gave up)
};

// How evenly the lock was shared (the retry study).
struct FairnessResult {
  int64_t clients = 0;     // clients that started at least one request
  double jain_index = 0;   // Jain's index (sum x)^2 / (n * sum x^2) over acquisitions per client: 1 = equal
  double max_wait_ms = 0;  // the longest one request waited for the lock, acquired or given up
};

struct CheckInput {
  int64_t end_us = 0;              // when the run ended (open holds and waits end here)
  int max_examples = 3;            // violations with timelines
  int64_t timeline_margin_us = 0;  // how far before the overlap a timeline starts (0: from the
                                   // earliest involved client's kAcquireStart)
  // Resource state, from the workload:
  int64_t counter_initial = 0, counter_final = 0;
  int64_t stock_initial = 0;
  // The lock each client uses, by client number; a client not named uses the shared lock "".
  // Empty (the default): every client on one lock. A history whose operations name their lock
  // can be judged by numbering each (process, lock) pair as a client of its own.
  std::map<int, std::string> lock_of_client;
  // How many clients may hold one lock at once: 1 for a lock, the permits of a semaphore.
  int holders_allowed = 1;
};

// The rule of "too many holders" at one instant, for the checkers and the timelines: a writer
// (a hold that is not a reader's) among more than `allowed` holders; readers alone never are.
inline bool TooManyHolders(int holders, int writers, int allowed) {
  return writers > 0 && holders > (allowed < 1 ? 1 : allowed);
}

struct CheckResult {
  SafetyResult safety;
  ResourceResult resource;
  LivenessResult liveness;
  LatencyResult latency;
  FairnessResult fairness;
};

// The event types the checkers read (a History::EvBit mask). A history without the others
// gives the same figures; only the examples' timelines lose them.
uint32_t EventsCheckersRead();

SafetyResult CheckMutualExclusion(const History& h, const CheckInput& in);
ResourceResult CheckResource(const History& h, const CheckInput& in);
LivenessResult CheckLiveness(const History& h, const CheckInput& in);
LatencyResult CheckLatency(const History& h, const CheckInput& in);
FairnessResult CheckFairness(const History& h, const CheckInput& in);
CheckResult CheckAll(const History& h, const CheckInput& in);

// Percentiles by nearest rank over a copy of `samples_ms` (empty -> all zero).
LatencySummary Summarize(std::vector<double> samples_ms);

}  // namespace locklab
