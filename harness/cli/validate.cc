#include "harness/cli/validate.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "algorithms/lock.h"
#include "harness/cli/suite.h"
#include "harness/cli/validate_recorded.h"
#include "harness/report/report.h"
#include "harness/run/build_info.h"
#include "harness/run/config.h"
#include "harness/run/host_info.h"

namespace locklab {
namespace {

constexpr int kQuickSeeds = 3;
constexpr int kMaxSeeds = 1000;
constexpr int64_t kGcPauseTtlMs = 200;  // the gc-pause group's TTL; pauses are multiples of it
const std::vector<double> kPauseOverTtl = {0.5, 0.9, 1.1, 1.5, 2};
const std::vector<double> kQuickPauseOverTtl = {0.5, 1.5};

Result<ConfigFile> LoadExperiment(const std::string& name) {
  Result<ConfigFile> cfg = LoadConfigFile(std::string(SourceDir()) + "/harness/experiments/" + name);
  if (cfg.ok()) cfg->seeds.clear();  // validate sets its own
  return cfg;
}

Result<ValidateGroup> RetryGroup(bool quick) {
  ValidateGroup g{"retry",
                  "the retry study's load (1000 clients, 2000 requests, seckill), every strategy and the fifo lock", 3,
                  {}};
  const std::vector<MetricId> metrics = {MetricId::kAcquisitionsPerS, MetricId::kRequestP50Ms,
                                         MetricId::kRequestP99Ms, MetricId::kCommandsPerAcquisition,
                                         MetricId::kFailedRequests, MetricId::kClientCpuPerAcquisitionUs};
  Result<ConfigFile> strategies = LoadExperiment("retry-strategies.json");
  if (!strategies.ok()) return strategies.status();
  for (RunSpec& s : ExpandSweep(*strategies)) {
    std::string name = s.retry;
    for (const auto& [k, v] : s.retry_options.values()) name += (name == s.retry ? ":" : ",") + k + "=" + v;
    g.experiments.push_back({name, s, metrics});
  }
  Result<ConfigFile> fifo = LoadExperiment("retry-fifo.json");
  if (!fifo.ok()) return fifo.status();
  for (RunSpec& s : ExpandSweep(*fifo)) g.experiments.push_back({s.algorithm + "-lock", s, metrics});
  if (quick) {
    std::erase_if(g.experiments, [](const ValidateExperiment& e) { return e.name != "no3" && e.name != "fifo-lock"; });
    for (ValidateExperiment& e : g.experiments) {
      e.base.clients = 20;
      e.base.requests = 40;
    }
  }
  return g;
}

ValidateGroup SuiteGroup(bool quick) {
  ValidateGroup g{"suite", "the suite's fault presets x every algorithm (10 clients, 200 requests, counter)", 10, {}};
  SuiteOptions o;
  if (quick) {
    o.clients = 3;
    o.requests = 20;
  }
  for (const SuitePreset& p : SuitePresets()) {
    if (quick && p.name != "none" && p.name != "gc-pause") continue;
    for (const AlgorithmInfo& a : Algorithms()) {
      if (quick && a.name != "token") continue;
      g.experiments.push_back({p.name + "/" + a.name, SuiteSpec(o, "sim", p, a.name),
                               {MetricId::kViolationsPerAcquisition, MetricId::kLostUpdatesPerAcquisition,
                                MetricId::kAcquisitions, MetricId::kAcquireP99Ms}});
    }
  }
  return g;
}

ValidateGroup GcPauseGroup(bool quick) {
  ValidateGroup g{"gc-pause",
                  "token lock, ttl 200 ms, pauses of 0.5..2 x ttl, 1 per client per second (10 clients, 200 requests)",
                  10,
                  {}};
  for (double ratio : quick ? kQuickPauseOverTtl : kPauseOverTtl) {
    RunSpec s;
    s.algorithm = "token";
    s.workload = "counter";
    s.clients = quick ? 3 : 10;
    s.requests = quick ? 20 : 200;
    s.hold_ms = 20;
    s.ttl_ms = kGcPauseTtlMs;
    s.faults.gc_pause_ms = static_cast<int64_t>(ratio * static_cast<double>(kGcPauseTtlMs) + 0.5);
    s.faults.gc_pause_rate = 1.0;
    char name[32];
    std::snprintf(name, sizeof name, "pause/ttl=%g", ratio);
    g.experiments.push_back({name, s, {MetricId::kViolationsPerAcquisition}});
  }
  return g;
}

std::string Secs(double s) {
  char buf[32];
  if (s < 100)
    std::snprintf(buf, sizeof buf, "%.0f s", s);
  else
    std::snprintf(buf, sizeof buf, "%.0f min", s / 60);
  return buf;
}

// Wall-time bookkeeping for the progress lines: the ETA uses each backend's own mean run time.
struct Progress {
  bool on = true;
  size_t total = 0, done = 0, sim_left = 0, real_left = 0;
  double sim_wall_s = 0, real_wall_s = 0;
  size_t sim_done = 0, real_done = 0;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();

  void Done(const ExperimentResult& e, const ValidateRun& run) {
    ++done;
    const bool sim = run.backend == "sim";
    (sim ? sim_wall_s : real_wall_s) += run.wall_s;
    ++(sim ? sim_done : real_done);
    --(sim ? sim_left : real_left);
    if (!on) return;
    const double all_mean_s = (sim_wall_s + real_wall_s) / static_cast<double>(sim_done + real_done);
    const double sim_mean_s = sim_done ? sim_wall_s / static_cast<double>(sim_done) : all_mean_s;
    const double real_mean_s = real_done ? real_wall_s / static_cast<double>(real_done) : all_mean_s;
    const double eta_s = sim_mean_s * static_cast<double>(sim_left) + real_mean_s * static_cast<double>(real_left);
    const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "[%zu/%zu] %s %s %s seed %llu: %s in %.2f s; elapsed %s, ETA %s\n", done, total,
                 e.group.c_str(), e.name.c_str(), run.backend.c_str(), static_cast<unsigned long long>(run.seed),
                 run.completed ? "done" : ("FAILED (" + run.error + ")").c_str(), run.wall_s, Secs(elapsed_s).c_str(),
                 Secs(eta_s).c_str());
  }
};

struct PlannedExperiment {
  ExperimentResult result;
  const ValidateExperiment* experiment;
  std::vector<RunSpec> sim, real;  // resolved, by seed
  std::optional<RecordedReal> recorded;  // --real-from found it: not run again (real is empty)
};

// Every spec resolved (and every recorded real figure found) before any run starts.
Result<std::vector<PlannedExperiment>> Plan(const std::vector<ValidateGroup>& groups, const ValidateOptions& o,
                                            const std::vector<RecordedValidation>& recorded) {
  std::vector<PlannedExperiment> plan;
  for (const ValidateGroup& g : groups) {
    if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), g.name) == o.only.end()) continue;
    const int seeds = o.seeds > 0 ? o.seeds : (o.quick ? kQuickSeeds : g.default_seeds);
    for (const ValidateExperiment& e : g.experiments) {
      PlannedExperiment p{{g.name, e.name, e.base, {}, {}, {}}, &e, {}, {}, {}};
      p.result.base.profile = o.profile;  // the config the JSON records: the simulator's profile too
      for (int i = 1; i <= seeds; ++i) {
        p.result.seeds.push_back(static_cast<uint64_t>(i));
        for (const char* backend : {"sim", "redis"}) {
          RunSpec s = e.base;
          s.backend = backend;
          s.seed = static_cast<uint64_t>(i);
          s.profile = o.profile;
          if (Status st = ResolveSpec(&s); !st.ok()) return st.Prefixed(g.name + " " + e.name);
          (s.backend == "sim" ? p.sim : p.real).push_back(s);
        }
      }
      if (!recorded.empty()) {
        Result<std::optional<RecordedReal>> r =
            recorded.size() == 1 ? recorded[0].Find(g.name, e.name, e.base, e.metrics, p.result.seeds)
                                 : FindPooled(recorded, g.name, e.name, e.base, e.metrics);
        if (!r.ok()) return r.status();
        p.recorded = std::move(*r);
        if (p.recorded) p.real.clear();
        if (p.recorded) p.result.real_sources = p.recorded->sources;
      }
      plan.push_back(std::move(p));
    }
  }
  return plan;
}

void RunExperiment(PlannedExperiment* p, Progress* progress, bool* all_completed) {
  const size_t seeds = p->sim.size();
  std::vector<std::vector<std::optional<Figure>>> sim(p->experiment->metrics.size()),
      real(p->experiment->metrics.size());
  for (size_t i = 0; i < seeds; ++i) {
    std::vector<const RunSpec*> specs = {&p->sim[i]};
    if (!p->recorded) specs.push_back(&p->real[i]);
    for (const RunSpec* s : specs) {
      const auto t0 = std::chrono::steady_clock::now();
      const RunResult r = RunOne(*s, false);
      ValidateRun run{s->backend, s->seed, r.completed, r.error, ReplayCommand(r.spec),
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
      *all_completed = *all_completed && r.completed;
      for (size_t m = 0; m < p->experiment->metrics.size(); ++m)
        (s->backend == "sim" ? sim : real)[m].push_back(FigureOf(p->experiment->metrics[m], r));
      p->result.runs.push_back(run);
      progress->Done(p->result, run);
    }
  }
  if (p->recorded) {
    real = p->recorded->by_metric;
    for (const ValidateRun& run : p->recorded->runs) {
      *all_completed = *all_completed && run.completed;
      p->result.runs.push_back(run);
    }
  }
  for (size_t m = 0; m < p->experiment->metrics.size(); ++m)
    p->result.metrics.push_back(
        JudgeMetric(p->experiment->metrics[m], p->result.base.requests, sim[m], real[m], p->result.real_sources));
}

}  // namespace

const MetricInfo& MetricInfoOf(MetricId id) {
  static const MetricInfo kInfo[] = {
      {"acquisitions_per_s", "acq/s", MetricKind::kMean},
      {"request_p50_ms", "req p50 ms", MetricKind::kMean},
      {"request_p99_ms", "req p99 ms", MetricKind::kMean},
      {"commands_per_acquisition", "cmds/acq", MetricKind::kMean},
      {"failed_requests", "failed req", MetricKind::kFailed},
      {"violations_per_acquisition", "viol/acq", MetricKind::kRate},
      {"lost_updates_per_acquisition", "lost/acq", MetricKind::kRate},
      {"acquisitions", "acquired", MetricKind::kMean},
      {"acquire_p99_ms", "acq p99 ms", MetricKind::kMean},
      {"client_cpu_per_acquisition_us", "cli us/acq", MetricKind::kMean},
  };
  return kInfo[static_cast<int>(id)];
}

const std::vector<std::string>& ValidateGroupNames() {
  static const std::vector<std::string> names = {"retry", "suite", "gc-pause"};
  return names;
}

Result<std::vector<ValidateGroup>> ValidateGroups(bool quick) {
  Result<ValidateGroup> retry = RetryGroup(quick);
  if (!retry.ok()) return retry.status();
  return std::vector<ValidateGroup>{*retry, SuiteGroup(quick), GcPauseGroup(quick)};
}

std::optional<Figure> FigureOf(MetricId id, const RunResult& r) {
  if (!r.completed) return std::nullopt;
  const CheckResult& c = r.check;
  const double acquired = static_cast<double>(c.liveness.acquired);
  const auto latency = [](const LatencySummary& l, double v) -> std::optional<Figure> {
    if (l.count == 0) return std::nullopt;
    return Figure{v, 1};
  };
  switch (id) {
    case MetricId::kAcquisitionsPerS:
      if (r.duration_us <= 0) return std::nullopt;
      return Figure{acquired / (static_cast<double>(r.duration_us) / 1e6), 1};
    case MetricId::kRequestP50Ms:
      return latency(c.latency.request, c.latency.request.p50);
    case MetricId::kRequestP99Ms:
      return latency(c.latency.request, c.latency.request.p99);
    case MetricId::kCommandsPerAcquisition:
      if (acquired == 0) return std::nullopt;
      return Figure{static_cast<double>(r.commands.total) / acquired, 1};
    case MetricId::kFailedRequests:
      return Figure{static_cast<double>(c.liveness.failed + c.liveness.unknown), 1};
    case MetricId::kViolationsPerAcquisition:
      return Figure{static_cast<double>(c.safety.violations), acquired};
    case MetricId::kLostUpdatesPerAcquisition:
      return Figure{static_cast<double>(c.resource.LostOrOversold()), acquired};
    case MetricId::kAcquisitions:
      return Figure{acquired, 1};
    case MetricId::kAcquireP99Ms:
      return latency(c.latency.acquire, c.latency.acquire.p99);
    case MetricId::kClientCpuPerAcquisitionUs:
      if (acquired == 0 || r.client_cpu_us < 0) return std::nullopt;
      return Figure{r.client_cpu_us / acquired, 1};
  }
  return std::nullopt;
}

MetricResult JudgeMetric(MetricId id, int64_t requests_per_run, const std::vector<std::optional<Figure>>& sim,
                         const std::vector<std::optional<Figure>>& real, const std::vector<int>& real_sittings) {
  MetricResult m{id, sim, real, {}, {}, {}, {}};
  const MetricKind kind = MetricInfoOf(id).kind;
  const auto sample = [kind](const std::vector<std::optional<Figure>>& figures, const std::vector<int>& sittings) {
    std::vector<double> values, trials;
    std::vector<int> sitting;
    for (size_t i = 0; i < figures.size(); ++i) {
      if (!figures[i]) continue;
      values.push_back(figures[i]->value);
      trials.push_back(figures[i]->trials);
      if (i < sittings.size()) sitting.push_back(sittings[i]);
    }
    if (!sittings.empty())
      return kind == MetricKind::kRate ? PooledRateSample(values, trials, sitting) : PooledMeanSample(values, sitting);
    return kind == MetricKind::kRate ? RateSample(values, trials) : MeanSample(values);
  };
  m.sim = sample(sim, {});
  m.real = sample(real, real_sittings);
  m.ratio = SimOverReal(kind, m.sim, m.real);
  m.verdict = Judge(kind, m.sim, m.real, requests_per_run);
  return m;
}

Status CheckValidateOptions(const ValidateOptions& o) {
  const auto& names = ValidateGroupNames();
  for (const std::string& g : o.only) {
    if (std::find(names.begin(), names.end(), g) == names.end())
      return Status::Invalid("--only: unknown group '" + g + "' (retry, suite or gc-pause)");
  }
  if (o.seeds < 0 || o.seeds > kMaxSeeds)
    return Status::Invalid("--seeds: " + std::to_string(o.seeds) + " is not in 1.." + std::to_string(kMaxSeeds));
  if (o.out.empty() || o.out.back() == '/' || std::filesystem::is_directory(o.out))
    return Status::Invalid("--out " + o.out + ": give a file name, not a directory");
  return Status::Ok();
}

Result<ValidationResult> RunValidation(const ValidateOptions& o) {
  if (Status s = CheckValidateOptions(o); !s.ok()) return s;
  Result<std::vector<ValidateGroup>> groups = ValidateGroups(o.quick);
  if (!groups.ok()) return groups.status();
  std::vector<RecordedValidation> recorded;
  for (const std::string& path : o.real_from) {
    Result<RecordedValidation> r = RecordedValidation::Load(path);
    if (!r.ok()) return r.status();
    recorded.push_back(std::move(*r));
  }
  Result<std::vector<PlannedExperiment>> plan = Plan(*groups, o, recorded);
  if (!plan.ok()) return plan.status();
  Progress progress;
  progress.on = o.progress;
  for (const PlannedExperiment& p : *plan) {
    progress.sim_left += p.sim.size();
    progress.real_left += p.real.size();
  }
  progress.total = progress.sim_left + progress.real_left;
  ValidationResult out;
  if (recorded.size() == 1) out.real_from = recorded[0].Source();
  if (recorded.size() > 1)
    for (const RecordedValidation& r : recorded) out.real_from.push_back(r.Source());
  const bool real_now = progress.real_left > 0;
  out.load_start = LoadAverageText();
  if (real_now) out.wake_start = ProbeWakeLateness();
  for (PlannedExperiment& p : *plan) {
    RunExperiment(&p, &progress, &out.all_completed);
    out.experiments.push_back(std::move(p.result));
  }
  out.load_end = LoadAverageText();
  if (real_now) out.wake_end = ProbeWakeLateness();
  return out;
}

}  // namespace locklab
