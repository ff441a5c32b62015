#include "harness/cli/map.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "harness/report/report.h"
#include "harness/run/config.h"
#include "harness/run/parallel_runs.h"

namespace locklab {
namespace {

constexpr int kMaxSeedsLimit = 100'000;

// What a map keeps of one run.
struct RunFigures {
  bool completed = false;
  bool fired = true;  // every planned fault happened (a client's n-th command came)
  std::string error, replay;
  double violations = 0, damage = 0, acquired = 0;
};

RunFigures Figures(const RunResult& r, bool with_replay) {
  RunFigures f;
  f.completed = r.completed;
  f.error = r.error;
  f.fired = r.faults_unfired == 0;
  if (with_replay) f.replay = r.replay.empty() ? ReplayCommand(r.spec) : r.replay;
  f.violations = static_cast<double>(r.check.safety.violations);
  f.damage = static_cast<double>(r.check.resource.LostOrOversold());
  f.acquired = static_cast<double>(r.check.liveness.acquired);
  return f;
}

// A point's completed runs, in seed order.
struct PointRuns {
  std::vector<double> violations, damage, acquired;
};

Interval RateOf(MapUnit unit, const std::vector<double>& events, const PointRuns& runs) {
  if (unit == MapUnit::kAcquisition) return ClusterRatioInterval(events, runs.acquired);
  int64_t with = 0;
  for (double e : events) with += e > 0 ? 1 : 0;
  return WilsonInterval(with, static_cast<int64_t>(events.size()));
}

void Summarise(MapUnit unit, const PointRuns& runs, MapPoint* p) {
  p->violation_rate = RateOf(unit, runs.violations, runs);
  p->damage_rate = RateOf(unit, runs.damage, runs);
  p->acquisitions = p->violations = p->damage = p->runs_with_violations = p->runs_with_damage = 0;
  for (size_t i = 0; i < runs.acquired.size(); ++i) {
    p->acquisitions += static_cast<int64_t>(runs.acquired[i]);
    p->violations += static_cast<int64_t>(runs.violations[i]);
    p->damage += static_cast<int64_t>(runs.damage[i]);
    p->runs_with_violations += runs.violations[i] > 0 ? 1 : 0;
    p->runs_with_damage += runs.damage[i] > 0 ? 1 : 0;
  }
}

Status CheckOptions(const MapOptions& o, const MapDef** def) {
  *def = FindMap(o.name);
  if (*def == nullptr) {
    std::string names;
    for (const MapDef& m : Maps()) names += (names.empty() ? "" : ", ") + m.name;
    return Status::Invalid("unknown map '" + o.name + "' (" + names + "; see locklab map --list)");
  }
  if (o.backend != "sim" && o.backend != "redis") return Status::Invalid("--backend: sim or redis, not '" + o.backend + "'");
  if (o.batch < 0 || o.batch > 10'000) return Status::Invalid("--batch must be in [1, 10000]");
  if (o.max_seeds < 0 || o.max_seeds > kMaxSeedsLimit) return Status::Invalid("--max-seeds must be in [1, 100000]");
  if (o.requests < 0 || o.requests > 10'000'000) return Status::Invalid("--requests must be in [1, 10000000]");
  if (!(o.precision > 0 && o.precision <= 10)) return Status::Invalid("--precision must be in (0, 10]");
  if (!(o.floor >= 0 && o.floor < 1)) return Status::Invalid("--floor must be in [0, 1)");
  for (double x : o.xs)
    if (!std::isfinite(x) || x < 0) return Status::Invalid("--x: values must be finite and >= 0");
  for (const std::string& c : o.curves) {
    bool found = false;
    for (const MapCurve& mc : (*def)->curves) found = found || mc.label == c;
    if (!found) return Status::Invalid("--curve: map " + o.name + " has no curve '" + c + "'");
  }
  return Status::Ok();
}

// The points with their resolved seed-1 specs: bad input is found here, before any run.
Result<std::vector<RunSpec>> PointSpecs(const MapOptions& o, MapResult* r) {
  const MapDef& d = *r->def;
  for (size_t c = 0; c < d.curves.size(); ++c)
    if (o.curves.empty() || std::count(o.curves.begin(), o.curves.end(), d.curves[c].label) > 0) r->curves.push_back(c);
  r->xs = o.xs.empty() ? d.xs : o.xs;
  std::vector<RunSpec> specs;
  for (size_t c : r->curves) {
    for (double x : r->xs) {
      RunSpec s = d.spec(x, c);
      s.backend = o.backend;
      SetSimProfile(&s, o.profile);
      if (o.requests > 0) s.requests = o.requests;
      Result<AlgorithmChoice> a = ParseAlgorithmChoice(d.curves[c].algorithm);
      if (!a.ok()) return a.status();
      s.algorithm = a->name;
      for (const auto& [k, v] : a->options.values()) s.algorithm_options.Set(k, v);
      s.read_ratio = d.curves[c].read_ratio;
      s.seed = 1;
      if (Status st = ResolveSpec(&s); !st.ok()) return st.Prefixed(d.curves[c].label + " at x=" + std::to_string(x));
      specs.push_back(std::move(s));
      MapPoint p;
      p.x = x;
      p.curve = c;
      r->points.push_back(p);
    }
  }
  return specs;
}

// Progress: one line per round on stderr.
struct Progress {
  bool on = true;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  int64_t runs_done = 0;

  void Round(const MapResult& r, int round, size_t going, int batch) {
    if (!on) return;
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    int64_t seeds = 0, left = 0;
    for (const MapPoint& p : r.points) {
      seeds += p.seeds;
      if (p.stop == MapStop::kGoOn) left += r.max_seeds - p.seeds;
    }
    const double per_run = runs_done > 0 ? el / static_cast<double>(runs_done) : 0;
    std::fprintf(stderr,
                 "[map %s] round %d: %zu/%zu points done, %lld seeds run; %zu go on (+%d seeds each); elapsed %.0f s, "
                 "ETA %.0f..%.0f s\n",
                 r.def->name.c_str(), round, r.points.size() - going, r.points.size(), static_cast<long long>(seeds),
                 going, batch, el, per_run * static_cast<double>(std::min<int64_t>(left, int64_t{batch} * static_cast<int64_t>(going))),
                 per_run * static_cast<double>(left));
  }
};

// One round: seeds n+1..n+batch (at most the cap) of every point still going on.
void RunRound(const MapOptions& o, const std::vector<RunSpec>& specs, std::vector<PointRuns>& runs, MapResult* r,
              Progress* progress) {
  struct Job {
    size_t point;
    uint64_t seed;
  };
  std::vector<Job> jobs;
  for (size_t i = 0; i < r->points.size(); ++i) {
    const MapPoint& p = r->points[i];
    if (p.stop != MapStop::kGoOn) continue;
    const int upto = std::min(p.seeds + r->batch, r->max_seeds);
    for (int s = p.seeds + 1; s <= upto; ++s) jobs.push_back({i, static_cast<uint64_t>(s)});
  }
  const int threads = o.backend == "sim" ? o.jobs : 1;
  auto run = [&](size_t i) {
    RunSpec s = specs[jobs[i].point];
    s.seed = jobs[i].seed;
    return Figures(RunOne(s, false), s.seed == 1);
  };
  auto consume = [&](size_t i, RunFigures&& f) {
    MapPoint& p = r->points[jobs[i].point];
    ++p.seeds;
    ++progress->runs_done;
    if (jobs[i].seed == 1) p.replay = f.replay;
    if (!f.completed) {
      r->all_completed = false;
      if (p.first_error.empty()) p.first_error = "seed " + std::to_string(jobs[i].seed) + ": " + f.error;
      return;
    }
    ++p.completed;
    if (!f.fired && r->def->unit == MapUnit::kFault) {  // no fault: not a trial of a per-fault rate
      ++p.not_fired;
      return;
    }
    PointRuns& pr = runs[jobs[i].point];
    pr.violations.push_back(f.violations);
    pr.damage.push_back(f.damage);
    pr.acquired.push_back(f.acquired);
  };
  RunInOrder<RunFigures>(jobs.size(), threads, 8 * static_cast<size_t>(std::max(threads, 1)), run, consume);
}

}  // namespace

const char* MapMetricName(MapMetric m) { return m == MapMetric::kDamage ? "damage" : "violations"; }
const char* MapUnitName(MapUnit u) { return u == MapUnit::kFault ? "fault" : "acquisition"; }

const char* MapStopName(MapStop s) {
  switch (s) {
    case MapStop::kGoOn: return "go on";
    case MapStop::kPrecise: return "precise";
    case MapStop::kBelowFloor: return "below floor";
    case MapStop::kCap: return "cap";
  }
  return "?";
}

MapStop StopRule(const Interval& rate, int seeds, int max_seeds, double precision, double floor,
                 int min_floor_seeds) {
  // "none (n < 2)", "none (no trials)": the estimate alone, no interval to judge yet.
  const bool has_interval = rate.method.rfind("none", 0) != 0;
  if (has_interval && seeds > 0 && seeds >= min_floor_seeds && rate.high < floor) return MapStop::kBelowFloor;
  // The wider half: near a proportion of 1 the upper half is 0 while the lower one is not.
  const double half = std::max(rate.high - rate.estimate, rate.estimate - rate.low);
  if (has_interval && rate.estimate > 0 && half <= precision * rate.estimate) return MapStop::kPrecise;
  return seeds >= max_seeds ? MapStop::kCap : MapStop::kGoOn;
}

const MapDef* FindMap(const std::string& name) {
  for (const MapDef& m : Maps())
    if (m.name == name) return &m;
  return nullptr;
}

Result<MapResult> RunMap(const MapOptions& o) {
  MapResult r;
  if (Status s = CheckOptions(o, &r.def); !s.ok()) return s;
  r.max_seeds = o.max_seeds > 0 ? o.max_seeds : r.def->max_seeds;
  r.batch = o.batch > 0 ? o.batch : r.def->batch;
  Result<std::vector<RunSpec>> specs = PointSpecs(o, &r);
  if (!specs.ok()) return specs.status();
  std::vector<PointRuns> runs(r.points.size());
  Progress progress;
  progress.on = o.progress;
  const int rounds = (r.max_seeds + r.batch - 1) / r.batch;  // every round adds a batch to each point going on
  const int min_floor_seeds = r.def->unit == MapUnit::kAcquisition ? kMinFloorSeedsPerAcquisition : 1;
  for (int round = 1; round <= rounds; ++round) {
    size_t going = 0;
    for (const MapPoint& p : r.points) going += p.stop == MapStop::kGoOn ? 1 : 0;
    if (going == 0) break;
    RunRound(o, *specs, runs, &r, &progress);
    going = 0;
    for (size_t i = 0; i < r.points.size(); ++i) {
      MapPoint& p = r.points[i];
      if (p.stop != MapStop::kGoOn) continue;
      Summarise(r.def->unit, runs[i], &p);
      p.stop = StopRule(p.rate(r.def->curves[p.curve].metric), p.seeds, r.max_seeds, o.precision, o.floor,
                        min_floor_seeds);
      if (p.stop == MapStop::kGoOn) ++going;
    }
    progress.Round(r, round, going, r.batch);
  }
  return r;
}

}  // namespace locklab
