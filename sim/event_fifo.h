// EventFifo: a first-in first-out queue kept in one vector, for the simulator's queues whose
// events come in key order (the current instant's, and those put back until the one client CPU
// is free). Unlike std::deque it allocates nothing per element once warm: taking from the front
// moves a head index, and the taken prefix is dropped when the queue empties or once it is half
// the vector (amortized O(1) per element; memory stays within twice the largest backlog).
#pragma once

#include <cstddef>
#include <vector>

namespace locklab::sim {

template <typename T>
class EventFifo {
 public:
  bool empty() const { return head_ == items_.size(); }
  size_t size() const { return items_.size() - head_; }
  const T& front() const { return items_[head_]; }  // not empty()
  void push_back(const T& x) { items_.push_back(x); }
  void pop_front() {  // not empty()
    if (++head_ == items_.size()) {
      items_.clear();
      head_ = 0;
    } else if (head_ >= kCompactFrom && 2 * head_ >= items_.size()) {
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }
  void clear() {
    items_.clear();
    head_ = 0;
  }

 private:
  static constexpr size_t kCompactFrom = 4096;  // a shorter taken prefix waits for the queue to empty
  std::vector<T> items_;
  size_t head_ = 0;  // items_[head_..] are queued
};

}  // namespace locklab::sim
