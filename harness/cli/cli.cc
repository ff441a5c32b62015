#include "harness/cli/cli.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <iostream>
#include <set>

#include "algorithms/lock.h"
#include "algorithms/retry.h"
#include "harness/bench/bench_peers.h"
#include "harness/cli/calibrate_cli.h"
#include "harness/cli/check_cli.h"
#include "harness/cli/explore_cli.h"
#include "harness/cli/cli_list.h"
#include "harness/cli/map_cli.h"
#include "harness/cli/merge_cli.h"
#include "harness/cli/failover_compare.h"
#include "harness/cli/proxy_cli.h"
#include "harness/cli/scenario_cli.h"
#include "harness/cli/scorecard_cli.h"
#include "harness/cli/study_cli.h"
#include "harness/run/comma_list.h"
#include "harness/cli/suite.h"
#include "harness/cli/sweep_run.h"
#include "harness/real/cpu_placement.h"
#include "harness/real/redis_runtime.h"
#include "harness/report/report.h"
#include "harness/report/report_text.h"
#include "harness/run/build_info.h"
#include "harness/run/config.h"
#include "harness/run/spec_fields.h"
#include "harness/scenario/scenario.h"
#include "harness/cli/validate_cli.h"

namespace locklab {

std::string OneLine(std::string s) {
  for (char& c : s)
    if (c == '\n') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

int BadInput(const std::string& msg) {
  std::fprintf(stderr, "locklab: %s\n", OneLine(msg).c_str());
  return kExitBadInput;
}

Result<std::vector<std::string>> ParseBackendList(const std::string& text) {
  std::vector<std::string> backends = SplitComma(text);
  if (backends.empty()) return Status::Invalid("--backend: give sim, redis or sim,redis");
  for (const std::string& b : backends)
    if (b != "sim" && b != "redis") return Status::Invalid("--backend: unknown backend '" + b + "' (sim or redis)");
  return backends;
}

namespace {

std::string Names(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// The flags of `locklab run`, bound to a RunSpec of defaults; after parsing, the options'
// counts say which fields the user gave (those, and only those, override the config file).
struct RunFlags {
  RunSpec values;
  std::vector<std::pair<const SpecField*, CLI::Option*>> fields;
  std::vector<std::string> opts, retry_opts, faults;
  std::string redis, config, out, shard, results, full_dir, history_out;
  int jobs = DefaultJobs();
  bool quiet = false, no_progress = false;
  CLI::Option *opt_o = nullptr, *retry_opt_o = nullptr, *fault_o = nullptr, *redis_o = nullptr, *config_o = nullptr;
};

CLI::Validator Digits() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        bool ok = !s.empty();
        for (char c : s) ok = ok && c >= '0' && c <= '9';
        return ok ? std::string() : "'" + s + "' is not a non-negative integer";
      },
      "");
}

// CLI11 2.1 saturates an integer that does not fit its type (99999999999999999999 -> 2^63-1, a
// seed of 2^64 -> 2^64-1).
template <typename T>
CLI::Validator Fits() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        T v{};
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc::result_out_of_range) return "'" + s + "' is out of range";
        return std::string();  // anything else: CLI11's own conversion reports it
      },
      "");
}

// An empty FILE or DIR would mean "the default" or the file system's root: neither is meant.
CLI::Validator NonEmpty() {
  return CLI::Validator([](std::string& s) -> std::string { return s.empty() ? "give a non-empty value" : ""; }, "");
}

// CLI11 reads "nan", "inf" and "-inf" into a double: no field takes them.
CLI::Validator Finite() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        double v = 0;
        return CLI::detail::lexical_cast(s, v) && std::isfinite(v) ? std::string()
                                                                   : "'" + s + "' is not a finite number";
      },
      "");
}

std::string TypeName(const std::string& key) {
  if (key.size() > 3 && key.compare(key.size() - 3, 3, "_ms") == 0) return "MS";
  if (key.size() > 4 && key.compare(key.size() - 4, 4, "_ppm") == 0) return "PPM";
  if (key == "profile") return "NAME|FILE";
  if (key == "failover_by") return "script|sentinel";
  return "";
}

void AddRunFlags(CLI::App* app, RunFlags* f) {
  std::vector<std::string> algs, retries;
  for (const auto& a : Algorithms()) algs.push_back(a.name);
  for (const auto& r : RetryPolicies()) retries.push_back(r.name);
  f->config_o = app->add_option("--config", f->config,
                                "JSON file with RunSpec fields and optional \"algorithms\"/\"seeds\" sweep lists; "
                                "flags override it")
                    ->type_name("FILE")
                    ->check(NonEmpty());
  for (const SpecField& field : SpecFields()) {
    std::string help = field.help;
    if (std::string(field.key) == "algorithm") help += "; one of " + Names(algs);
    if (std::string(field.key) == "retry") help += "; one of " + Names(retries);
    CLI::Option* o = std::visit(
        [&](auto* p) -> CLI::Option* {
          using T = std::remove_pointer_t<decltype(p)>;
          if constexpr (std::is_same_v<T, bool>) {
            return app->add_flag(field.flag(), *p, help);
          } else {
            CLI::Option* opt = app->add_option(field.flag(), *p, help)->capture_default_str();
            // CLI11 would read "-1" into an unsigned seed as 2^64-1.
            if constexpr (std::is_unsigned_v<T>) opt->check(Digits());
            if constexpr (std::is_floating_point_v<T>) opt->check(Finite());
            if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) opt->check(Fits<T>());
            if (!TypeName(field.key).empty()) opt->type_name(TypeName(field.key));
            return opt;
          }
        },
        field.get(f->values));
    if (field.in_faults) o->group("Faults (all off by default)");
    f->fields.emplace_back(&field, o);
    if (std::string(field.key) == "algorithm") {
      f->opt_o = app->add_option("--opt", f->opts, "algorithm option k=v (repeatable; see `locklab list`)")
                     ->type_name("K=V")
                     ->allow_extra_args(false);
    }
    if (std::string(field.key) == "retry") {
      f->retry_opt_o = app->add_option("--retry-opt", f->retry_opts, "retry policy option k=v (repeatable)")
                           ->type_name("K=V")
                           ->allow_extra_args(false);
    }
  }
  f->fault_o =
      app->add_option("--fault", f->faults,
                      "planned fault KIND:at_ms=N,target=N,... (repeatable; kinds below and in `locklab list`)")
          ->type_name("SPEC")
          ->allow_extra_args(false)
          ->group("Faults (all off by default)");
  f->redis_o =
      app->add_option("--redis", f->redis, "redis backend: use these running servers instead of starting our own")
          ->type_name("HOST:PORT[,..]");
  app->add_option("--out", f->out,
                  "report file (default results/run-<algorithm>-<seed>.json; \"sweep\"/\"seeds\" stand in for "
                  "several)")
      ->type_name("FILE")
      ->check(NonEmpty());
  app->add_option("--history-out", f->history_out,
                  "one run: also write its history, Jepsen-style JSON lines that `locklab check` judges (format "
                  "in the README)")
      ->type_name("FILE")
      ->check(NonEmpty());
  app->add_flag("--quiet", f->quiet, "no table on stdout (the report path and replay command still print)");
  app->add_flag("--no-progress", f->no_progress, "no progress lines on stderr");
  AddWideFlags(app, &f->jobs, &f->shard, &f->results, &f->full_dir);
}

// The scalar flags the user gave, over the config file's values.
Status ApplyFieldFlags(const RunFlags& f, ConfigFile* cfg) {
  RunSpec& base = cfg->base;
  for (const auto& [field, opt] : f.fields) {
    if (opt->count() == 0) continue;
    std::visit([&](auto* src) { *std::get<decltype(src)>(field->get(base)) = *src; },
               field->get(const_cast<RunSpec&>(f.values)));
    const std::string key = field->key;
    if (key == "algorithm") {
      Result<AlgorithmChoice> c = ParseAlgorithmChoice(f.values.algorithm);
      if (!c.ok()) return c.status();
      cfg->algorithms.clear();
      base.algorithm = c->name;
      base.algorithm_options = c->options;
    }
    if (key == "retry") base.retry_options = Options();
    if (key == "seed") cfg->seeds.clear();
    // A flag fixes what the file would sweep.
    const std::string swept = field->in_faults ? "faults." + key : key;
    std::erase_if(cfg->sweep, [&](const auto& entry) { return entry.first == swept; });
  }
  return Status::Ok();
}

// --opt, --retry-opt, --fault and --redis: the flags that are not fields.
Status ApplyListFlags(const RunFlags& f, ConfigFile* cfg) {
  RunSpec& base = cfg->base;
  for (const std::string& text : f.opts) {
    Result<Options> o = Options::Parse(text);
    if (!o.ok()) return o.status().Prefixed("--opt " + text);
    for (const auto& [k, v] : o->values()) {
      base.algorithm_options.Set(k, v);
      for (auto& a : cfg->algorithms) a.options.Set(k, v);
    }
  }
  for (const std::string& text : f.retry_opts) {
    Result<Options> o = Options::Parse(text);
    if (!o.ok()) return o.status().Prefixed("--retry-opt " + text);
    for (const auto& [k, v] : o->values()) base.retry_options.Set(k, v);
  }
  if (f.fault_o->count() > 0) {
    base.faults.plan.clear();
    for (const std::string& text : f.faults) {
      Result<FaultAction> a = ParseFaultFlag(text);
      if (!a.ok()) return a.status();
      base.faults.plan.push_back(*a);
    }
  }
  if (f.redis_o->count() > 0) {
    base.redis = SplitComma(f.redis);
    if (base.redis.empty()) return Status::Invalid("--redis: give HOST:PORT[,HOST:PORT...]");
  }
  return Status::Ok();
}

// A sweep's "config" for the report: it must read back as the same runs.
nlohmann::json SweepConfig(const ConfigFile& cfg) {
  nlohmann::json c = ToJson(cfg.base);
  if (!cfg.algorithms.empty()) {
    c.erase("algorithm");
    c.erase("algorithm_options");
    std::vector<std::string> names;
    for (const auto& a : cfg.algorithms) names.push_back(a.ToString());
    c["algorithms"] = names;
  }
  if (!cfg.seeds.empty()) {
    c.erase("seed");
    c["seeds"] = cfg.seeds;
  }
  nlohmann::json sweep = nlohmann::json::object();
  for (const auto& [key, values] : cfg.sweep) sweep[key] = values;
  c["sweep"] = sweep;
  return c;
}

// Config file, then the flags the user gave, then the sweep.
Result<RunRequest> BuildRequest(const RunFlags& f) {
  ConfigFile cfg;
  if (f.config_o->count() > 0) {
    Result<ConfigFile> loaded = LoadConfigFile(f.config);
    if (!loaded.ok()) return loaded.status();
    cfg = std::move(loaded).value();
  }
  LOCKLAB_RETURN_IF_ERROR(ApplyFieldFlags(f, &cfg));
  LOCKLAB_RETURN_IF_ERROR(ApplyListFlags(f, &cfg));
  RunRequest out;
  out.specs = ExpandSweep(cfg);
  if (!cfg.sweep.empty()) out.sweep_config = SweepConfig(cfg);
  out.out = f.out;
  out.history_out = f.history_out;
  out.quiet = f.quiet;
  out.progress = !f.no_progress;
  LOCKLAB_RETURN_IF_ERROR(ApplyWideFlags(f.jobs, f.shard, f.results, f.full_dir, &out));
  return out;
}

int RunCommand(const RunFlags& flags) {
  Result<RunRequest> built = BuildRequest(flags);
  if (!built.ok()) return BadInput(built.status().message());
  return ExecuteRun(*built);
}

struct SuiteFlags {
  SuiteOptions o;
  std::string backends = "sim", redis;
  bool no_progress = false;
};

void AddSuiteFlags(CLI::App* app, SuiteFlags* f) {
  app->add_option("--backend", f->backends, "sim, redis, or both as sim,redis (one column group each)")
      ->capture_default_str();
  app->add_option("--out-dir", f->o.out_dir, "reports go to OUT_DIR/suite-<backend>/<preset>.json")
      ->capture_default_str()
      ->type_name("DIR")
      ->check(NonEmpty());
  app->add_option("--seed", f->o.seed, "seed of every run")
      ->capture_default_str()
      ->check(Digits())
      ->check(Fits<uint64_t>());
  app->add_option("--profile", f->o.profile,
                  "simulator cost profile: default (harness/profiles/default.json), legacy (the old fixed costs) or "
                  "a profile FILE")
      ->type_name("NAME|FILE")
      ->capture_default_str();
  app->add_option("--trace", f->o.trace,
                  "what the histories keep: commands (timelines show every Redis command), locks (lock, workload "
                  "and fault events) or none (only what the checkers read); the figures are the same")
      ->type_name("MODE")
      ->capture_default_str();
  app->add_option("--clients", f->o.clients, "clients per run")->capture_default_str()->check(Fits<int>());
  app->add_option("--requests", f->o.requests, "acquisitions attempted per run")
      ->capture_default_str()
      ->check(Fits<int64_t>());
  app->add_option("--redis", f->redis, "redis backend: use these running servers instead of starting our own")
      ->type_name("HOST:PORT[,..]");
  app->add_flag("--quiet", f->o.quiet, "no table on stdout");
  app->add_flag("--no-progress", f->no_progress, "no progress lines on stderr");
  f->o.jobs = DefaultJobs();
  app->add_option("--jobs", f->o.jobs, "simulator runs at the same time (threads; default: the cores; the output is the same for any N)")
      ->type_name("N")
      ->check(JobsRange());
}

int SuiteCommand(SuiteFlags& f) {
  Result<std::vector<std::string>> backends = ParseBackendList(f.backends);
  if (!backends.ok()) return BadInput(backends.status().message());
  f.o.backends = std::move(backends).value();
  f.o.redis = SplitComma(f.redis);
  f.o.progress = !f.no_progress;
  const Status st = RunSuite(f.o, std::cout);
  std::cout.flush();
  if (st.invalid()) return BadInput(st.message());
  return st.ok() ? kExitOk : kExitInternal;
}

const char* kRunFooter =
    "\nExamples:\n"
    "  locklab run --algorithm token --gc-pause-ms 1500 --gc-pause-rate 0.5\n"
    "  locklab run --algorithm fencing --gc-pause-ms 1500 --gc-pause-rate 0.5\n"
    "  locklab run --algorithm timestamp:recovery=del --clock-skew-ms 3000\n"
    "  locklab run --algorithm token --fault pause_client:at_ms=100,target=0,duration_ms=1500\n"
    "  locklab run --config sweep.json --seed 7     (flags override the file)\n"
    "Exit status: 0 runs completed (violations are findings), 1 a run did not complete, 2 bad input.\n";

}  // namespace

std::string DefaultRunReportPath(const std::vector<RunSpec>& specs) {
  if (specs.empty()) return "results/run.json";
  std::string alg = specs[0].algorithm;
  std::string seed = std::to_string(specs[0].seed);
  for (const RunSpec& s : specs) {
    if (s.algorithm != specs[0].algorithm) alg = "sweep";
    if (s.seed != specs[0].seed) seed = "seeds";
  }
  return "results/run-" + alg + "-" + seed + ".json";
}

Result<RunRequest> ParseRunArgs(const std::vector<std::string>& args) {
  CLI::App app{"locklab run"};
  RunFlags flags;
  AddRunFlags(&app, &flags);
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 consumes from the back
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return Status::Invalid(OneLine(e.what()));
  }
  return BuildRequest(flags);
}

// The scenario and suite commands' help footers: examples and presets.
static void AddFooters(CLI::App* scenario, CLI::App* suite) {
  scenario->footer(
      "\nExamples:\n"
      "  locklab scenario delayed-del                 broken and fixed variant on the simulator\n"
      "  locklab scenario delayed-del --delay-ms 500  a delay that does not cross the TTL: nothing happens\n"
      "  locklab scenario gc-pause --backend redis    the same on real redis-server processes\n"
      "  locklab scenario all --backend both          every scenario, one matrix (exit 1 if a verdict differs)\n"
      "Scenario files: harness/scenarios/<id>.json (the format is in the README).\n"
      "Exit status: 0 every verdict as expected, 1 a verdict differs or a run did not complete, 2 bad input.\n");
  {
    std::string presets = "\nPresets (base: counter workload, hold 20 ms, ttl 1000 ms):\n";
    for (const SuitePreset& p : SuitePresets()) presets += "  " + p.name + ": " + p.summary + "\n";
    suite->footer(presets);
  }
}

// "list, run, suite, ...": every subcommand's name, for the messages that ask for one.
static std::string SubcommandNames(CLI::App& app) {
  std::string names;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    names += (names.empty() ? "" : ", ") + sub->get_name();
  return names;
}

static std::string CommandLine(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + ShellQuote(argv[i]);
  return s;
}

static int ListCommand() {
  std::fputs(ListText().c_str(), stdout);
  std::printf("\nScenarios (locklab scenario ID; files in %s):\n", DefaultScenarioDir().c_str());
  std::fputs(ScenarioListText(DefaultScenarioDir()).c_str(), stdout);
  return kExitOk;
}

namespace {

// What a parse error exits with: 0 for --help and --version (printed by CLI11), else bad input
// in one line, naming the subcommands when none was recognised.
// --cpu-placement on every subcommand that starts redis-server processes (cpu_placement.h): it
// sets the process-wide placement, split unless the flag says os.
void AddCpuPlacementFlags(CLI::App& app) {
  static const std::set<std::string> kReal = {"run",      "suite",   "scenario",  "study",           "validate",
                                              "explore",  "calibrate", "scorecard", "failover-compare"};
  SetCpuPlacement(CpuPlacement::kSplit);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (kReal.count(sub->get_name()) == 0) continue;
    sub->add_option_function<std::string>(
           "--cpu-placement",
           [](const std::string& v) { SetCpuPlacement(v == "os" ? CpuPlacement::kOs : CpuPlacement::kSplit); },
           "real Redis: split (default) pins locklab's event loop to one CPU and the redis-servers it starts to "
           "the others, as on machines of their own; os leaves them to the scheduler (one CPU: nothing is pinned)")
        ->check(CLI::IsMember({"split", "os"}));
  }
}

int ParseFailed(CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
  if (app.get_subcommands().empty()) {
    if (argc > 1 && argv[1][0] != '-')
      return BadInput(std::string("unknown subcommand '") + argv[1] + "' (" + SubcommandNames(app) +
                      "; see locklab --help)");
    if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr)
      return BadInput("give a subcommand: " + SubcommandNames(app) + " (see locklab --help)");
  }
  return BadInput(e.what());
}

}  // namespace

int CliMain(int argc, char** argv) {
  RegisterRedisBackend();  // --backend redis: chosen once, here (harness/run/backends.h)
  CLI::App app{
      "locklab: a lab for Redis distributed-lock algorithms. The same lock code runs in a "
      "deterministic simulator (virtual time, one seed) or against real redis-server processes, "
      "under GC pauses, network delay and clock skew; checkers judge the history and a JSON report "
      "is written.",
      "locklab"};
  app.set_version_flag("--version", std::string("locklab ") + ToolVersion() + " (" + GitSha() + ")");
  app.require_subcommand(1);
  app.get_formatter()->column_width(36);
  app.footer("\nRun `locklab SUBCOMMAND --help` for its flags. `make run` runs `locklab study`.");

  CLI::App* list = app.add_subcommand("list", "algorithms with their options, retry policies, workloads, faults");
  list->footer("");  // not the top level's
  CLI::App* run = app.add_subcommand("run", "run one experiment (or a sweep from --config) and write its report");
  RunFlags run_flags;
  AddRunFlags(run, &run_flags);
  run->footer(std::string("\nPlanned fault kinds (--fault KIND:k=v,...):\n") + FaultKindsText("  ") + kRunFooter);
  CLI::App* suite = app.add_subcommand(
      "suite", "every algorithm x fault preset (none, gc-pause, net-delay, clock-skew), one seed, one report per preset");
  SuiteFlags suite_flags;
  AddSuiteFlags(suite, &suite_flags);
  CLI::App* scenario = app.add_subcommand(
      "scenario", "reproduce a race from the documents by name: its broken and fixed variants, verdicts, timelines");
  ScenarioFlags scenario_flags;
  AddScenarioFlags(scenario, &scenario_flags);
  CLI::App* bench_peers = app.add_subcommand(
      "bench-peers", "locklab next to node-redlock, redis-semaphore and redis-py's Lock on the same servers");
  BenchPeersOptions bench_peers_options;
  AddBenchPeersFlags(bench_peers, &bench_peers_options);
  ScorecardCli scorecard(app);  // not const: the parser writes its flags
  CLI::App* study = app.add_subcommand(
      "study", "the main job: every algorithm x fault preset, many seeds, rates with 95% intervals (make run)");
  StudyFlags study_flags;
  AddStudyFlags(study, &study_flags);
  MapCli map(app);
  CLI::App* validate = app.add_subcommand(
      "validate", "does the simulator agree with real Redis? canonical experiments on both backends, a verdict each");
  ValidateFlags validate_flags;
  AddValidateFlags(validate, &validate_flags);
  ExploreCli explore(app);  // not const: the parser writes its flags
  const CalibrateCli calibrate(app);
  const CheckCli check(app);
  const ProxyCli proxy(app);
  const FailoverCompareCli failover_compare(app);
  CLI::App* merge = app.add_subcommand("merge", "join the outputs of a sweep's shards (--shard I/N) into one");
  MergeFlags merge_flags;
  AddMergeFlags(merge, &merge_flags);
  AddFooters(scenario, suite);
  AddCpuPlacementFlags(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return ParseFailed(app, e, argc, argv);
  }
  try {
    if (list->parsed()) return ListCommand();
    if (run->parsed()) return RunCommand(run_flags);
    if (suite->parsed()) return SuiteCommand(suite_flags);
    if (scenario->parsed()) return ScenarioCommand(scenario_flags);
    if (bench_peers->parsed()) return BenchPeersCommand(bench_peers_options);
    if (scorecard.parsed()) return scorecard.Run();
    if (validate->parsed()) return ValidateCommand(validate_flags, CommandLine(argc, argv));
    if (study->parsed()) return StudyCommand(study_flags, CommandLine(argc, argv));
    if (map.parsed()) return map.Run(CommandLine(argc, argv));
    if (calibrate.parsed()) return calibrate.Run();
    if (merge->parsed()) return MergeCommand(merge_flags);
    if (check.parsed()) return check.Run();
    if (proxy.parsed()) return proxy.Run();
    if (failover_compare.parsed()) return failover_compare.Run(CommandLine(argc, argv));
    if (explore.parsed()) return explore.Run(CommandLine(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "locklab: internal error: %s\n", OneLine(e.what()).c_str());
    return kExitInternal;
  }
  return BadInput("give a subcommand: " + SubcommandNames(app) + " (see locklab --help)");
}

}  // namespace locklab
