// Test helpers for the simulator's own tests: a small exact configuration (constant 100 µs
// one-way delay, 2 µs service, seed 3), running to the end, and what a client saw and when.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sim/simulator.h"

namespace locklab::sim {

inline SimConfig Config(int clients = 1, int nodes = 1, int64_t timeout_us = 50'000) {
  SimConfig c;
  c.clients = clients;
  c.nodes = nodes;
  c.seed = 3;
  c.net.mean_us = 100;
  c.service_us = 2;
  c.command_timeout_us = timeout_us;
  return c;
}

// Runs to the end; false (and a test failure naming the error) when the run fails.
inline bool RunOk(Simulator& sim) {
  std::string err;
  const bool ok = sim.Run(&err);
  EXPECT_TRUE(ok) << err;
  return ok;
}

// Replies in order, each with the true time it was seen.
struct Seen {
  std::vector<Reply> replies;
  std::vector<int64_t> at_us;
  void Add(Simulator& sim, Reply r) {
    replies.push_back(std::move(r));
    at_us.push_back(sim.now_us());
  }
};

}  // namespace locklab::sim
