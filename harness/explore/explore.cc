#include "harness/explore/explore.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "harness/explore/generate.h"
#include "harness/report/report.h"
#include "harness/run/parallel_runs.h"
#include "harness/run/spec_fields.h"

namespace locklab {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Runs per batch and thread: the budget is checked between batches.
constexpr int64_t kBatchPerJob = 16;

std::string Rate(double runs, double s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f", s > 0 ? runs / s : 0.0);
  return buf;
}

}  // namespace

uint64_t RunSeed(uint64_t explore_seed, int64_t run) {
  sim::Rng rng(explore_seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(run));
  return rng.Next() >> 1;  // < 2^63: fits every JSON reader's integers
}

CandidateRun RunCandidate(const ExploreSpace& space, const Candidate& c, const std::string& backend) {
  CandidateRun out;
  Result<ScenarioRun> run = CompileCandidate(space, c, backend);
  if (!run.ok()) {
    out.error = run.status().message();
    return out;
  }
  out.run = std::move(run).value();
  out.result = RunOne(out.run.spec, false, /*keep_events=*/true);
  out.ok = out.result.completed;
  if (!out.ok) out.error = out.result.error;
  out.observed = Classify(out.result, out.result.events, space.LivenessBoundMs(), space.ttl_ms);
  return out;
}

RunOutcome ExploreOne(const ExploreSpace& space, uint64_t run_seed) {
  RunOutcome o;
  o.run_seed = run_seed;
  sim::Rng rng(run_seed);
  o.strategy = space.strategy;
  if (o.strategy == Strategy::kBoth) o.strategy = rng.Chance(0.5) ? Strategy::kTargeted : Strategy::kSwarm;
  o.candidate.clients = DrawClients(space, rng);
  if (o.strategy == Strategy::kTargeted && !space.kinds.empty()) {
    const CandidateRun dry = RunCandidate(space, o.candidate);
    ++o.sim_runs;
    if (!dry.ok) {
      o.error = "dry run: " + dry.error;
      return o;
    }
    o.candidate.faults = DrawTargetedFaults(space, ProtocolPoints(dry.result.events), rng);
  } else {
    o.candidate.faults = DrawSwarmFaults(space, rng);
  }
  const CandidateRun r = RunCandidate(space, o.candidate);
  ++o.sim_runs;
  if (!r.ok) {
    o.error = r.error;
    return o;
  }
  o.observed = r.observed;
  o.findings = r.observed.Findings(space.find);
  return o;
}

namespace {

// The search loop: batches of runs until a finding or the budget.
void Search(const ExploreOptions& o, const std::function<void(const std::string&)>& progress, ExploreResult* res) {
  const Clock::time_point t0 = Clock::now();
  double last_progress = 0;
  const int jobs = std::max(1, o.jobs);
  const int64_t batch = kBatchPerJob * jobs;
  int64_t findings = 0;
  while (!res->found) {
    if (res->runs >= o.budget_runs) {
      res->stopped_by = "runs";
      break;
    }
    if (Since(t0) >= o.budget_s) {
      res->stopped_by = "seconds";
      break;
    }
    const int64_t base = res->runs;
    const int64_t n = std::min(batch, o.budget_runs - base);
    RunInOrder<RunOutcome>(
        static_cast<size_t>(n), jobs, static_cast<size_t>(n),
        [&](size_t i) { return ExploreOne(o.space, RunSeed(o.seed, base + static_cast<int64_t>(i))); },
        [&](size_t i, RunOutcome&& r) {
          res->sim_runs += r.sim_runs;
          if (!r.error.empty()) {
            if (res->first_error.empty()) res->first_error = r.error;
            ++res->incomplete;
          }
          if (r.findings.empty()) return;
          ++findings;
          if (res->found) return;
          res->found = true;
          res->found_run = base + static_cast<int64_t>(i) + 1;
          res->finding = std::move(r);
        });
    res->runs = res->found ? res->found_run : base + n;
    const double s = Since(t0);
    if (progress && (s - last_progress >= 1.0 || res->found)) {
      last_progress = s;
      std::ostringstream line;
      line << "explore: " << res->runs << " runs, " << Rate(static_cast<double>(res->runs), s) << " runs/s, "
           << findings << (findings == 1 ? " finding" : " findings") << ", " << DoubleText(std::round(s * 10) / 10)
           << " s";
      progress(line.str());
    }
  }
  if (res->found) res->stopped_by = "finding";
  res->seconds = Since(t0);
}

// Shrinking's last step (ExploreResult::fewer_*): searches with fewer faults a run than the
// minimal schedule has; a finding there, shrunk, replaces it when it has fewer faults.
void FewerFaults(const ExploreOptions& o, const StillFails& fails, ExploreResult* res) {
  for (int k = static_cast<int>(res->minimal.faults.size()); k >= 2; k = static_cast<int>(res->minimal.faults.size())) {
    ExploreOptions sub = o;
    sub.space.max_faults = k - 1;
    sub.space.find = {res->primary};
    sub.seed = RunSeed(o.seed, kMaxExploreRuns + k);  // runs of their own, not the search's again
    sub.budget_runs = std::min(o.budget_runs, kFewerFaultsRuns);
    ExploreResult r;
    Search(sub, nullptr, &r);
    ++res->fewer_searches;
    res->fewer_runs += r.runs;
    if (!r.found) return;
    ShrinkStats stats;
    const Candidate m = Shrink(r.finding.candidate, fails, ShrinkOptionsFor(o.space, o.shrink_margin), &stats);
    const int64_t tries = res->shrink_stats.tries + stats.tries;  // every shrink counts
    const int64_t point_runs = res->shrink_stats.point_runs + stats.point_runs;
    const bool fewer = m.faults.size() < res->minimal.faults.size();
    if (fewer) {
      res->minimal = m;
      res->shrink_stats = stats;
      res->fewer_run_seed = r.finding.run_seed;
    }
    res->shrink_stats.tries = tries;
    res->shrink_stats.point_runs = point_runs;
    if (!fewer) return;
  }
}

}  // namespace

ShrinkOptions ShrinkOptionsFor(const ExploreSpace& space, double margin) {
  ShrinkOptions so;
  so.margin = margin;
  so.points = [&space](const Candidate& c) {
    const CandidateRun r = RunCandidate(space, c);
    return r.ok ? ProtocolPoints(r.result.events) : std::vector<ProtocolPoint>();
  };
  so.limits.nodes = space.nodes;
  so.limits.hold_max_ms = space.hold.HiMs(space.ttl_ms);
  so.limits.kinds = space.kinds;
  so.limits.max_magnitude_ms = [&space](FaultAction::Kind k) -> int64_t {
    const MagnitudeRange* range = MagnitudeRangeOf(space, k);
    return range == nullptr ? 0 : range->HiMs(space.ttl_ms);
  };
  return so;
}

ExploreResult Explore(const ExploreOptions& o, const std::function<void(const std::string&)>& progress) {
  ExploreResult res;
  Search(o, progress, &res);
  if (!res.found || !o.shrink) return res;
  res.primary = res.finding.findings.front();
  if (progress)
    progress("explore: shrinking run " + std::to_string(res.found_run) + " (" +
             std::to_string(res.finding.candidate.faults.size()) + " faults, " +
             std::to_string(res.finding.candidate.clients.size()) + " clients)");
  const Clock::time_point t0 = Clock::now();
  const ExploreSpace& space = o.space;
  const FindingClass primary = res.primary;
  const StillFails fails = [&](const Candidate& c) {
    const CandidateRun r = RunCandidate(space, c);
    return r.ok && r.observed.Has(primary);
  };
  res.minimal = Shrink(res.finding.candidate, fails, ShrinkOptionsFor(space, o.shrink_margin), &res.shrink_stats);
  if (progress && res.minimal.faults.size() >= 2)
    progress("explore: shrunk to " + std::to_string(res.minimal.faults.size()) + " faults; searching with fewer");
  FewerFaults(o, fails, &res);
  res.minimal_observed = RunCandidate(space, res.minimal).observed;
  res.shrunk = true;
  res.shrink_seconds = Since(t0);
  return res;
}

std::string FewerFaultsText(const ExploreResult& r) {
  if (r.fewer_searches == 0) return "";
  std::string t = " (and " + std::to_string(r.fewer_runs) + " runs of " + std::to_string(r.fewer_searches) +
                  (r.fewer_searches == 1 ? " search" : " searches") + " with fewer faults";
  if (r.fewer_run_seed != 0) t += ", the last kept from run seed " + std::to_string(r.fewer_run_seed);
  return t + ")";
}

std::string SpaceFlags(const ExploreSpace& s) {
  std::ostringstream o;
  o << "--algorithm " << ShellQuote(s.algorithm) << " --ttl-ms " << s.ttl_ms << " --clients " << s.clients
    << " --requests " << s.requests << " --faults " << s.KindsText() << " --max-faults " << s.max_faults
    << " --strategy " << StrategyName(s.strategy);
  std::string find;
  for (FindingClass c : s.find) find += (find.empty() ? "" : ",") + std::string(FindingClassName(c));
  o << " --find " << find;
  if (s.liveness_bound_ms > 0) o << " --liveness-bound-ms " << DoubleText(s.liveness_bound_ms);
  const ExploreSpace defaults;
  ExploreSpace copy = s, dflt = defaults;
  for (const std::string& n : RangeNames())
    if (FindRange(&copy, n)->Text() != FindRange(&dflt, n)->Text())
      o << " --range " << n << "=" << FindRange(&copy, n)->Text();
  const nlohmann::json& r = s.run;
  if (r.contains("retry")) {
    std::string retry = r["retry"].get<std::string>();
    std::string opts;
    if (r.contains("retry_options"))
      for (const auto& [k, v] : r["retry_options"].items())
        opts += (opts.empty() ? "" : ",") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
    o << " --retry " << ShellQuote(opts.empty() ? retry : retry + ":" + opts);
  }
  for (const char* k :
       {"workload", "stock", "app_servers", "command_timeout_ms", "acquire_timeout_ms", "node_min_down_ms"}) {
    if (!r.contains(k)) continue;
    std::string flag = std::string("--") + k;
    std::replace(flag.begin(), flag.end(), '_', '-');
    o << " " << flag << " " << (r[k].is_string() ? ShellQuote(r[k].get<std::string>()) : r[k].dump());
  }
  if (r.contains("replica") && r["replica"] == true) o << " --replica";
  return o.str();
}

}  // namespace locklab
