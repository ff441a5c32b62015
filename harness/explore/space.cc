#include "harness/explore/space.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "algorithms/lock.h"
#include "harness/explore/candidate.h"
#include "harness/run/comma_list.h"
#include "harness/run/config.h"
#include "harness/run/spec_fields.h"

namespace locklab {
namespace {


bool ParseNumber(const std::string& s, double* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(*out);
}

constexpr FindingClass kAllClasses[] = {
    FindingClass::kOverlap,        FindingClass::kOverlapUnexplained, FindingClass::kDamage,
    FindingClass::kStuck,          FindingClass::kStuckUnexplained,   FindingClass::kReleasesFailed,
    FindingClass::kReleasesFailedUnexplained};

}  // namespace

int64_t MagnitudeRange::LoMs(int64_t ttl_ms) const {
  return std::llround(ttl_units ? lo * static_cast<double>(ttl_ms) : lo);
}
int64_t MagnitudeRange::HiMs(int64_t ttl_ms) const {
  return std::llround(ttl_units ? hi * static_cast<double>(ttl_ms) : hi);
}
std::string MagnitudeRange::Text() const {
  return DoubleText(lo) + "-" + DoubleText(hi) + (ttl_units ? "ttl" : "ms");
}

Result<MagnitudeRange> ParseMagnitudeRange(const std::string& text, const std::string& what) {
  const std::string bad = what + " '" + text + "': expected LO-HI in ttl or ms, e.g. 0.1-3ttl or 100-3000ms";
  MagnitudeRange r;
  std::string body = text;
  if (body.size() > 3 && body.compare(body.size() - 3, 3, "ttl") == 0) {
    r.ttl_units = true;
    body.resize(body.size() - 3);
  } else if (body.size() > 2 && body.compare(body.size() - 2, 2, "ms") == 0) {
    r.ttl_units = false;
    body.resize(body.size() - 2);
  } else {
    return Status::Invalid(bad);
  }
  const size_t dash = body.find('-', 1);
  if (dash == std::string::npos) return Status::Invalid(bad);
  if (!ParseNumber(body.substr(0, dash), &r.lo) || !ParseNumber(body.substr(dash + 1), &r.hi))
    return Status::Invalid(bad);
  if (r.lo < 0 || r.hi < r.lo) return Status::Invalid(what + " '" + text + "': needs 0 <= LO <= HI");
  if (r.hi > (r.ttl_units ? 1000 : 1e7)) return Status::Invalid(what + " '" + text + "': HI is too large");
  return r;
}

const char* FindingClassName(FindingClass c) {
  switch (c) {
    case FindingClass::kOverlap: return "overlap";
    case FindingClass::kOverlapUnexplained: return "overlap-unexplained";
    case FindingClass::kDamage: return "damage";
    case FindingClass::kStuck: return "stuck";
    case FindingClass::kStuckUnexplained: return "stuck-unexplained";
    case FindingClass::kReleasesFailed: return "releases-failed";
    case FindingClass::kReleasesFailedUnexplained: return "releases-failed-unexplained";
  }
  return "?";
}

Result<std::vector<FindingClass>> ParseFindingClasses(const std::string& comma_list) {
  std::vector<FindingClass> out;
  for (const std::string& name : SplitComma(comma_list, EmptyItems::kKeep)) {
    bool known = false;
    for (FindingClass c : kAllClasses) {
      if (name != FindingClassName(c)) continue;
      known = true;
      if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    }
    if (!known)
      return Status::Invalid("--find: unknown class '" + name +
                             "' (overlap, damage, stuck, releases-failed, each also as NAME-unexplained)");
  }
  if (out.empty()) return Status::Invalid("--find: give at least one class (overlap, overlap-unexplained, damage, ...)");
  std::sort(out.begin(), out.end());
  return out;
}

const char* StrategyName(Strategy s) {
  switch (s) {
    case Strategy::kSwarm: return "swarm";
    case Strategy::kTargeted: return "targeted";
    case Strategy::kBoth: return "both";
  }
  return "?";
}

Result<Strategy> ParseStrategy(const std::string& name) {
  for (Strategy s : {Strategy::kSwarm, Strategy::kTargeted, Strategy::kBoth})
    if (name == StrategyName(s)) return s;
  return Status::Invalid("--strategy: unknown strategy '" + name + "' (swarm, targeted or both)");
}

Result<std::vector<FaultAction::Kind>> ParseKinds(const std::string& comma_list) {
  std::vector<FaultAction::Kind> out;
  if (comma_list == "none") return out;
  for (const std::string& name : SplitComma(comma_list, EmptyItems::kKeep)) {
    FaultAction::Kind k;
    if (!ParseFaultKind(name, &k)) {
      std::string names;
      for (int i = 0; i < FaultAction::kKindCount; ++i)
        names += std::string(i ? ", " : "") + FaultKindName(static_cast<FaultAction::Kind>(i));
      return Status::Invalid("--faults: unknown fault kind '" + name + "' (" + names + ", or none)");
    }
    if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
  }
  if (out.empty()) return Status::Invalid("--faults: give fault kinds (e.g. pause_client,crash_node) or none");
  std::sort(out.begin(), out.end());
  return out;
}

bool ExploreSpace::Finds(FindingClass c) const { return std::find(find.begin(), find.end(), c) != find.end(); }

std::string ExploreSpace::KindsText() const {
  std::string s;
  for (FaultAction::Kind k : kinds) s += (s.empty() ? "" : ",") + std::string(FaultKindName(k));
  return s.empty() ? "none" : s;
}

const std::vector<std::string>& RangeNames() {
  static const std::vector<std::string> names = {"start", "hold", "at", "pause", "delay", "jump", "partition",
                                                 "failover"};
  return names;
}

MagnitudeRange* FindRange(ExploreSpace* s, const std::string& name) {
  MagnitudeRange* all[] = {&s->start, &s->hold, &s->at, &s->pause, &s->delay, &s->jump, &s->partition, &s->failover};
  for (size_t i = 0; i < RangeNames().size(); ++i)
    if (RangeNames()[i] == name) return all[i];
  return nullptr;
}

const MagnitudeRange* MagnitudeRangeOf(const ExploreSpace& s, FaultAction::Kind k) {
  using K = FaultAction::Kind;
  switch (k) {
    case K::kPauseClient:
    case K::kPauseNode: return &s.pause;
    case K::kPartition: return &s.partition;
    case K::kFailover: return &s.failover;
    case K::kDelayMessage: return &s.delay;
    case K::kClientClockJump:
    case K::kNodeClockJump: return &s.jump;
    default: return nullptr;
  }
}

std::string ExploreSpace::Text() const {
  std::ostringstream o;
  o << algorithm << ", " << clients << " clients x " << requests << " requests, ttl " << ttl_ms << " ms, faults "
    << KindsText() << " (at most " << max_faults << " a run), strategy " << StrategyName(strategy) << "; ranges:";
  ExploreSpace copy = *this;
  for (const std::string& n : RangeNames()) o << " " << n << " " << FindRange(&copy, n)->Text();
  o << "; finds:";
  for (FindingClass c : find) o << " " << FindingClassName(c);
  return o.str();
}

nlohmann::json ExploreSpace::ToJson() const {
  nlohmann::json ranges = nlohmann::json::object();
  ExploreSpace copy = *this;
  for (const std::string& n : RangeNames()) ranges[n] = FindRange(&copy, n)->Text();
  nlohmann::json classes = nlohmann::json::array();
  for (FindingClass c : find) classes.push_back(FindingClassName(c));
  return {{"algorithm", algorithm}, {"run", run},          {"ttl_ms", ttl_ms},         {"clients", clients},
          {"requests", requests},   {"faults", KindsText()}, {"max_faults", max_faults}, {"ranges", ranges},
          {"strategy", StrategyName(strategy)}, {"find", classes}, {"liveness_bound_ms", LivenessBoundMs()}};
}

Status CheckSpace(ExploreSpace* s) {
  if (s->clients < 1 || s->clients > kMaxExploreClients)
    return Status::Invalid("--clients must be in [1, " + std::to_string(kMaxExploreClients) + "]");
  if (s->requests < 1 || s->requests > kMaxExploreRequests)
    return Status::Invalid("--requests must be in [1, " + std::to_string(kMaxExploreRequests) + "] (per client)");
  if (s->ttl_ms < 1 || s->ttl_ms > 3'600'000) return Status::Invalid("--ttl-ms must be in [1, 3600000]");
  if (s->max_faults < 1 || s->max_faults > kMaxExploreFaults)
    return Status::Invalid("--max-faults must be in [1, " + std::to_string(kMaxExploreFaults) + "]");
  if (!(s->liveness_bound_ms >= 0) || !std::isfinite(s->liveness_bound_ms))
    return Status::Invalid("--liveness-bound-ms must be >= 0");
  if (!s->run.is_object()) return Status::Invalid("run settings must be an object");
  const bool failover = std::find(s->kinds.begin(), s->kinds.end(), FaultAction::Kind::kFailover) != s->kinds.end();
  if (failover && !(s->run.contains("replica") && s->run["replica"] == true))
    return Status::Invalid("--faults failover needs a replica: add --replica");
  // The whole path a candidate takes, with one client and no fault: the algorithm and the run
  // fields must resolve.
  Candidate c;
  c.clients.push_back({0, 0, 1});
  Result<ScenarioRun> run = CompileCandidate(*s, c, "sim");
  if (!run.ok()) return run.status();
  s->nodes = run->spec.nodes;
  return Status::Ok();
}

}  // namespace locklab
