#include "harness/run/delayed_restart.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>

namespace locklab {
namespace {

// One node's down period as the rewritten plan has it.
struct Down {
  int64_t since_us = 0;
  std::optional<int64_t> back_us;  // when its (delayed) restart brings it back, once planned
};

}  // namespace

std::vector<FaultAction> DelayRestarts(const std::vector<FaultAction>& plan, int64_t min_down_us) {
  if (min_down_us <= 0) return plan;
  using K = FaultAction::Kind;
  std::vector<size_t> by_time(plan.size());
  std::iota(by_time.begin(), by_time.end(), 0);
  std::stable_sort(by_time.begin(), by_time.end(), [&](size_t a, size_t b) { return plan[a].at_us < plan[b].at_us; });
  std::map<int, Down> down;                     // node -> its down period, while it is down
  std::vector<std::optional<FaultAction>> out(plan.begin(), plan.end());  // nullopt: dropped
  std::vector<bool> crash_first(plan.size(), false);  // a restart of a node that was up
  for (size_t i : by_time) {
    const FaultAction& f = plan[i];
    if (f.kind != K::kCrashNode && f.kind != K::kRestartNode) continue;
    auto it = down.find(f.target);
    if (it != down.end() && it->second.back_us && f.at_us >= *it->second.back_us) {
      down.erase(it);  // back up by now
      it = down.end();
    }
    if (f.kind == K::kCrashNode) {
      if (it != down.end()) out[i].reset();  // already down: nothing more to lose
      else down[f.target].since_us = f.at_us;
      continue;
    }
    if (it == down.end()) {  // restarting a node that is up: it goes down now
      crash_first[i] = true;
      it = down.emplace(f.target, Down{f.at_us, std::nullopt}).first;
    }
    if (it->second.back_us) {  // its restart is already planned: this one adds nothing
      out[i].reset();
      continue;
    }
    it->second.back_us = std::max(f.at_us, it->second.since_us + min_down_us);
    out[i]->at_us = *it->second.back_us;
  }
  std::vector<FaultAction> result;
  for (size_t i = 0; i < plan.size(); ++i) {
    if (crash_first[i]) {
      FaultAction crash = plan[i];
      crash.kind = K::kCrashNode;
      result.push_back(crash);
    }
    if (out[i]) result.push_back(*out[i]);
  }
  return result;
}

}  // namespace locklab
