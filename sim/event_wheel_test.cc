// EventWheel gives events in exactly EventHeap's order: the simulator's reports depend on it.
#include "sim/event_wheel.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "sim/event_heap.h"
#include "sim/rng.h"

namespace locklab::sim {
namespace {

struct Ev {
  int64_t t_us;
  uint64_t seq;
  unsigned __int128 key() const { return (static_cast<unsigned __int128>(t_us) << 64) | seq; }
};

// Pushes and pops as the simulator does (nothing earlier than the last event taken, sequence
// numbers only grow), with delays drawn from `max_delay_us` (some beyond the window, some at
// the same instant), checking every pop against the heap.
void CompareWithHeap(uint64_t seed, int64_t max_delay_us, int steps) {
  Rng rng(seed);
  EventWheel<Ev> wheel;
  EventHeap<Ev> heap;
  uint64_t seq = 0;
  int64_t now_us = 0;
  for (int i = 0; i < steps; ++i) {
    const int pushes = static_cast<int>(rng.Uniform(0, 3));
    for (int p = 0; p < pushes; ++p) {
      const int64_t roll = rng.Uniform(0, 9);
      const int64_t delay = roll == 0 ? 0 : roll == 1 ? rng.Uniform(0, 50 * EventWheel<Ev>::kWindowUs)
                                                      : rng.Uniform(0, max_delay_us);
      const Ev e{now_us + delay, seq++};
      wheel.push(e);
      heap.push(e);
    }
    ASSERT_EQ(wheel.size(), heap.size());
    if (heap.empty()) continue;
    ASSERT_EQ(wheel.top().t_us, heap.top().t_us) << "step " << i;
    ASSERT_EQ(wheel.top().seq, heap.top().seq) << "step " << i;
    now_us = heap.top().t_us;
    wheel.pop();
    heap.pop();
  }
  while (!heap.empty()) {
    ASSERT_FALSE(wheel.empty());
    ASSERT_EQ(wheel.top().seq, heap.top().seq);
    wheel.pop();
    heap.pop();
  }
  EXPECT_TRUE(wheel.empty());
}

TEST(EventWheel, GivesTheHeapsOrderForShortDelays) {
  for (uint64_t seed = 1; seed <= 20; ++seed) CompareWithHeap(seed, 200, 20'000);
}

TEST(EventWheel, GivesTheHeapsOrderAcrossTheWindowEdge) {
  for (uint64_t seed = 1; seed <= 20; ++seed) CompareWithHeap(seed, 3 * EventWheel<Ev>::kWindowUs, 20'000);
}

TEST(EventWheel, SameInstantKeepsPushOrderAndClearEmpties) {
  EventWheel<Ev> wheel;
  for (uint64_t s = 0; s < 10; ++s) wheel.push(Ev{7, s});
  wheel.push(Ev{5, 10});
  EXPECT_EQ(wheel.top().seq, 10u);
  wheel.pop();
  for (uint64_t s = 0; s < 10; ++s) {
    ASSERT_EQ(wheel.top().seq, s);
    wheel.pop();
  }
  EXPECT_TRUE(wheel.empty());
  wheel.push(Ev{100'000, 11});
  wheel.clear();
  EXPECT_TRUE(wheel.empty());
  wheel.push(Ev{3, 12});  // after clear() the window starts at 0 again
  EXPECT_EQ(wheel.top().t_us, 3);
  EXPECT_EQ(wheel.far_size(), 0u);
}

}  // namespace
}  // namespace locklab::sim
