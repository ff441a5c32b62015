// EventWheel: the simulator's queue of future events, smallest key (time, sequence number) first;
// the same order as EventHeap, found with less work.
//
// Most events fall due within microseconds to a few milliseconds (messages, CPU charges); a
// binary or 4-ary heap pays a sift through its depth for each of them. Here an event due within
// kWindowUs of the last one taken goes to a ring of per-microsecond lists: a push appends, a pop
// takes the head, and a bitmap finds the first non-empty microsecond. Later events (retry sleeps,
// timeouts) wait in an EventHeap; top() is the smaller of the two.
//
// What the caller must keep: keys pushed for the same time only grow (the simulator's sequence
// numbers do), so that each list is in key order; and no event is pushed earlier than the last
// one taken (one that is goes to the heap, which orders anything, so order still holds).
// T has `int64_t t_us` (>= 0) and key().
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/event_heap.h"

namespace locklab::sim {

template <typename T>
class EventWheel {
 public:
  static constexpr int64_t kWindowUs = 8192;  // a power of two, at least 4096

  EventWheel() : ends_(new Ends[kSlots]) { clear(); }

  bool empty() const { return ring_size_ == 0 && far_.empty(); }
  size_t size() const { return ring_size_ + far_.size(); }
  size_t far_size() const { return far_.size(); }

  void clear() {
    bits_.fill(0);  // ends_ is read only where a bit is set
    words_.fill(0);
    pool_.clear();
    free_.clear();
    far_.clear();
    ring_size_ = 0;
    base_us_ = 0;
    first_us_ = -1;
  }

  void push(const T& x) {
    if (x.t_us < base_us_ || x.t_us - base_us_ >= kWindowUs) {
      far_.push(x);
      return;
    }
    const int32_t id = Alloc(x);
    const size_t slot = Slot(x.t_us);
    uint64_t& word = bits_[slot >> 6];
    const uint64_t bit = uint64_t{1} << (slot & 63);
    if ((word & bit) == 0) {
      ends_[slot].head = id;
      if (word == 0) words_[slot >> 12] |= uint64_t{1} << ((slot >> 6) & 63);
      word |= bit;
    } else {
      pool_[static_cast<size_t>(ends_[slot].tail)].next = id;
    }
    ends_[slot].tail = id;
    ++ring_size_;
    if (first_us_ >= 0 && x.t_us < first_us_) first_us_ = x.t_us;
  }

  // Not empty().
  const T& top() { return FarFirst() ? far_.top() : RingTop(); }

  // Not empty().
  void pop() {
    if (FarFirst()) {
      base_us_ = far_.top().t_us;
      far_.pop();
      return;
    }
    const size_t slot = Slot(FirstUs());
    const int32_t id = ends_[slot].head;
    Node& n = pool_[static_cast<size_t>(id)];
    base_us_ = n.value.t_us;
    ends_[slot].head = n.next;
    if (n.next < 0) {
      uint64_t& word = bits_[slot >> 6];
      word &= ~(uint64_t{1} << (slot & 63));
      if (word == 0) words_[slot >> 12] &= ~(uint64_t{1} << ((slot >> 6) & 63));
      first_us_ = -1;  // found again by the next top()
    }
    free_.push_back(id);
    --ring_size_;
  }

 private:
  static constexpr size_t kSlots = static_cast<size_t>(kWindowUs);
  static constexpr size_t kWords = kSlots / 64;
  static constexpr size_t kSummary = kWords / 64;  // words_ has a bit per word of bits_
  static_assert(kSummary >= 1 && (kSlots & (kSlots - 1)) == 0);
  struct Ends {
    int32_t head, tail;
  };
  struct Node {
    T value;
    int32_t next;
  };

  static size_t Slot(int64_t t_us) { return static_cast<size_t>(t_us) & (kSlots - 1); }

  int32_t Alloc(const T& x) {
    if (!free_.empty()) {
      const int32_t id = free_.back();
      free_.pop_back();
      pool_[static_cast<size_t>(id)] = Node{x, -1};
      return id;
    }
    pool_.push_back(Node{x, -1});
    return static_cast<int32_t>(pool_.size() - 1);
  }

  const T& RingTop() { return pool_[static_cast<size_t>(ends_[Slot(FirstUs())].head)].value; }
  // Not empty(): the next event is the heap's.
  bool FarFirst() { return ring_size_ == 0 || (!far_.empty() && far_.top().key() < RingTop().key()); }

  // The first non-empty word of bits_ at or after `from`, kWords if none.
  size_t NextWord(size_t from) const {
    size_t i = from >> 6;
    uint64_t m = words_[i] & (~uint64_t{0} << (from & 63));
    while (m == 0) {  // at most kSummary words
      if (++i == kSummary) return kWords;
      m = words_[i];
    }
    return (i << 6) | static_cast<size_t>(std::countr_zero(m));
  }

  // The ring's earliest time (ring_size_ > 0). Inline: most calls find it known (top() and pop()
  // ask for the same event); the search is out of line.
  int64_t FirstUs() { return first_us_ >= 0 ? first_us_ : FindFirstUs(); }

  // Every ring event is in [base_us_, base_us_ + kWindowUs), so the first set bit from base_us_'s
  // slot on, going round once, is the ring's earliest.
  [[gnu::noinline]] int64_t FindFirstUs() {
    const size_t start = Slot(base_us_);
    size_t word = start >> 6;
    uint64_t bits = bits_[word] & (~uint64_t{0} << (start & 63));
    if (bits == 0) {  // a later word, else round to the start: its word then has only earlier bits
      word = word + 1 < kWords ? NextWord(word + 1) : kWords;
      if (word == kWords) word = NextWord(0);
      bits = bits_[word];
    }
    const size_t slot = (word << 6) | static_cast<size_t>(std::countr_zero(bits));
    first_us_ = base_us_ + static_cast<int64_t>((slot - start) & (kSlots - 1));
    return first_us_;
  }

  // Per microsecond: the list's first and last node, valid where bits_ has the slot's bit set
  // (never cleared: a run makes a new wheel, and 64 KB of stores each time would show).
  std::unique_ptr<Ends[]> ends_;
  std::array<uint64_t, kWords> bits_;  // a set bit: that microsecond's list is not empty
  std::array<uint64_t, kSummary> words_;  // a set bit: that word of bits_ is not 0
  std::vector<Node> pool_;
  std::vector<int32_t> free_;
  EventHeap<T> far_;  // due kWindowUs or more after the last event taken when pushed
  size_t ring_size_ = 0;
  int64_t base_us_ = 0;    // the last event taken's time: no ring event is earlier
  int64_t first_us_ = -1;  // the ring's earliest time, when known
};

}  // namespace locklab::sim
