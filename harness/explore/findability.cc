#include "harness/explore/findability.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "harness/explore/found.h"
#include "harness/report/stats.h"
#include "harness/run/build_info.h"
#include "harness/run/host_info.h"
#include "harness/run/spec_fields.h"
#include "harness/run/write_file.h"

namespace locklab {
namespace {

using nlohmann::json;

constexpr FindingClass kJudged[] = {FindingClass::kOverlap, FindingClass::kDamage, FindingClass::kStuck,
                                    FindingClass::kReleasesFailed};

// What a variant expects of class c: 1 present, 0 absent, -1 not said.
int Expects(const Expectation& e, FindingClass c) {
  auto of = [](const std::optional<bool>& b) { return b.has_value() ? (*b ? 1 : 0) : -1; };
  switch (c) {
    case FindingClass::kOverlap:
    case FindingClass::kOverlapUnexplained:
      if (!e.overlap_pairs.empty()) return 1;
      return of(e.overlap);
    case FindingClass::kDamage: return of(e.damage);
    case FindingClass::kStuck:
    case FindingClass::kStuckUnexplained: return of(e.stuck);
    case FindingClass::kReleasesFailed:
    case FindingClass::kReleasesFailedUnexplained: return of(e.releases_failed);
    default: return -1;
  }
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// x rounded to a multiple of `to` (a power of ten below 1), printed without binary noise.
double Round(double x, double to) { return std::round(x / to) / std::round(1 / to); }

// One explore of a variant with one seed, shrunk; the first seed's file is kept when asked.
json ExploreRow(const FindabilityOptions& fo, const ExploreSpace& space, uint64_t seed, const std::string& file) {
  ExploreOptions o;
  o.space = space;
  o.seed = seed;
  o.budget_runs = fo.budget_runs;
  o.budget_s = fo.budget_s;
  o.jobs = fo.jobs;
  const ExploreResult r = Explore(o, nullptr);
  json row = {{"seed", seed},
              {"found", r.found},
              {"runs", r.found ? r.found_run : r.runs},
              {"seconds", Round(r.seconds, 0.001)},
              {"stopped_by", r.stopped_by},
              {"incomplete_runs", r.incomplete}};
  if (!r.found) {
    std::error_code ignored;  // an earlier table's finding is not this one's
    if (!file.empty()) std::filesystem::remove(file, ignored);
    return row;
  }
  row["strategy"] = StrategyName(r.finding.strategy);
  row["run_seed"] = r.finding.run_seed;
  row["found_faults"] = r.finding.candidate.faults.size();
  row["shrunk_faults"] = r.minimal.faults.size();
  row["shrunk_clients"] = r.minimal.clients.size();
  row["shrink_runs"] = r.shrink_stats.tries;
  row["shrink_point_runs"] = r.shrink_stats.point_runs;
  row["shrink_seconds"] = Round(r.shrink_seconds, 0.001);
  row["shrink_merged"] = r.shrink_stats.merged;
  row["shrink_moved"] = r.shrink_stats.moved;
  row["shrink_simplified"] = r.shrink_stats.simplified;
  row["shrink_started_later"] = r.shrink_stats.started_later;
  row["shrink_centered"] = r.shrink_stats.centered;
  if (r.shrink_stats.out_of_tries) row["shrink_out_of_tries"] = true;
  if (r.fewer_searches > 0) {
    row["shrink_fewer_searches"] = r.fewer_searches;
    row["shrink_fewer_runs"] = r.fewer_runs;
    if (r.fewer_run_seed != 0) row["shrink_fewer_run_seed"] = r.fewer_run_seed;
  }
  row["showed"] = FindingsText(r.minimal_observed, space.find);
  if (file.empty()) return row;
  const json doc = FoundScenarioDoc(o, r, "locklab explore " + SpaceFlags(space) + " --seed " + std::to_string(seed));
  if (Status s = WriteFileAtomic(file, doc.dump(2) + "\n"); !s.ok()) {
    row["file_error"] = s.message();
    return row;
  }
  row["file"] = file;
  const FileReplay sim = ReplayFoundFile(file, "sim");
  row["file_replays"] = sim.matches && sim.table == CandidateTable(space, r.minimal);
  if (fo.confirm_real) {
    int64_t agreed = 0;
    json observed = json::array();
    for (int i = 0; i < fo.confirm_tries; ++i) {
      const FileReplay real = ReplayFoundFile(file, "redis");
      agreed += real.matches ? 1 : 0;
      observed.push_back(real.error.empty() ? real.verdict.observed : "did not complete: " + real.error);
    }
    row["real"] = {{"agreed", agreed}, {"tries", fo.confirm_tries}, {"observed", observed}};
  }
  return row;
}

// The summary of a variant's seeds.
json Summary(const json& seeds) {
  std::vector<double> runs, secs, shrunk, shrink_secs, total_secs;
  int64_t found = 0;
  for (const json& s : seeds) {
    if (!s["found"].get<bool>()) continue;
    ++found;
    runs.push_back(s["runs"].get<double>());
    secs.push_back(s["seconds"].get<double>());
    shrunk.push_back(s["shrunk_faults"].get<double>());
    shrink_secs.push_back(s["shrink_seconds"].get<double>());
    total_secs.push_back(s["seconds"].get<double>() + s["shrink_seconds"].get<double>());
  }
  const Interval w = WilsonInterval(found, static_cast<int64_t>(seeds.size()));
  json out = {{"found", found},
              {"seeds", seeds.size()},
              {"found_rate", {{"estimate", w.estimate}, {"low", Round(w.low, 0.001)}, {"high", Round(w.high, 0.001)},
                              {"n", w.n}, {"method", w.method}}}};
  if (!runs.empty()) {
    out["runs_median"] = Median(runs);
    out["runs_max"] = *std::max_element(runs.begin(), runs.end());
    out["seconds_median"] = Round(Median(secs), 0.001);
    out["seconds_max"] = *std::max_element(secs.begin(), secs.end());
    out["shrink_seconds_median"] = Round(Median(shrink_secs), 0.001);
    out["shrink_seconds_max"] = *std::max_element(shrink_secs.begin(), shrink_secs.end());
    out["finding_seconds_median"] = Round(Median(total_secs), 0.001);  // search + shrink
    out["finding_seconds_max"] = Round(*std::max_element(total_secs.begin(), total_secs.end()), 0.001);
    out["shrunk_faults_median"] = Median(shrunk);
    out["shrunk_faults_max"] = *std::max_element(shrunk.begin(), shrunk.end());
  }
  return out;
}

}  // namespace

Result<ScenarioRoles> RolesOf(const Scenario& sc) {
  std::vector<std::pair<std::string, Expectation>> expects;
  for (const ScenarioVariant& v : sc.variants) {
    Result<ScenarioRun> run = CompileVariant(sc, v.name, {}, "sim", 1, nullptr);
    if (!run.ok()) return run.status();
    expects.emplace_back(v.name, run->expect);
  }
  ScenarioRoles roles;
  for (FindingClass c : kJudged) {
    bool yes = false, no = false;
    for (const auto& [name, e] : expects) {
      yes = yes || Expects(e, c) == 1;
      no = no || Expects(e, c) == 0;
    }
    if (yes && no) roles.targets.push_back(c);
  }
  // Under client pauses every lock with a TTL lets a second holder in while the first is frozen
  // inside its critical section (and a frozen client leaves waiters waiting, and finds its lock
  // gone at release); a crashed holder's key outlives it by up to a TTL. The race that tells the
  // variants apart is then what those faults do not explain.
  bool pauses = false, crashes = false;
  for (const ScenarioVariant& v : sc.variants) {
    Result<ScenarioRun> run = CompileVariant(sc, v.name, {}, "sim", 1, nullptr);
    for (const FaultAction& f : run.ok() ? run->spec.faults.plan : std::vector<FaultAction>()) {
      pauses = pauses || f.kind == FaultAction::Kind::kPauseClient;
      crashes = crashes || f.kind == FaultAction::Kind::kCrashClient;
    }
  }
  for (FindingClass& c : roles.targets) {
    if (c == FindingClass::kOverlap && pauses) c = FindingClass::kOverlapUnexplained;
    if (c == FindingClass::kStuck && (pauses || crashes)) c = FindingClass::kStuckUnexplained;
    if (c == FindingClass::kReleasesFailed && pauses) c = FindingClass::kReleasesFailedUnexplained;
  }
  if (roles.targets.empty()) {
    bool apart = false;
    for (const auto& [name, e] : expects) apart = apart || !e.no_overlap_pairs.empty();
    if (!apart) return roles;  // nothing told apart: no broken variant (the retry study)
    roles.targets.push_back(FindingClass::kOverlapUnexplained);
    for (const auto& [name, e] : expects)
      (e.no_overlap_pairs.empty() ? roles.broken : roles.fixed).push_back(name);
    return roles;
  }
  for (const auto& [name, e] : expects) {
    bool any = false, none = true;
    for (FindingClass c : roles.targets) {
      any = any || Expects(e, c) == 1;
      none = none && Expects(e, c) == 0;
    }
    if (any) roles.broken.push_back(name);
    else if (none) roles.fixed.push_back(name);
  }
  return roles;
}

Result<ExploreSpace> SpaceOf(const Scenario& sc, const std::string& variant, const ScenarioRoles& roles) {
  std::vector<ScenarioRun> compiled;  // every variant once: the explored one, and all the faults and TTLs
  const ScenarioRun* run = nullptr;
  for (const ScenarioVariant& v : sc.variants) {
    Result<ScenarioRun> c = CompileVariant(sc, v.name, {}, "sim", 1, nullptr);
    if (!c.ok()) return c.status();
    compiled.push_back(std::move(c).value());
  }
  for (size_t i = 0; i < sc.variants.size(); ++i)
    if (sc.variants[i].name == variant) run = &compiled[i];
  if (run == nullptr) return Status::Invalid("scenario " + sc.id + " has no variant '" + variant + "'");
  const RunSpec& spec = run->spec;
  ExploreSpace s;
  s.algorithm = sc.FindVariant(variant)->algorithm;
  json opts = json::object();
  for (const auto& [k, v] : spec.retry_options.values()) opts[k] = v;
  s.run = {{"retry", spec.retry},
           {"retry_options", opts},
           {"workload", spec.workload},
           {"stock", spec.stock},
           {"app_servers", spec.app_servers},
           {"command_timeout_ms", spec.command_timeout_ms},
           {"acquire_timeout_ms", spec.acquire_timeout_ms}};
  if (spec.replica) s.run["replica"] = true;
  if (spec.node_min_down_ms > 0) s.run["node_min_down_ms"] = spec.node_min_down_ms;
  s.ttl_ms = spec.ttl_ms;
  s.clients = spec.clients;
  s.requests = spec.client_plans.empty() ? std::max<int64_t>(1, spec.requests / std::max(1, spec.clients)) : 2;
  bool long_task = false;  // a client that works at least a TTL: the long task is the scenario's fault
  int64_t broken_ttl_ms = s.ttl_ms;  // the first broken variant's
  for (size_t i = 0; i < sc.variants.size(); ++i) {  // every variant's faults: one set of kinds per scenario
    const RunSpec& other = compiled[i].spec;
    if (!roles.broken.empty() && sc.variants[i].name == roles.broken.front()) broken_ttl_ms = other.ttl_ms;
    for (const FaultAction& f : other.faults.plan)
      if (std::find(s.kinds.begin(), s.kinds.end(), f.kind) == s.kinds.end()) s.kinds.push_back(f.kind);
    for (const ClientPlan& p : other.client_plans) long_task = long_task || p.hold_ms >= other.ttl_ms;
  }
  std::sort(s.kinds.begin(), s.kinds.end());
  if (spec.client_plans.empty()) {
    // A pool of requests with no client programs (the flash sale): its clients all start at once
    // and work its hold_ms, as the scenario has them; there is no timeline to generalise.
    s.start = {0, 0, false};
    s.hold = {static_cast<double>(spec.hold_ms), static_cast<double>(spec.hold_ms), false};
  } else if (s.kinds.empty() && long_task) {
    s.hold = {0.05, 3, true};  // no fault but the long task: how long the clients work is the whole space
  }
  if (broken_ttl_ms != s.ttl_ms)  // a fix that lengthens the TTL meets the broken variant's faults, in ms
    for (const std::string& n : RangeNames()) {
      MagnitudeRange* r = FindRange(&s, n);
      const double unit_ms = static_cast<double>(broken_ttl_ms);
      if (r->ttl_units) *r = {r->lo * unit_ms, r->hi * unit_ms, false};
    }
  s.find = roles.targets;
  if (run->liveness_bound_ms > 0) s.liveness_bound_ms = run->liveness_bound_ms;
  LOCKLAB_RETURN_IF_ERROR(CheckSpace(&s).Prefixed(sc.id + " " + variant));
  return s;
}

Result<json> RunFindability(const FindabilityOptions& o, const std::function<void(const std::string&)>& progress) {
  Result<std::vector<Scenario>> all = LoadScenarioDir(o.scenario_dir.empty() ? DefaultScenarioDir() : o.scenario_dir);
  if (!all.ok()) return all.status();
  for (const std::string& id : o.only) {
    bool known = false;
    for (const Scenario& sc : *all) known = known || sc.id == id;
    if (!known) return Status::Invalid("--only: unknown scenario '" + id + "'");
  }
  json rows = json::array();
  json skipped = json::array();
  for (const Scenario& sc : *all) {
    if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), sc.id) == o.only.end()) continue;
    Result<ScenarioRoles> roles = RolesOf(sc);
    if (!roles.ok()) return roles.status();
    if (roles->broken.empty()) {
      skipped.push_back({{"scenario", sc.id}, {"why", "no broken variant (every variant expects the same)"}});
      continue;
    }
    json targets = json::array();
    for (FindingClass c : roles->targets) targets.push_back(FindingClassName(c));
    for (const std::string& role : {std::string("broken"), std::string("fixed")}) {
      for (const std::string& name : role == "broken" ? roles->broken : roles->fixed) {
        Result<ExploreSpace> space = SpaceOf(sc, name, *roles);
        if (!space.ok()) return space.status();
        Result<ScenarioRun> hand = CompileVariant(sc, name, {}, "sim", 1, nullptr);
        json seeds = json::array();
        const int n = role == "broken" ? o.seeds : o.fixed_seeds;
        for (int seed = 1; seed <= n; ++seed) {
          const std::string file = seed == 1 && !o.found_dir.empty()
                                       ? o.found_dir + "/" + sc.id + "-" + name + ".json"
                                       : "";
          seeds.push_back(ExploreRow(o, *space, static_cast<uint64_t>(seed), file));
          if (progress)
            progress("findability: " + sc.id + " " + name + " seed " + std::to_string(seed) + ": " +
                     (seeds.back()["found"].get<bool>()
                          ? "found in " + seeds.back()["runs"].dump() + " runs, " +
                                seeds.back()["seconds"].dump() + " s, shrunk to " +
                                seeds.back()["shrunk_faults"].dump() + " faults"
                          : "nothing in " + seeds.back()["runs"].dump() + " runs"));
        }
        rows.push_back({{"scenario", sc.id},
                        {"variant", name},
                        {"role", role},
                        {"algorithm", space->algorithm},
                        {"targets", targets},
                        {"space", space->ToJson()},
                        {"hand_faults", hand.ok() ? hand->spec.faults.plan.size() : 0},
                        {"real_in_scenario", sc.runs_on("redis")},
                        {"seeds", seeds},
                        {"summary", Summary(seeds)}});
      }
    }
  }
  return json{{"schema", "locklab.findability/1"},
              {"context", {{"tool_version", ToolVersion()}, {"git_sha", GitSha()}, {"host", HostName()}, {"utc", UtcNowText()}}},
              {"options",
               {{"seeds", o.seeds},
                {"fixed_seeds", o.fixed_seeds},
                {"budget_runs", o.budget_runs},
                {"budget_s", o.budget_s},
                {"jobs", o.jobs},
                {"confirm_real", o.confirm_real},
                {"confirm_tries", o.confirm_tries}}},
              {"rows", rows},
              {"skipped", skipped}};
}

std::string FindabilityTable(const json& doc) {
  std::ostringstream o;
  o << "| scenario | variant | algorithm | fault kinds | finds | found (95% Wilson) | runs median / max | s median / max"
       " | shrink s median / max | faults: shrunk median / max vs hand | real Redis |\n";
  o << "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const json& row : doc["rows"]) {
    const json& sum = row["summary"];
    std::string targets;
    for (const json& t : row["targets"]) targets += (targets.empty() ? "" : ", ") + t.get<std::string>();
    const bool any = sum["found"].get<int64_t>() > 0;
    std::ostringstream found;
    found << sum["found"].get<int64_t>() << " of " << sum["seeds"].get<int64_t>() << " ["
          << DoubleText(sum["found_rate"]["low"].get<double>()) << ", "
          << DoubleText(sum["found_rate"]["high"].get<double>()) << "]";
    std::string real = "-";
    const json& first = row["seeds"].empty() ? json() : row["seeds"][0];
    if (first.is_object() && first.contains("real"))
      real = "agreed " + first["real"]["agreed"].dump() + " of " + first["real"]["tries"].dump();
    if (!row["real_in_scenario"].get<bool>()) real += "; the hand-written one is sim-only";
    if (first.is_object() && first.contains("file_replays") && !first["file_replays"].get<bool>())
      real = "THE FOUND FILE DOES NOT REPLAY; " + real;
    for (const json& seed : row["seeds"])  // what a fixed variant showed, when it showed something
      if (row["role"] == "fixed" && seed["found"].get<bool>()) {
        found << ": " << seed["showed"].get<std::string>();
        break;
      }
    o << "| " << row["scenario"].get<std::string>() << " | " << row["variant"].get<std::string>() << " ("
      << row["role"].get<std::string>() << ") | `" << row["algorithm"].get<std::string>() << "` | "
      << row["space"]["faults"].get<std::string>() << " | " << targets << " | " << found.str() << " | ";
    if (any) {
      o << sum["runs_median"].dump() << " / " << sum["runs_max"].dump() << " | "
        << DoubleText(Round(sum["seconds_median"].get<double>(), 0.01)) << " / "
        << DoubleText(Round(sum["seconds_max"].get<double>(), 0.01)) << " | "
        << DoubleText(Round(sum["shrink_seconds_median"].get<double>(), 0.01)) << " / "
        << DoubleText(Round(sum["shrink_seconds_max"].get<double>(), 0.01)) << " | " << sum["shrunk_faults_median"].dump()
        << " / " << sum["shrunk_faults_max"].dump() << " vs " << row["hand_faults"].dump() << " | " << real << " |\n";
    } else {
      const json& s0 = row["seeds"].empty() ? json() : row["seeds"][0];
      o << "- (budget: " << (s0.is_object() ? s0["runs"].dump() : "0") << " runs) | - | - | - vs "
        << row["hand_faults"].dump() << " | - |\n";
    }
  }
  return o.str();
}

}  // namespace locklab
