#include "harness/cli/scenario_cli.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "algorithms/lock.h"
#include "harness/cli/cli.h"
#include "harness/cli/sweep_run.h"
#include "harness/real/wake_probe.h"
#include "harness/report/report.h"
#include "harness/report/report_text.h"
#include "harness/run/config.h"
#include "harness/run/parallel_runs.h"
#include "harness/run/spec_fields.h"
#include "harness/scenario/scenario.h"
#include "harness/scenario/scenario_text.h"

namespace locklab {
namespace {

using nlohmann::json;


Status ParseParam(const std::string& text, Params* out) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    return Status::Invalid("--param " + text + ": expected NAME=NUMBER, e.g. --param ttl_ms=2000");
  const std::string value = text.substr(eq + 1);
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  if (value.empty() || end != value.c_str() + value.size() || !std::isfinite(v))
    return Status::Invalid("--param " + text + ": '" + value + "' is not a finite number");
  (*out)[text.substr(0, eq)] = v;
  return Status::Ok();
}

// --param K=V..., then --ttl-ms, --pause-ms, --delay-ms and --skew-ms.
Result<Params> ParseOverrides(const ScenarioFlags& f) {
  Params overrides;
  for (const auto& p : f.params) LOCKLAB_RETURN_IF_ERROR(ParseParam(p, &overrides));
  const std::pair<const char*, const std::optional<double>*> named[] = {
      {"ttl_ms", &f.ttl_ms}, {"pause_ms", &f.pause_ms}, {"delay_ms", &f.delay_ms}, {"skew_ms", &f.skew_ms}};
  for (const auto& [name, value] : named) {
    if (!value->has_value()) continue;
    if (!std::isfinite(**value)) {
      std::string flag = std::string("--") + name;
      std::replace(flag.begin(), flag.end(), '_', '-');
      return Status::Invalid(flag + ": '" + DoubleText(**value) + "' is not a finite number");
    }
    overrides[name] = **value;
  }
  return overrides;
}

// One run to do: a variant (or a variation of one) of a scenario on a backend.
struct Job {
  const Scenario* sc = nullptr;
  std::string backend;
  std::string label;  // "broken", or "broken [delay_ms=500]" for a variation
  std::string why;    // a variation's reason
  bool judged = true;
  ScenarioRun run;
  RunResult result;
  Verdict verdict;
};

// An expectation that judges nothing but makes Judge describe everything (runs with --algorithm).
Expectation ObserveAll(const ScenarioRun& run) {
  Expectation e;
  e.overlap = false;
  e.damage = false;
  if (run.liveness_bound_ms > 0) e.stuck = false;
  return e;
}

std::string ParamsText(const Params& p) {
  std::string s;
  for (const auto& [k, v] : p) s += (s.empty() ? "" : " ") + k + "=" + DoubleText(v);
  return s;
}

json ResultJson(const Job& j) {
  return {{"variant", j.run.variant},
          {"label", j.label},
          {"why", j.why},
          {"algorithm", AlgorithmLabel(j.run.spec)},
          {"params", j.run.params},
          {"judged", j.judged},
          {"expected", j.judged ? j.verdict.expected : ""},
          {"observed", j.verdict.observed},
          {"as_expected", j.judged && j.verdict.matches},
          {"mismatches", j.verdict.mismatches},
          {"replay", j.run.replay},
          {"spec", ToJson(j.run.spec)},
          {"timeline", ScenarioTimelineJson(j.run.client_names, j.result.events)}};
}

Status WriteScenarioReport(const Scenario& sc, const std::string& backend, const std::vector<Job*>& jobs,
                           const Params& overrides, const ScenarioFlags& f, const std::string& path) {
  std::vector<RunResult> runs;
  json results = json::array();
  for (Job* j : jobs) {
    results.push_back(ResultJson(*j));  // the timeline, from the events
    // The report's runs need no events: copy the result without them.
    std::vector<Event> events = std::move(j->result.events);
    runs.push_back(j->result);
    j->result.events = std::move(events);
  }
  json report = BuildReportHead(runs, MakeReportContext(runs));  // its runs: RunText, as a sweep's
  if (backend == "redis") report["context"]["machine_after"] = MachineNowJson();  // as `locklab run`'s
  report["config"] = {{"scenario", sc.doc}, {"params", overrides}, {"seed", f.seed}, {"backend", backend}};
  if (backend == "sim") {  // the jobs share it: every run's spec has the profile and its name
    report["config"]["profile"] = f.profile;
    report["config"]["profile_name"] = jobs.empty() ? "" : jobs[0]->run.spec.profile_name;
  }
  if (f.trace != kDefaultTrace) report["config"]["trace"] = f.trace;  // absent: "commands"
  report["scenario"] = {{"id", sc.id},         {"title", sc.title},     {"source", sc.source},
                        {"story", sc.story},   {"file", sc.path},       {"results", results}};
  return WriteFileAtomic(path, ReportTextWithRuns(report, std::span<const RunResult>(runs)));
}

void PrintScenarioHeader(const Scenario& sc) {
  std::printf("scenario %s: %s (source: %s)\n", sc.id.c_str(), sc.title.c_str(),
              sc.source.empty() ? "-" : sc.source.c_str());
  if (!sc.story.empty()) {
    std::string story = "  " + sc.story;
    for (size_t p = story.find('\n'); p != std::string::npos; p = story.find('\n', p + 3)) story.replace(p, 1, "\n  ");
    std::printf("%s\n", story.c_str());
  }
}

void PrintJob(const Job& j, bool timeline) {
  std::printf("\n== %s: %s on %s  (%s) ==\n", j.label.c_str(), AlgorithmLabel(j.run.spec).c_str(), j.backend.c_str(),
              ParamsText(j.run.params).c_str());
  if (!j.why.empty()) std::printf("   %s\n", j.why.c_str());
  if (timeline)
    std::fputs(ScenarioTimelineTable(j.run.client_names, j.result.events, HoldersAllowed(j.run.spec)).c_str(), stdout);
  if (j.judged) {
    std::printf("expected: %s\nobserved: %s\nverdict:  %s\n", j.verdict.expected.c_str(), j.verdict.observed.c_str(),
                j.verdict.matches ? "as expected" : "DIFFERS");
    for (const auto& m : j.verdict.mismatches) std::printf("  - %s\n", m.c_str());
  } else {
    std::printf("observed: %s (nothing expected: --algorithm replaces the scenario's)\n", j.verdict.observed.c_str());
  }
  for (const auto& n : j.result.notes) std::printf("note: %s\n", n.c_str());
  std::printf("replay: %s\n", j.run.replay.c_str());
}

// What a `locklab scenario` command will do: every job compiled, before anything runs.
struct Plan {
  std::vector<Scenario> scenarios;
  std::vector<std::string> backends;
  Params overrides;
  bool all = false;
  std::vector<Job> jobs;
};

Result<std::vector<std::string>> ParseBackends(const std::string& backend) {
  if (backend == "both") return std::vector<std::string>{"sim", "redis"};
  if (backend == "sim" || backend == "redis") return std::vector<std::string>{backend};
  return Status::Invalid("--backend: unknown backend '" + backend + "' (sim, redis or both)");
}

// The scenario(s) named on the command line, and the checks that need them.
Status LoadRequested(const ScenarioFlags& f, Plan* plan) {
  const std::string dir = f.scenario_dir.empty() ? DefaultScenarioDir() : f.scenario_dir;
  if (plan->all) {
    Result<std::vector<Scenario>> all = LoadScenarioDir(dir);
    if (!all.ok()) return all.status();
    plan->scenarios = std::move(all).value();
    if (!plan->overrides.empty())
      return Status::Invalid("parameters apply to one scenario: give its id instead of `all`");
    if (!f.out.empty()) return Status::Invalid("--out names one report: with `all`, use --out-dir");
    return Status::Ok();
  }
  Result<Scenario> sc = FindScenario(f.name, dir);
  if (!sc.ok()) return sc.status();
  plan->scenarios.push_back(std::move(sc).value());
  if (!f.out.empty() && plan->backends.size() > 1) return Status::Invalid("--out names one report: give one --backend");
  return Status::Ok();
}

bool Selected(const ScenarioFlags& f, const std::string& variant) {
  return f.variants.empty() || std::find(f.variants.begin(), f.variants.end(), variant) != f.variants.end();
}

// The scenario's timeline with another algorithm (--algorithm): observe everything, judge nothing.
Status UseAlgorithm(const std::string& algorithm, Job* j) {
  Result<AlgorithmChoice> c = ParseAlgorithmChoice(algorithm);
  if (!c.ok()) return c.status();
  const AlgorithmInfo* alg = FindAlgorithm(c->name);
  if (alg == nullptr) return Status::Invalid("--algorithm: unknown algorithm '" + c->name + "' (see `locklab list`)");
  ScenarioRun observed = j->run;
  observed.expect = ObserveAll(j->run);
  observed.spec.algorithm = c->name;
  observed.spec.algorithm_options = c->options;
  observed.spec.nodes = std::max(observed.spec.nodes, alg->nodes);
  LOCKLAB_RETURN_IF_ERROR(ResolveSpec(&observed.spec).Prefixed("--algorithm " + algorithm));
  observed.replay += " --algorithm " + ShellQuote(algorithm);
  j->run = std::move(observed);
  j->judged = false;
  j->label += " with " + algorithm;
  return Status::Ok();
}

// --profile: the simulator's costs for a run (checked, and its name resolved, here), and in its
// replay command unless it is the default.
Status UseProfile(const std::string& profile, ScenarioRun* run) {
  if (profile == run->spec.profile) return Status::Ok();
  run->spec.profile = profile;
  LOCKLAB_RETURN_IF_ERROR(ResolveSpec(&run->spec));
  run->replay += " --profile " + ShellQuote(profile);
  return Status::Ok();
}

// --trace: what the run's history keeps (checked here), in its replay command unless it is the
// default. Timelines show no commands with "locks", and only the checkers' events with "none".
Status UseTrace(const std::string& trace, ScenarioRun* run) {
  if (trace == run->spec.trace) return Status::Ok();
  run->spec.trace = trace;
  LOCKLAB_RETURN_IF_ERROR(ResolveSpec(&run->spec));
  run->replay += " --trace " + ShellQuote(trace);
  return Status::Ok();
}

// The jobs of one scenario on one backend: its variants, then (--also) its variations.
Status AddJobs(const ScenarioFlags& f, const Scenario& sc, const std::string& backend, const Params& overrides,
               std::vector<Job>* jobs) {
  for (const ScenarioVariant& var : sc.variants) {
    if (!Selected(f, var.name)) continue;
    Job j;
    j.sc = &sc;
    j.backend = backend;
    j.label = var.name;
    Result<ScenarioRun> run = CompileVariant(sc, var.name, overrides, backend, f.seed, nullptr);
    if (!run.ok()) return run.status();
    j.run = std::move(run).value();
    LOCKLAB_RETURN_IF_ERROR(UseProfile(f.profile, &j.run));
    LOCKLAB_RETURN_IF_ERROR(UseTrace(f.trace, &j.run));
    if (!f.algorithm.empty()) LOCKLAB_RETURN_IF_ERROR(UseAlgorithm(f.algorithm, &j));
    jobs->push_back(std::move(j));
  }
  // Variations explore numbers around a threshold: that is the simulator's job (exact times).
  if (!f.also || !f.algorithm.empty() || backend != "sim") return Status::Ok();
  for (const Variation& v : sc.also) {
    if (!Selected(f, v.variant)) continue;
    Params merged = v.params;
    for (const auto& [k, x] : overrides) merged[k] = x;
    Job j;
    j.sc = &sc;
    j.backend = backend;
    j.label = v.variant + " [" + ParamsText(v.params) + "]";
    j.why = v.why;
    Result<ScenarioRun> run = CompileVariant(sc, v.variant, merged, backend, f.seed, &v.expect);
    if (!run.ok()) return run.status();
    j.run = std::move(run).value();
    LOCKLAB_RETURN_IF_ERROR(UseProfile(f.profile, &j.run));
    LOCKLAB_RETURN_IF_ERROR(UseTrace(f.trace, &j.run));
    jobs->push_back(std::move(j));
  }
  return Status::Ok();
}

// Everything is compiled first: bad input is reported before anything runs.
Result<Plan> PlanScenarios(const ScenarioFlags& f) {
  Plan plan;
  Result<Params> overrides = ParseOverrides(f);
  if (!overrides.ok()) return overrides.status();
  plan.overrides = std::move(overrides).value();
  Result<std::vector<std::string>> backends = ParseBackends(f.backend);
  if (!backends.ok()) return backends.status();
  plan.backends = std::move(backends).value();
  plan.all = f.name == "all";
  LOCKLAB_RETURN_IF_ERROR(LoadRequested(f, &plan));
  for (const Scenario& sc : plan.scenarios) {
    for (const std::string& backend : plan.backends) {
      if (!sc.runs_on(backend)) {
        if (plan.all) continue;  // the matrix covers what applies
        return Status::Invalid("scenario " + sc.id + " runs on the simulator only" +
                               (sc.redis_note.empty() ? "" : " (" + sc.redis_note + ")"));
      }
      LOCKLAB_RETURN_IF_ERROR(AddJobs(f, sc, backend, plan.overrides, &plan.jobs));
    }
  }
  if (plan.jobs.empty()) return Status::Invalid("nothing to run: no variant matches --variant");
  return plan;
}

// Runs every job with its progress lines; true when every verdict is the expected one. With
// --jobs N (simulator only) N runs go on at once; results are judged and progress is printed in
// job order, so the output is that of --jobs 1.
bool RunJobs(const ScenarioFlags& f, std::vector<Job>* jobs) {
  bool all_ok = true;
  int threads = f.jobs;
  for (const Job& j : *jobs)
    if (j.backend != "sim") threads = 1;  // real servers: one run at a time
  auto run = [&](size_t i) { return RunOne((*jobs)[i].run.spec, false, /*keep_events=*/true); };
  auto consume = [&](size_t i, RunResult&& r) {
    Job& j = (*jobs)[i];
    if (!f.no_progress)
      std::fprintf(stderr, "[%zu/%zu] %s %s on %s ...\n", i + 1, jobs->size(), j.sc->id.c_str(), j.label.c_str(),
                   j.backend.c_str());
    j.result = std::move(r);
    j.result.replay = j.run.replay;
    j.verdict = Judge(j.run, j.result);
    if (!j.result.completed) {
      all_ok = false;
      std::fprintf(stderr, "locklab: %s %s on %s did not complete: %s\n", j.sc->id.c_str(), j.label.c_str(),
                   j.backend.c_str(), j.result.error.c_str());
    } else if (j.judged && !j.verdict.matches) {
      all_ok = false;
    }
    if (!f.no_progress)
      std::fprintf(stderr, "      %s\n", !j.judged ? j.verdict.observed.c_str()
                                         : j.verdict.matches ? "as expected" : "DIFFERS from the expected verdict");
  };
  RunInOrder(jobs->size(), threads, 8 * static_cast<size_t>(std::max(threads, 1)), run, consume);
  return all_ok;
}

// One report per scenario and backend; the paths written.
Result<std::vector<std::string>> WriteReports(const ScenarioFlags& f, Plan& plan) {
  std::vector<std::string> written;
  for (const Scenario& sc : plan.scenarios) {
    for (const std::string& backend : plan.backends) {
      std::vector<Job*> group;
      for (Job& j : plan.jobs)
        if (j.sc == &sc && j.backend == backend) group.push_back(&j);
      if (group.empty()) continue;
      const std::string path = !f.out.empty() ? f.out : f.out_dir + "/" + backend + "/" + sc.id + ".json";
      LOCKLAB_RETURN_IF_ERROR(WriteScenarioReport(sc, backend, group, plan.overrides, f, path));
      written.push_back(path);
    }
  }
  return written;
}

// `all`: the matrix, the count, and each run that differs with its replay command.
void PrintMatrix(const ScenarioFlags& f, const std::vector<Job>& jobs) {
  std::vector<MatrixRow> rows;
  for (const Job& j : jobs)
    rows.push_back({j.sc->id, j.label, j.backend, AlgorithmLabel(j.run.spec), j.verdict, &j.result, j.judged});
  std::fputs(ScenarioMatrix(rows).c_str(), stdout);
  size_t ok = 0;
  for (const Job& j : jobs) ok += j.judged && j.verdict.matches && j.result.completed ? 1 : 0;
  std::printf("%zu of %zu runs as expected; reports in %s/<backend>/<id>.json\n", ok, jobs.size(), f.out_dir.c_str());
  for (const Job& j : jobs)
    if (!(j.verdict.matches && j.result.completed))
      std::printf("DIFFERS: %s %s on %s: %s\n  replay: %s\n", j.sc->id.c_str(), j.label.c_str(), j.backend.c_str(),
                  j.verdict.mismatches.empty() ? "" : j.verdict.mismatches[0].c_str(), j.run.replay.c_str());
}

// One scenario: its header, each run (or one verdict line each with --quiet), the reports.
void PrintOne(const ScenarioFlags& f, const Plan& plan, const std::vector<std::string>& written) {
  if (!f.quiet) PrintScenarioHeader(plan.scenarios[0]);
  for (const Job& j : plan.jobs) {
    if (f.quiet) {
      std::printf("%s %s on %s: %s\n", j.sc->id.c_str(), j.label.c_str(), j.backend.c_str(),
                  !j.judged           ? j.verdict.observed.c_str()
                  : j.verdict.matches ? "as expected"
                                      : "DIFFERS");
      continue;
    }
    PrintJob(j, !f.no_timeline);
  }
  for (const auto& p : written) std::printf("report: %s\n", p.c_str());
}

}  // namespace

void AddScenarioFlags(CLI::App* app, ScenarioFlags* f) {
  // An empty name would mean "none given" (--algorithm) or the file system's root (--out-dir).
  const CLI::Validator non_empty(
      [](std::string& s) -> std::string { return s.empty() ? "give a non-empty value" : ""; }, "");
  app->add_option("scenario", f->name, "a scenario id (see `locklab list`), `all`, or a scenario file (.json)")
      ->required()
      ->type_name("ID|all|FILE");
  app->add_option("--variant", f->variants, "run only this variant (repeatable; default: every variant)")
      ->type_name("NAME")
      ->allow_extra_args(false);
  app->add_option("--algorithm", f->algorithm,
                  "run the scenario's timeline with this algorithm instead (NAME or NAME:opt=v,...); nothing is "
                  "judged then")
      ->type_name("ALG")
      ->check(non_empty);
  app->add_option("--backend", f->backend, "sim, redis (real redis-server processes) or both")->capture_default_str();
  app->add_option("--profile", f->profile,
                  "simulator cost profile: default (harness/profiles/default.json), legacy (the old fixed costs) or "
                  "a profile FILE")
      ->type_name("NAME|FILE")
      ->capture_default_str();
  app->add_option("--trace", f->trace,
                  "what the histories keep: commands (timelines show every Redis command), locks (lock, workload "
                  "and fault events) or none (only what the checkers read); the verdicts are the same")
      ->type_name("MODE")
      ->capture_default_str();
  app->add_option("--seed", f->seed, "seed of every run")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            // CLI11 would read "-1" into the unsigned seed as 2^64-1, and 2^64 as 2^64-1.
            uint64_t v = 0;
            auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
            if (ec == std::errc::result_out_of_range) return "'" + s + "' is out of range";
            return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos
                       ? std::string()
                       : "'" + s + "' is not a non-negative integer";
          },
          ""));
  app->add_option("--param", f->params, "set a scenario parameter NAME=NUMBER (repeatable; see the scenario file)")
      ->type_name("K=V")
      ->allow_extra_args(false);
  app->add_option("--ttl-ms", f->ttl_ms, "same as --param ttl_ms=MS")->type_name("MS");
  app->add_option("--pause-ms", f->pause_ms, "same as --param pause_ms=MS")->type_name("MS");
  app->add_option("--delay-ms", f->delay_ms, "same as --param delay_ms=MS")->type_name("MS");
  app->add_option("--skew-ms", f->skew_ms, "same as --param skew_ms=MS")->type_name("MS");
  app->add_flag("--also", f->also,
                "also run the scenario's variations on the simulator (other numbers that must, or must not, cross the "
                "threshold)");
  app->add_option("--out", f->out, "report file (one scenario, one backend; default OUT_DIR/<backend>/<id>.json)")
      ->type_name("FILE")
      ->check(non_empty);
  app->add_option("--out-dir", f->out_dir, "reports go to OUT_DIR/<backend>/<id>.json")
      ->capture_default_str()
      ->type_name("DIR")
      ->check(non_empty);
  app->add_option("--scenario-dir", f->scenario_dir,
                  "where scenario files are read from (default: $LOCKLAB_SCENARIOS, else the source tree's "
                  "harness/scenarios)")
      ->type_name("DIR")
      ->check(non_empty);
  app->add_flag("--no-timeline", f->no_timeline, "no timeline tables (one scenario)");
  app->add_flag("--quiet", f->quiet, "print only the verdicts (and the matrix for `all`)");
  app->add_flag("--no-progress", f->no_progress, "no progress lines on stderr");
  f->jobs = DefaultJobs();
  app->add_option("--jobs", f->jobs,
                  "simulator runs at the same time (threads; default: the cores; the output is the same for any N; "
                  "real-Redis runs "
                  "go one at a time)")
      ->type_name("N")
      ->check(JobsRange());
}

int ScenarioCommand(const ScenarioFlags& f) {
  Result<Plan> plan = PlanScenarios(f);
  if (!plan.ok()) return BadInput(plan.status().message());
  const bool all_ok = RunJobs(f, &plan->jobs);
  Result<std::vector<std::string>> written = WriteReports(f, *plan);
  if (!written.ok()) {
    std::fprintf(stderr, "locklab: %s\n", written.status().message().c_str());
    return kExitInternal;
  }
  if (plan->all)
    PrintMatrix(f, plan->jobs);
  else
    PrintOne(f, *plan, *written);
  std::fflush(stdout);
  return all_ok ? kExitOk : kExitInternal;
}

std::string ScenarioListText(const std::string& dir) {
  Result<std::vector<Scenario>> loaded = LoadScenarioDir(dir);
  if (!loaded.ok()) return "  (cannot read scenarios: " + loaded.status().message() + ")\n";
  const std::vector<Scenario>& all = *loaded;
  size_t w = 0;
  for (const auto& sc : all) w = std::max(w, sc.id.size());
  std::string out;
  for (const auto& sc : all) {
    std::string line = "  " + sc.id + std::string(w - sc.id.size() + 2, ' ');
    line += sc.runs_on("redis") ? "sim+redis  " : "sim        ";
    line += sc.title + "\n";
    out += line;
  }
  return out;
}

}  // namespace locklab
