// Drawing candidates from an explore space. Every draw comes from one sim::Rng seeded by the
// run's seed, so a run is replayed from that seed alone (`locklab explore ... --run-seed N`).
//
// swarm: each run enables a random non-empty subset of the space's fault kinds (swarm testing)
// and draws 1..max_faults faults of those kinds at random times with random magnitudes.
// targeted: PCT-like. A fault-free dry run of the same clients lists every command the algorithm
// sent (its protocol points); 1..max_faults change points are drawn among them, and each fault
// fires there: a client pause or crash right after that client sends that command (on_send), a
// delay on that very message, and the other kinds right after that command ran (the next whole
// ms), on its node.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/explore/candidate.h"
#include "harness/explore/space.h"
#include "sim/history.h"
#include "sim/rng.h"

namespace locklab {

// A command a client sent in a fault-free run.
struct ProtocolPoint {
  int client = 0;
  int node = 0;
  std::string command;  // as on_send and delay_message match it (MatchCommandName)
  int occurrence = 1;   // this client's n-th command of that name
  int64_t t_us = 0;     // when it ran at its node
  int64_t t_ms() const { return t_us / 1000; }
  int64_t next_whole_ms_us() const { return (t_ms() + 1) * 1000; }  // the first whole ms after it
};
// At most kMaxProtocolPoints, in history order.
constexpr size_t kMaxProtocolPoints = 100'000;
std::vector<ProtocolPoint> ProtocolPoints(const std::vector<Event>& events);

// The clients' programs, drawn from the space's start and hold ranges.
std::vector<ExploreClient> DrawClients(const ExploreSpace& s, sim::Rng& rng);
// The swarm strategy's faults.
std::vector<FaultAction> DrawSwarmFaults(const ExploreSpace& s, sim::Rng& rng);
// The targeted strategy's faults at `points` (swarm faults when there are none).
std::vector<FaultAction> DrawTargetedFaults(const ExploreSpace& s, const std::vector<ProtocolPoint>& points,
                                            sim::Rng& rng);

}  // namespace locklab
