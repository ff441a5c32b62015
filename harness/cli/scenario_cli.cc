#include "harness/cli/scenario_cli.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "algorithms/lock.h"
#include "harness/cli/cli.h"
#include "harness/run/config.h"
#include "harness/report/report.h"
#include "harness/report/report_text.h"
#include "harness/scenario/scenario.h"
#include "harness/scenario/scenario_text.h"
#include "harness/run/spec_fields.h"

namespace locklab {
namespace {

using nlohmann::json;

int BadInput(std::string msg) {
  for (char& c : msg)
    if (c == '\n') c = ' ';
  std::fprintf(stderr, "locklab: %s\n", msg.c_str());
  return kExitBadInput;
}

bool ParseParam(const std::string& text, Params* out, std::string* error) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    *error = "--param " + text + ": expected NAME=NUMBER, e.g. --param ttl_ms=2000";
    return false;
  }
  const std::string value = text.substr(eq + 1);
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  if (value.empty() || end != value.c_str() + value.size()) {
    *error = "--param " + text + ": '" + value + "' is not a number";
    return false;
  }
  (*out)[text.substr(0, eq)] = v;
  return true;
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

bool WriteScenarioReport(const Scenario& sc, const std::string& backend, const std::vector<Job*>& jobs,
                         const Params& overrides, uint64_t seed, const std::string& path, std::string* error) {
  std::vector<RunResult> runs;
  json results = json::array();
  for (Job* j : jobs) {
    results.push_back(ResultJson(*j));  // the timeline, from the events
    // The report's runs need no events: copy the result without them.
    std::vector<Event> events = std::move(j->result.events);
    runs.push_back(j->result);
    j->result.events = std::move(events);
  }
  json report = BuildReport(runs, MakeReportContext(runs));
  report["config"] = {{"scenario", sc.doc}, {"params", overrides}, {"seed", seed}, {"backend", backend}};
  report["scenario"] = {{"id", sc.id},         {"title", sc.title},     {"source", sc.source},
                        {"story", sc.story},   {"file", sc.path},       {"results", results}};
  return WriteFileAtomic(path, ReportText(report), error);
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
  if (timeline) std::fputs(ScenarioTimelineTable(j.run.client_names, j.result.events).c_str(), stdout);
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

}  // namespace

void AddScenarioFlags(CLI::App* app, ScenarioFlags* f) {
  app->add_option("scenario", f->name, "a scenario id (see `locklab list`), `all`, or a scenario file (.json)")
      ->required()
      ->type_name("ID|all|FILE");
  app->add_option("--variant", f->variants, "run only this variant (repeatable; default: every variant)")
      ->type_name("NAME")
      ->allow_extra_args(false);
  app->add_option("--algorithm", f->algorithm,
                  "run the scenario's timeline with this algorithm instead (NAME or NAME:opt=v,...); nothing is "
                  "judged then")
      ->type_name("ALG");
  app->add_option("--backend", f->backend, "sim, redis (real redis-server processes) or both")->capture_default_str();
  app->add_option("--seed", f->seed, "seed of every run")->capture_default_str();
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
      ->type_name("FILE");
  app->add_option("--out-dir", f->out_dir, "reports go to OUT_DIR/<backend>/<id>.json")
      ->capture_default_str()
      ->type_name("DIR");
  app->add_option("--scenario-dir", f->scenario_dir,
                  "where scenario files are read from (default: $LOCKLAB_SCENARIOS, else the source tree's "
                  "harness/scenarios)")
      ->type_name("DIR");
  app->add_flag("--no-timeline", f->no_timeline, "no timeline tables (one scenario)");
  app->add_flag("--quiet", f->quiet, "print only the verdicts (and the matrix for `all`)");
  app->add_flag("--no-progress", f->no_progress, "no progress lines on stderr");
}

int ScenarioCommand(const ScenarioFlags& f) {
  std::string error;
  Params overrides;
  for (const auto& p : f.params)
    if (!ParseParam(p, &overrides, &error)) return BadInput(error);
  if (f.ttl_ms) overrides["ttl_ms"] = *f.ttl_ms;
  if (f.pause_ms) overrides["pause_ms"] = *f.pause_ms;
  if (f.delay_ms) overrides["delay_ms"] = *f.delay_ms;
  if (f.skew_ms) overrides["skew_ms"] = *f.skew_ms;
  std::vector<std::string> backends;
  if (f.backend == "both") backends = {"sim", "redis"};
  else if (f.backend == "sim" || f.backend == "redis") backends = {f.backend};
  else return BadInput("--backend: unknown backend '" + f.backend + "' (sim, redis or both)");

  const std::string dir = f.scenario_dir.empty() ? DefaultScenarioDir() : f.scenario_dir;
  const bool all = f.name == "all";
  std::vector<Scenario> scenarios;
  if (all) {
    if (!LoadScenarioDir(dir, &scenarios, &error)) return BadInput(error);
    if (!overrides.empty()) return BadInput("parameters apply to one scenario: give its id instead of `all`");
    if (!f.out.empty()) return BadInput("--out names one report: with `all`, use --out-dir");
  } else {
    scenarios.emplace_back();
    if (!FindScenario(f.name, dir, &scenarios.back(), &error)) return BadInput(error);
    if (!f.out.empty() && backends.size() > 1) return BadInput("--out names one report: give one --backend");
  }

  // Compile everything first: bad input is reported before anything runs.
  std::vector<Job> jobs;
  for (const Scenario& sc : scenarios) {
    for (const std::string& backend : backends) {
      if (!sc.runs_on(backend)) {
        if (all) continue;  // the matrix covers what applies
        return BadInput("scenario " + sc.id + " runs on the simulator only" +
                        (sc.redis_note.empty() ? "" : " (" + sc.redis_note + ")"));
      }
      for (const ScenarioVariant& var : sc.variants) {
        if (!f.variants.empty() && std::find(f.variants.begin(), f.variants.end(), var.name) == f.variants.end())
          continue;
        Job j;
        j.sc = &sc;
        j.backend = backend;
        j.label = var.name;
        if (!CompileVariant(sc, var.name, overrides, backend, f.seed, nullptr, &j.run, &error))
          return BadInput(error);
        if (!f.algorithm.empty()) {
          // The scenario's timeline with another algorithm: observe everything, judge nothing.
          AlgorithmChoice c;
          if (!ParseAlgorithmChoice(f.algorithm, &c, &error)) return BadInput(error);
          const AlgorithmInfo* alg = FindAlgorithm(c.name);
          if (alg == nullptr) return BadInput("--algorithm: unknown algorithm '" + c.name + "' (see `locklab list`)");
          ScenarioRun observed = j.run;
          observed.expect = ObserveAll(j.run);
          observed.spec.algorithm = c.name;
          observed.spec.algorithm_options = c.options;
          observed.spec.nodes = std::max(observed.spec.nodes, alg->nodes);
          if (!ResolveSpec(&observed.spec, &error)) return BadInput("--algorithm " + f.algorithm + ": " + error);
          observed.replay += " --algorithm " + ShellQuote(f.algorithm);
          j.run = std::move(observed);
          j.judged = false;
          j.label += " with " + f.algorithm;
        }
        jobs.push_back(std::move(j));
      }
      // Variations explore numbers around a threshold: that is the simulator's job (exact times).
      if (!f.also || !f.algorithm.empty() || backend != "sim") continue;
      for (const Variation& v : sc.also) {
        if (!f.variants.empty() && std::find(f.variants.begin(), f.variants.end(), v.variant) == f.variants.end())
          continue;
        Params merged = v.params;
        for (const auto& [k, x] : overrides) merged[k] = x;
        Job j;
        j.sc = &sc;
        j.backend = backend;
        j.label = v.variant + " [" + ParamsText(v.params) + "]";
        j.why = v.why;
        if (!CompileVariant(sc, v.variant, merged, backend, f.seed, &v.expect, &j.run, &error)) return BadInput(error);
        jobs.push_back(std::move(j));
      }
    }
  }
  if (jobs.empty()) return BadInput("nothing to run: no variant matches --variant");

  bool all_ok = true;
  for (size_t i = 0; i < jobs.size(); ++i) {
    Job& j = jobs[i];
    if (!f.no_progress)
      std::fprintf(stderr, "[%zu/%zu] %s %s on %s ...\n", i + 1, jobs.size(), j.sc->id.c_str(), j.label.c_str(),
                   j.backend.c_str());
    j.result = RunOne(j.run.spec, false, /*keep_events=*/true);
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
  }

  // Reports: one per scenario and backend.
  std::vector<std::string> written;
  for (const Scenario& sc : scenarios) {
    for (const std::string& backend : backends) {
      std::vector<Job*> group;
      for (Job& j : jobs)
        if (j.sc == &sc && j.backend == backend) group.push_back(&j);
      if (group.empty()) continue;
      const std::string path = !f.out.empty() ? f.out : f.out_dir + "/" + backend + "/" + sc.id + ".json";
      if (!WriteScenarioReport(sc, backend, group, overrides, f.seed, path, &error)) {
        std::fprintf(stderr, "locklab: %s\n", error.c_str());
        return kExitInternal;
      }
      written.push_back(path);
    }
  }

  if (all) {
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
  } else {
    if (!f.quiet) PrintScenarioHeader(scenarios[0]);
    for (const Job& j : jobs) {
      if (f.quiet) {
        std::printf("%s %s on %s: %s\n", j.sc->id.c_str(), j.label.c_str(), j.backend.c_str(),
                    !j.judged ? j.verdict.observed.c_str() : j.verdict.matches ? "as expected" : "DIFFERS");
        continue;
      }
      PrintJob(j, !f.no_timeline);
    }
    for (const auto& p : written) std::printf("report: %s\n", p.c_str());
  }
  std::fflush(stdout);
  return all_ok ? kExitOk : kExitInternal;
}

std::string ScenarioListText(const std::string& dir) {
  std::vector<Scenario> all;
  std::string error;
  if (!LoadScenarioDir(dir, &all, &error)) return "  (cannot read scenarios: " + error + ")\n";
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
