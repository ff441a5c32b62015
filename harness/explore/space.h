// The space `locklab explore` searches: one lock (algorithm, run settings, clients), the fault
// kinds it may inject and the ranges their magnitudes are drawn from, and what counts as a
// finding. Ranges are in ms or in units of the TTL ("0.1-3ttl", "100-3000ms").
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "algorithms/status.h"
#include "sim/fault.h"

namespace locklab {

constexpr int kMaxExploreClients = 1'000;
constexpr int64_t kMaxExploreRequests = 1'000;  // per client
constexpr int kMaxExploreFaults = 32;           // per run

// A magnitude range: [lo, hi] in ms, or in units of the TTL when ttl_units.
struct MagnitudeRange {
  double lo = 0, hi = 0;
  bool ttl_units = true;
  int64_t LoMs(int64_t ttl_ms) const;
  int64_t HiMs(int64_t ttl_ms) const;
  std::string Text() const;  // "0.1-3ttl", "100-3000ms"
};
// "LO-HI" followed by "ttl" or "ms"; 0 <= LO <= HI, finite. kInvalid names `what`.
Result<MagnitudeRange> ParseMagnitudeRange(const std::string& text, const std::string& what);

// What makes a run a finding: the report's classes (overlap, damage, stuck, releases-failed),
// and three that leave out what the faults every lock suffers explain (UnexplainedOverlaps & co.
// in candidate.h): overlap-unexplained (no holder of the pair was frozen by a client pause while
// it held), stuck-unexplained (no client paused, no client crashed within the last TTL: a
// crashed holder's key lives up to a TTL), releases-failed-unexplained (the releasing client was
// not paused during that hold).
enum class FindingClass : uint8_t {
  kOverlap,
  kOverlapUnexplained,
  kDamage,
  kStuck,
  kStuckUnexplained,
  kReleasesFailed,
  kReleasesFailedUnexplained,
};
const char* FindingClassName(FindingClass c);  // "overlap", "overlap-unexplained", "damage", ...
Result<std::vector<FindingClass>> ParseFindingClasses(const std::string& comma_list);

enum class Strategy : uint8_t { kSwarm, kTargeted, kBoth };
const char* StrategyName(Strategy s);  // "swarm", "targeted", "both"
Result<Strategy> ParseStrategy(const std::string& name);

struct ExploreSpace {
  std::string algorithm = "token";  // NAME[:opt=v,...]
  // Run fields as a scenario file's "run" takes them (retry, retry_options, workload,
  // command_timeout_ms, replica, stock, app_servers, acquire_timeout_ms, ...).
  nlohmann::json run = {{"retry", "fixed"}, {"retry_options", {{"sleep-ms", "50"}}}};
  int64_t ttl_ms = 1000;
  int clients = 3;
  int64_t requests = 2;  // per client
  std::vector<FaultAction::Kind> kinds;  // empty: no faults (the workload alone)
  int max_faults = 4;                    // per run, at least 1 when kinds are given
  // Client programs: when each starts and how long each critical section lasts.
  MagnitudeRange start{0, 1.5, true};
  MagnitudeRange hold{0.05, 0.5, true};
  // Fault times (timed faults) and magnitudes.
  MagnitudeRange at{0, 2, true};
  MagnitudeRange pause{0.1, 3, true};      // pause_client, pause_node: duration
  MagnitudeRange delay{0.1, 3, true};      // delay_message: extra one-way delay
  MagnitudeRange jump{0.1, 5, true};       // client_clock_jump, node_clock_jump: |delta|, either sign
  MagnitudeRange partition{0.1, 3, true};  // partition: duration
  MagnitudeRange failover{0, 0.5, true};   // failover: from the replica cut to the promotion
  Strategy strategy = Strategy::kBoth;
  std::vector<FindingClass> find = {FindingClass::kOverlap, FindingClass::kDamage, FindingClass::kStuck};
  double liveness_bound_ms = 0;  // stuck when a waiter has no live holder this long; 0: ttl + 2000
  int nodes = 1;                 // filled in by CheckSpace from the algorithm (and run.nodes)

  bool Finds(FindingClass c) const;
  double LivenessBoundMs() const { return liveness_bound_ms > 0 ? liveness_bound_ms : ttl_ms + 2000.0; }
  // "pause_client,crash_node" ("none" when empty).
  std::string KindsText() const;
  // One line: the space searched (algorithm, clients, kinds and their ranges, strategy).
  std::string Text() const;
  nlohmann::json ToJson() const;
};

// The ranges a space has, by flag name: start, hold, at, pause, delay, jump, partition, failover.
MagnitudeRange* FindRange(ExploreSpace* s, const std::string& name);
const std::vector<std::string>& RangeNames();

// The range a fault kind's magnitude is drawn from (pause for pause_client and pause_node, jump
// for both clock jumps, partition, failover, delay); nullptr for kinds without one (crashes,
// restarts).
const MagnitudeRange* MagnitudeRangeOf(const ExploreSpace& s, FaultAction::Kind k);

// "pause_client,crash_node" or "none".
Result<std::vector<FaultAction::Kind>> ParseKinds(const std::string& comma_list);

// Checks the space before anything runs (the algorithm and run fields resolve, the numbers are in
// range, failover has a replica) and fills in `nodes`. kInvalid names the problem.
Status CheckSpace(ExploreSpace* s);

}  // namespace locklab
