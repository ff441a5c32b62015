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
  c.cost = LegacyCostModel();  // 2 µs per node step, nothing else
  c.command_timeout_us = timeout_us;
  return c;
}

// Runs to the end; false (and a test failure naming the error) when the run fails.
inline bool RunOk(Simulator& sim) {
  const Status s = sim.Run();
  EXPECT_TRUE(s.ok()) << s.message();
  return s.ok();
}

// Plan entries (sim/fault.h), and planning one with a test failure when it is refused.
inline FaultAction Fault(FaultAction::Kind kind, int64_t at_us, int target, int node, int64_t duration_us,
                         int64_t delta_us) {
  FaultAction f;
  f.kind = kind;
  f.at_us = at_us;
  f.target = target;
  f.node = node;
  f.duration_us = duration_us;
  f.delta_us = delta_us;
  return f;
}
inline FaultAction OnSend(FaultAction::Kind kind, int client, std::string name, int occurrence, int64_t duration_us) {
  FaultAction f = Fault(kind, 0, client, 0, duration_us, 0);
  f.on_send = std::move(name);
  f.occurrence = occurrence;
  return f;
}
inline FaultAction Delay(int client, std::string name, int occurrence, int64_t extra_us) {
  FaultAction f = Fault(FaultAction::Kind::kDelayMessage, 0, client, 0, extra_us, 0);
  f.command = std::move(name);
  f.occurrence = occurrence;
  return f;
}
inline void Plan(Simulator& sim, const FaultAction& f) {
  const Status s = sim.PlanFault(f);
  EXPECT_TRUE(s.ok()) << s.message();
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
