#include "harness/explore/candidate.h"

#include <algorithm>
#include <limits>
#include <map>

#include "harness/check/holds.h"
#include "harness/run/config.h"

namespace locklab {
namespace {

using nlohmann::json;

// Whole ms as an integer; a time the shrinker aligned to the µs as a fraction (read back exactly).
json Ms(int64_t us) { return us % 1000 == 0 ? json(us / 1000) : json(static_cast<double>(us) / 1000.0); }

// One fault as a scenario step.
json StepJson(const FaultAction& f) {
  using K = FaultAction::Kind;
  json s = {{"do", FaultKindName(f.kind)}};
  if (TargetsClient(f.kind))
    s["client"] = ExploreClientName(f.target);
  else
    s["node"] = f.target;
  if (f.kind == K::kPartition) s["node"] = f.node;
  if (f.kind == K::kDelayMessage) {
    s["command"] = f.command;
    s["occurrence"] = f.occurrence;
  } else if (!f.on_send.empty()) {
    s["on_send"] = f.on_send;
    s["occurrence"] = f.occurrence;
  } else {
    s["at_ms"] = Ms(f.at_us);
  }
  switch (f.kind) {
    case K::kPauseClient:
    case K::kPauseNode:
    case K::kPartition:
    case K::kFailover:
    case K::kDelayMessage: s["duration_ms"] = Ms(f.duration_us); break;
    case K::kClientClockJump:
    case K::kNodeClockJump: s["delta_ms"] = Ms(f.delta_us); break;
    default: break;
  }
  return s;
}

// Client pauses: [start, end) per client.
std::map<int, std::vector<std::pair<int64_t, int64_t>>> Pauses(const std::vector<Event>& events, int64_t end_us) {
  std::map<int, std::vector<std::pair<int64_t, int64_t>>> out;
  std::map<int, int64_t> open;
  for (const Event& e : events) {
    if (e.type == Ev::kPauseStart) open[e.client] = e.t_us;
    if (e.type == Ev::kPauseEnd && open.count(e.client)) {
      out[e.client].push_back({open[e.client], e.t_us});
      open.erase(e.client);
    }
  }
  for (const auto& [c, t] : open) out[c].push_back({t, end_us});
  return out;
}

std::string PairText(std::pair<int, int> p) { return ExploreClientName(p.first) + "+" + ExploreClientName(p.second); }

}  // namespace

bool Candidate::operator==(const Candidate& o) const {
  if (clients != o.clients || faults.size() != o.faults.size()) return false;
  for (size_t i = 0; i < faults.size(); ++i)
    if (ToJson(faults[i]) != ToJson(o.faults[i])) return false;
  return true;
}

std::string ExploreClientName(int client) {
  if (client >= 0 && client < 26) return std::string(1, static_cast<char>('A' + client));
  return "c" + std::to_string(client);
}

json CandidateScenario(const ExploreSpace& space, const Candidate& c, const json& expect, const ScenarioText& text) {
  json clients = json::array();
  for (size_t i = 0; i < c.clients.size(); ++i) {
    const ExploreClient& cl = c.clients[i];
    clients.push_back({{"name", ExploreClientName(static_cast<int>(i))},
                       {"start_ms", cl.start_ms},
                       {"hold_ms", cl.hold_ms},
                       {"requests", cl.requests}});
  }
  json steps = json::array();
  for (const FaultAction& f : c.faults) steps.push_back(StepJson(f));
  json variant = {{"name", "found"}, {"algorithm", space.algorithm}, {"expect", expect}};
  if (!text.note.empty()) variant["note"] = text.note;
  json doc = {{"id", text.id},
              {"title", text.title},
              {"source", text.source},
              {"backends", {"sim", "redis"}},
              {"params", {{"ttl_ms", space.ttl_ms}}},
              {"run", space.run},
              {"clients", clients},
              {"steps", steps},
              {"variants", json::array({variant})}};
  if (!text.story.empty()) doc["story"] = text.story;
  if (space.Finds(FindingClass::kStuck) || space.Finds(FindingClass::kStuckUnexplained))
    doc["liveness_bound_ms"] = space.LivenessBoundMs();
  return doc;
}

Result<ScenarioRun> CompileCandidate(const ExploreSpace& space, const Candidate& c, const std::string& backend) {
  json doc = CandidateScenario(space, c, json::object(), ScenarioText());
  doc["backends"] = json::array({backend});  // compiled for this backend only
  Result<Scenario> sc = ParseScenario(doc, "(explored)");
  if (!sc.ok()) return sc.status();
  return CompileVariant(*sc, "found", {}, backend, 1, nullptr);
}

bool Observed::Has(FindingClass c) const {
  switch (c) {
    case FindingClass::kOverlap: return overlap;
    case FindingClass::kOverlapUnexplained: return overlap_unexplained;
    case FindingClass::kDamage: return damage;
    case FindingClass::kStuck: return stuck;
    case FindingClass::kStuckUnexplained: return stuck_unexplained;
    case FindingClass::kReleasesFailed: return releases_failed;
    case FindingClass::kReleasesFailedUnexplained: return releases_failed_unexplained;
  }
  return false;
}

std::vector<FindingClass> Observed::Findings(const std::vector<FindingClass>& find) const {
  std::vector<FindingClass> out;
  if (!completed) return out;
  for (FindingClass c : find)
    if (Has(c)) out.push_back(c);
  return out;
}

std::vector<std::pair<int, int>> UnexplainedOverlaps(const std::vector<Event>& events, int64_t end_us) {
  const std::vector<Hold> holds = CollectHolds(events, end_us);
  const auto pauses = Pauses(events, end_us);
  auto explained = [&](const Hold& h) {
    auto it = pauses.find(h.client);
    if (it == pauses.end()) return false;
    for (const auto& [s, e] : it->second)
      if (s < h.exit_us && e > h.enter_us) return true;
    return false;
  };
  std::vector<std::pair<int, int>> out;
  for (size_t i = 0; i < holds.size(); ++i) {
    for (size_t j = i + 1; j < holds.size(); ++j) {
      const Hold& a = holds[i];
      const Hold& b = holds[j];
      if (a.client == b.client || (a.read && b.read)) continue;  // readers may share
      if (std::max(a.enter_us, b.enter_us) >= std::min(a.exit_us, b.exit_us)) continue;
      if (explained(a) || explained(b)) continue;
      out.emplace_back(std::min(a.client, b.client), std::max(a.client, b.client));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

double UnexplainedStuckMs(const std::vector<Event>& events, int64_t end_us, int64_t ttl_ms) {
  std::map<int, bool> waiting, holding, paused;
  int64_t waiters = 0, holders = 0, pauses = 0;
  auto set = [](std::map<int, bool>& m, int64_t& count, int c, bool on) {
    if (m[c] != on) count += on ? 1 : -1;
    m[c] = on;
  };
  const int64_t kNone = std::numeric_limits<int64_t>::min();
  int64_t since = kNone, quiet_from = 0, best_us = 0;  // quiet_from: no crash within a TTL before it
  bool entered = false;
  auto close = [&](int64_t t) {
    if (since != kNone && t > since) best_us = std::max(best_us, t - since);
    since = kNone;
  };
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    if (e.client >= 0) {
      switch (e.type) {
        case Ev::kAcquireStart: set(waiting, waiters, e.client, true); break;
        case Ev::kAcquireOk:
        case Ev::kAcquireFail:
        case Ev::kAcquireUnknown: set(waiting, waiters, e.client, false); break;
        case Ev::kEnter:
          set(holding, holders, e.client, true);
          entered = true;
          break;
        case Ev::kExit: set(holding, holders, e.client, false); break;
        case Ev::kPauseStart: set(paused, pauses, e.client, true); break;
        case Ev::kPauseEnd: set(paused, pauses, e.client, false); break;
        case Ev::kCrash:
          set(waiting, waiters, e.client, false);
          set(holding, holders, e.client, false);
          set(paused, pauses, e.client, false);
          close(e.t_us);
          quiet_from = e.t_us + ttl_ms * 1000;
          break;
        default: break;
      }
    }
    if (i + 1 < events.size() && events[i + 1].t_us == e.t_us) continue;  // judge whole instants
    const bool stuck = waiters > 0 && holders == 0 && pauses == 0;
    if (since != kNone && (!stuck || entered)) close(e.t_us);
    if (stuck && since == kNone) since = std::max(e.t_us, quiet_from);
    entered = false;
  }
  close(end_us);
  return static_cast<double>(best_us) / 1000.0;
}

int64_t UnexplainedReleaseFailures(const std::vector<Event>& events, int64_t end_us) {
  const auto pauses = Pauses(events, end_us);
  std::map<int, std::pair<int64_t, int64_t>> last_hold;  // per client: its latest [enter, exit]
  int64_t n = 0;
  for (const Event& e : events) {
    if (e.type == Ev::kEnter) last_hold[e.client] = {e.t_us, end_us};
    if (e.type == Ev::kExit && last_hold.count(e.client)) last_hold[e.client].second = e.t_us;
    if (e.type != Ev::kReleaseFail) continue;
    bool explained = false;
    auto hold = last_hold.find(e.client);
    auto it = pauses.find(e.client);
    if (hold != last_hold.end() && it != pauses.end())
      for (const auto& [s, t] : it->second) explained = explained || (s < hold->second.second && t > hold->second.first);
    n += explained ? 0 : 1;
  }
  return n;
}

Observed Classify(const RunResult& r, const std::vector<Event>& events, double liveness_bound_ms, int64_t ttl_ms) {
  Observed o;
  o.completed = r.completed;
  const CheckResult& c = r.check;
  o.overlap = c.safety.violations > 0;
  o.pairs = c.safety.overlapping_pairs;
  o.damage = c.resource.LostOrOversold() + c.resource.stale_writes_accepted > 0;
  o.stuck = c.liveness.stuck_ms_max >= liveness_bound_ms;
  o.releases_failed = c.liveness.releases_failed > 0;
  o.stuck_unexplained = o.stuck && UnexplainedStuckMs(events, r.duration_us, ttl_ms) >= liveness_bound_ms;
  o.releases_failed_unexplained = o.releases_failed && UnexplainedReleaseFailures(events, r.duration_us) > 0;
  if (o.overlap)  // the checker's pairs (a semaphore's permits, an rwlock's readers are allowed) no pause explains
    for (const auto& p : UnexplainedOverlaps(events, r.duration_us))
      if (std::find(o.pairs.begin(), o.pairs.end(), p) != o.pairs.end()) o.unexplained_pairs.push_back(p);
  o.overlap_unexplained = !o.unexplained_pairs.empty();
  return o;
}

json ExpectFor(const Observed& o, const std::vector<FindingClass>& classes) {
  json e = json::object();
  std::vector<std::pair<int, int>> pairs;
  for (FindingClass c : classes) {
    if (!o.Has(c)) continue;
    switch (c) {
      case FindingClass::kOverlap: pairs.insert(pairs.end(), o.pairs.begin(), o.pairs.end()); break;
      case FindingClass::kOverlapUnexplained:
        pairs.insert(pairs.end(), o.unexplained_pairs.begin(), o.unexplained_pairs.end());
        break;
      case FindingClass::kDamage: e["damage"] = true; break;
      case FindingClass::kStuck:
      case FindingClass::kStuckUnexplained: e["stuck"] = true; break;
      case FindingClass::kReleasesFailed:
      case FindingClass::kReleasesFailedUnexplained: e["releases_failed"] = true; break;
    }
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  if (!pairs.empty()) {
    json list = json::array();
    for (const auto& p : pairs) list.push_back(PairText(p));
    e["overlap"] = list;
  }
  return e;
}

std::string FindingsText(const Observed& o, const std::vector<FindingClass>& classes) {
  std::string s;
  for (FindingClass c : classes) {
    if (!o.Has(c)) continue;
    std::string item = FindingClassName(c);
    const auto& pairs = c == FindingClass::kOverlap ? o.pairs : o.unexplained_pairs;
    if (c == FindingClass::kOverlap || c == FindingClass::kOverlapUnexplained) {
      item += " ";
      for (size_t i = 0; i < pairs.size(); ++i) item += (i ? "," : "") + PairText(pairs[i]);
    }
    s += (s.empty() ? "" : ", ") + item;
  }
  return s.empty() ? "nothing" : s;
}

}  // namespace locklab
