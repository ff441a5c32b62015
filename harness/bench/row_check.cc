// Judging a bench-peers row: see row_check.h.
#include "harness/bench/row_check.h"

#include <algorithm>
#include <limits>
#include <set>

namespace locklab {
namespace {

// Every request's wait, from acquire_start to acquire_ok or to giving up, in ms; and the first
// acquire_start (-1: none).
std::vector<double> Waits(const std::vector<Event>& events, int64_t* first_start_us) {
  std::map<int, int64_t> started;
  std::vector<double> waits;
  *first_start_us = -1;
  for (const Event& e : events) {
    if (e.type == Ev::kAcquireStart) {
      started[e.client] = e.t_us;
      if (*first_start_us < 0) *first_start_us = e.t_us;
    } else if (e.type == Ev::kAcquireOk || e.type == Ev::kAcquireFail || e.type == Ev::kAcquireUnknown) {
      auto it = started.find(e.client);
      if (it == started.end()) continue;
      waits.push_back(static_cast<double>(e.t_us - it->second) / 1000.0);
      started.erase(it);
    }
  }
  return waits;
}

}  // namespace

RowCheck JudgeEvents(const std::vector<Event>& events, const JudgeInput& in) {
  RowCheck r;
  const int64_t end_us = events.empty() ? 0 : events.back().t_us;
  History all(std::numeric_limits<size_t>::max());
  for (const Event& e : events) all.Add(e.t_us, e.client, e.type, e.value, e.detail);
  CheckInput ci;
  ci.end_us = end_us;
  ci.counter_initial = in.counter_known ? in.counter_initial : 0;
  ci.counter_final = in.counter_known ? in.counter_final : 0;
  ci.lock_of_client = in.key_of_client;  // mutual exclusion among the clients of each key
  r.check = CheckAll(all, ci);
  r.counter_judged = in.counter_known;
  r.lost_updates = in.counter_known ? r.check.resource.lost_updates : 0;
  r.acquired = r.check.liveness.acquired;
  r.failed = r.check.liveness.failed + r.check.liveness.unknown;
  r.releases_failed = r.check.liveness.releases_failed + r.check.liveness.releases_unknown;
  r.acquire = r.check.latency.acquire;
  int64_t first_start_us = -1;
  r.wait = Summarize(Waits(events, &first_start_us));
  r.span_s = first_start_us < 0 ? 0 : static_cast<double>(end_us - first_start_us) / 1e6;
  r.rate_per_s = r.span_s > 0 ? static_cast<double>(r.acquired) / r.span_s : 0;
  return r;
}


CommandDelta CommandStatsDelta(const std::vector<std::map<std::string, int64_t>>& before,
                               const std::vector<std::map<std::string, int64_t>>& after,
                               const std::vector<std::string>& exclude) {
  CommandDelta d;
  const std::set<std::string> skip(exclude.begin(), exclude.end());
  static const std::map<std::string, int64_t> kEmpty;
  for (size_t i = 0; i < after.size(); ++i) {
    const auto& b = i < before.size() ? before[i] : kEmpty;
    for (const auto& [name, calls] : after[i]) {
      if (skip.count(name) > 0) continue;
      auto it = b.find(name);
      int64_t n = calls - (it == b.end() ? 0 : it->second);
      if (n < 0) {  // the server's counters started again (restart, CONFIG RESETSTAT)
        d.counter_went_back = true;
        n = calls;
      }
      if (n == 0) continue;
      d.by_name[name] += n;
      d.total += n;
    }
  }
  return d;
}

}  // namespace locklab
