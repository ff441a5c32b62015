// EventFifo takes exactly what a std::deque would: the simulator's event order depends on it.
#include "sim/event_fifo.h"

#include <gtest/gtest.h>

#include <deque>

#include "sim/rng.h"

namespace locklab::sim {
namespace {

// Every pop matches a std::deque fed the same pushes, through long backlogs (the taken prefix is
// dropped while the queue is not empty) and through emptying.
TEST(EventFifo, TakesWhatADequeTakesThroughCompactionAndEmptying) {
  EventFifo<int> fifo;
  std::deque<int> ref;
  Rng rng(7);
  int next = 0;
  for (int round = 0; round < 200'000; ++round) {
    const bool push = ref.empty() || rng.Uniform(0, 99) < (round < 100'000 ? 55 : 45);
    if (push) {
      fifo.push_back(next);
      ref.push_back(next++);
    } else {
      ASSERT_FALSE(fifo.empty());
      ASSERT_EQ(fifo.front(), ref.front());
      fifo.pop_front();
      ref.pop_front();
    }
    ASSERT_EQ(fifo.size(), ref.size());
  }
  while (!ref.empty()) {
    ASSERT_EQ(fifo.front(), ref.front());
    fifo.pop_front();
    ref.pop_front();
  }
  EXPECT_TRUE(fifo.empty());
  fifo.push_back(-1);
  EXPECT_EQ(fifo.front(), -1);
  fifo.clear();
  EXPECT_TRUE(fifo.empty());
}

}  // namespace
}  // namespace locklab::sim
