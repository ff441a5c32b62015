#include "harness/explore/generate.h"

#include <algorithm>
#include <map>
#include <utility>

namespace locklab {
namespace {

using K = FaultAction::Kind;

int64_t Draw(const MagnitudeRange& r, int64_t ttl_ms, sim::Rng& rng) {
  const int64_t lo = r.LoMs(ttl_ms), hi = r.HiMs(ttl_ms);
  return hi <= lo ? lo : rng.Uniform(lo, hi);
}

int Pick(int n, sim::Rng& rng) { return n <= 1 ? 0 : static_cast<int>(rng.Uniform(0, n - 1)); }

// The magnitude of a fault of kind k: duration or clock delta (either sign), in µs.
void DrawMagnitude(const ExploreSpace& s, sim::Rng& rng, FaultAction* f) {
  const MagnitudeRange* range = MagnitudeRangeOf(s, f->kind);
  if (range == nullptr) return;
  const int64_t us = Draw(*range, s.ttl_ms, rng) * 1000;
  if (f->kind == K::kClientClockJump || f->kind == K::kNodeClockJump)
    f->delta_us = rng.Chance(0.5) ? us : -us;
  else
    f->duration_us = us;
}

// The kinds one swarm run enables: each with probability 1/2, at least one.
std::vector<K> SwarmSubset(const ExploreSpace& s, sim::Rng& rng) {
  std::vector<K> on;
  for (K k : s.kinds)
    if (rng.Chance(0.5)) on.push_back(k);
  if (on.empty()) on.push_back(s.kinds[static_cast<size_t>(Pick(static_cast<int>(s.kinds.size()), rng))]);
  return on;
}

}  // namespace

std::vector<ProtocolPoint> ProtocolPoints(const std::vector<Event>& events) {
  std::vector<ProtocolPoint> out;
  std::map<std::pair<int, std::string>, int> seen;
  for (const Event& e : events) {
    if (e.type != Ev::kCommand || e.client < 0) continue;
    if (out.size() >= kMaxProtocolPoints) break;
    ProtocolPoint p;
    p.client = e.client;
    p.node = static_cast<int>(e.value);
    p.command = MatchCommandName(e.detail.substr(0, e.detail.find(' ')));
    p.occurrence = ++seen[{p.client, p.command}];
    p.t_us = e.t_us;
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<ExploreClient> DrawClients(const ExploreSpace& s, sim::Rng& rng) {
  std::vector<ExploreClient> out;
  for (int c = 0; c < s.clients; ++c) {
    ExploreClient cl;
    cl.start_ms = Draw(s.start, s.ttl_ms, rng);
    cl.hold_ms = Draw(s.hold, s.ttl_ms, rng);
    cl.requests = s.requests;
    out.push_back(cl);
  }
  return out;
}

std::vector<FaultAction> DrawSwarmFaults(const ExploreSpace& s, sim::Rng& rng) {
  std::vector<FaultAction> out;
  if (s.kinds.empty()) return out;
  const std::vector<K> on = SwarmSubset(s, rng);
  const int n = static_cast<int>(rng.Uniform(1, s.max_faults));
  const int occurrences = static_cast<int>(std::max<int64_t>(2, 2 * s.requests * s.nodes));
  for (int i = 0; i < n; ++i) {
    FaultAction f;
    f.kind = on[static_cast<size_t>(Pick(static_cast<int>(on.size()), rng))];
    const bool on_client = TargetsClient(f.kind);
    f.target = on_client ? Pick(s.clients, rng) : f.kind == K::kFailover ? 0 : Pick(s.nodes, rng);
    if (f.kind == K::kPartition) f.node = Pick(s.nodes, rng);
    f.at_us = Draw(s.at, s.ttl_ms, rng) * 1000;
    if (f.kind == K::kDelayMessage) {
      f.at_us = 0;
      f.command = "*";
      f.occurrence = static_cast<int>(rng.Uniform(1, occurrences));
    }
    DrawMagnitude(s, rng, &f);
    out.push_back(f);
  }
  return out;
}

std::vector<FaultAction> DrawTargetedFaults(const ExploreSpace& s, const std::vector<ProtocolPoint>& points,
                                            sim::Rng& rng) {
  if (points.empty()) return DrawSwarmFaults(s, rng);
  std::vector<FaultAction> out;
  if (s.kinds.empty()) return out;
  const std::vector<K> on = SwarmSubset(s, rng);
  const int n = static_cast<int>(rng.Uniform(1, s.max_faults));
  for (int i = 0; i < n; ++i) {
    const ProtocolPoint& p = points[static_cast<size_t>(Pick(static_cast<int>(points.size()), rng))];
    FaultAction f;
    f.kind = on[static_cast<size_t>(Pick(static_cast<int>(on.size()), rng))];
    const bool on_client = TargetsClient(f.kind);
    f.target = on_client ? p.client : f.kind == K::kFailover ? 0 : p.node;
    f.node = p.node;
    if (f.kind == K::kPauseClient || f.kind == K::kCrashClient) {
      f.on_send = p.command;
      f.occurrence = p.occurrence;
    } else if (f.kind == K::kDelayMessage) {
      f.command = p.command;
      f.occurrence = p.occurrence;
    } else {
      f.at_us = p.next_whole_ms_us();
    }
    if (f.kind != K::kPartition) f.node = 0;
    DrawMagnitude(s, rng, &f);
    out.push_back(f);
  }
  return out;
}

}  // namespace locklab
