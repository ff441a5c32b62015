#include "harness/check/holds.h"

#include <algorithm>
#include <limits>

namespace locklab {

size_t ClientSlots(const std::vector<Event>& events) {
  int max_id = -1;
  for (const Event& e : events) max_id = std::max(max_id, e.client);
  return static_cast<size_t>(max_id + 1);
}

std::vector<Hold> CollectHolds(const std::vector<Event>& ev, int64_t end_us) {
  constexpr int64_t kNever = std::numeric_limits<int64_t>::min();
  const size_t slots = ClientSlots(ev);
  std::vector<int64_t> acquire_start(slots, kNever);
  std::vector<int> open(slots, -1);  // index into holds of the client's open hold
  std::vector<Hold> holds;
  for (const Event& e : ev) {
    if (e.client < 0) continue;
    size_t c = static_cast<size_t>(e.client);
    switch (e.type) {
      case Ev::kAcquireStart:
        acquire_start[c] = e.t_us;
        break;
      case Ev::kEnter:
        // A second enter without an exit continues the same hold.
        if (open[c] < 0) {
          open[c] = static_cast<int>(holds.size());
          int64_t from = acquire_start[c] == kNever ? e.t_us : acquire_start[c];
          holds.push_back(Hold{e.client, e.detail == kReadHold, from, e.t_us, e.t_us});
        }
        break;
      case Ev::kExit:
      case Ev::kCrash:
        if (open[c] >= 0) {
          holds[static_cast<size_t>(open[c])].exit_us = e.t_us;
          open[c] = -1;
        }
        break;
      default:
        break;
    }
  }
  for (int i : open) {
    if (i >= 0) holds[static_cast<size_t>(i)].exit_us = end_us;
  }
  return holds;
}

}  // namespace locklab
