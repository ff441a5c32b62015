// End to end: what `locklab run` costs per simulated command and per seed, next to the bare
// simulator's micro figure (sim/simulator_bench.cc: 1000 clients, drawn costs) measured in this
// same process, so that the ratios compare like with like on whatever machine runs them.
//
//  BM_RetryStudy/trace:T   harness/experiments/retry-strategies.json on the simulator with the
//                          committed default profile, seed 1 of every strategy (9 runs, --trace
//                          none or commands), each run checked and the report built and printed
//                          to text, one thread: simulated commands per CPU-second (process CPU
//                          time), vs_micro = that / the micro figure, and for commands
//                          vs_trace_none = that / the trace-none figure; of_target = that / the
//                          speed target (5M untraced, 2M traced; docs/speed.md).
//  BM_Seeds/jobs:J/report:R `locklab run` (CliMain, in this process) of the 2,000 seeds of the
//                          README's small Redlock run (harness/experiments/small-seeds.json: 3
//                          clients, 20 requests, pauses, delays, drift), writing --results
//                          x.jsonl (report:0) or the full report (report:1), with --jobs J: seeds
//                          per second of wall time (process start-up aside), and for J = 2
//                          vs_jobs1 and of_target = that / the target of 20,000 seeds/s.
//
// `make bench` runs them with the rest (`locklab_bench --benchmark_filter=EndToEnd|Seeds|Retry`
// runs only these).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "harness/cli/cli.h"
#include "harness/report/report.h"
#include "harness/run/build_info.h"
#include "harness/run/config.h"
#include "harness/run/run_spec.h"
#include "sim/bench_workload.h"

namespace locklab {
namespace {

// The speed targets these figures are held to (README "Big sweeps", docs/speed.md): simulated commands
// per CPU-second of the retry study untraced and traced, and seeds per second of the 2,000 seeds
// with --jobs 2. of_target below 1 is how far short a build is on the machine that ran it.
constexpr double kTargetUntracedCommandsPerCpuS = 5e6;
constexpr double kTargetTracedCommandsPerCpuS = 2e6;
constexpr double kTargetSeedsPerSJobs2 = 20000;

double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// The micro benchmark's figure (commands per CPU-second), measured once, over at least 0.5 s.
double MicroCommandsPerCpuS() {
  static const double figure = [] {
    int64_t commands = 0;
    const double t0 = ProcessCpuSeconds();
    double spent = 0;
    for (int i = 0; i < 1000 && spent < 0.5; ++i) {
      std::string error;
      commands += sim::bench::SimulateCommands(1000, /*drawn_costs=*/true, &error);
      spent = ProcessCpuSeconds() - t0;
    }
    return spent > 0 ? static_cast<double>(commands) / spent : 0.0;
  }();
  return figure;
}

std::map<int, double> g_study_rate;  // by trace mode: commands per CPU-second

void BM_RetryStudy(benchmark::State& state) {
  const auto trace = static_cast<TraceMode>(state.range(0));
  const char* trace_name = trace == TraceMode::kNone ? "none" : trace == TraceMode::kLocks ? "locks" : "commands";
  Result<ConfigFile> cfg = LoadConfigFile(std::string(SourceDir()) + "/harness/experiments/retry-strategies.json");
  if (!cfg.ok()) {
    state.SkipWithError(cfg.status().message().c_str());
    return;
  }
  cfg->seeds = {1};
  std::vector<RunSpec> specs = ExpandSweep(*cfg);
  for (RunSpec& s : specs) {
    s.backend = "sim";
    s.trace = trace_name;
    if (Status st = ResolveSpec(&s); !st.ok()) {
      state.SkipWithError(st.message().c_str());
      return;
    }
  }
  const double micro = MicroCommandsPerCpuS();
  int64_t commands = 0;
  double cpu_s = 0;
  for (auto _ : state) {
    const double t0 = ProcessCpuSeconds();
    std::vector<RunResult> results;
    for (const RunSpec& s : specs) {
      results.push_back(RunOne(s, /*progress=*/false));
      commands += results.back().commands.total;
    }
    // As `locklab run` writes its report (sweep_run.cc: RunText of each run, then the head).
    const std::string text =
        ReportTextWithRuns(BuildReportHead(results, MakeReportContext(results)), std::span<const RunResult>(results));
    benchmark::DoNotOptimize(text.data());
    cpu_s += ProcessCpuSeconds() - t0;
  }
  const double rate = cpu_s > 0 ? static_cast<double>(commands) / cpu_s : 0;
  g_study_rate[static_cast<int>(trace)] = rate;
  state.counters["commands_per_cpu_s"] = rate;
  state.counters["micro_commands_per_cpu_s"] = micro;
  state.counters["vs_micro"] = micro > 0 ? rate / micro : 0;
  if (trace != TraceMode::kNone && g_study_rate.count(static_cast<int>(TraceMode::kNone)) > 0)
    state.counters["vs_trace_none"] = rate / g_study_rate[static_cast<int>(TraceMode::kNone)];
  state.counters["of_target"] =
      rate / (trace == TraceMode::kNone ? kTargetUntracedCommandsPerCpuS : kTargetTracedCommandsPerCpuS);
}
BENCHMARK(BM_RetryStudy)
    ->Arg(static_cast<int>(TraceMode::kNone))
    ->Arg(static_cast<int>(TraceMode::kCommands))
    ->ArgName("trace")
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// Where the 2,000-seed sweep (harness/experiments/small-seeds.json) writes: a temporary
// directory removed when the program ends.
class SeedsDir {
 public:
  SeedsDir() {
    dir_ = (std::filesystem::temp_directory_path() / ("locklab-bench-" + std::to_string(getpid()))).string();
    std::filesystem::create_directories(dir_);
  }
  ~SeedsDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  const std::string& path() const { return dir_; }

 private:
  std::string dir_;
};

const std::string& SeedsPath() {
  static const SeedsDir dir;
  return dir.path();
}

// CliMain with stdout sent to /dev/null (it prints where the outputs went); its exit code.
int QuietCli(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::fflush(stdout);
  const int saved = dup(1);
  const int null = open("/dev/null", O_WRONLY);
  dup2(null, 1);
  const int code = CliMain(static_cast<int>(argv.size()), argv.data());
  std::fflush(stdout);
  dup2(saved, 1);
  close(null);
  close(saved);
  return code;
}

std::map<int64_t, double> g_seeds_jobs1;  // by report flag: seeds per second with --jobs 1

void BM_Seeds(benchmark::State& state) {
  const int64_t jobs = state.range(0);
  const bool report = state.range(1) == 1;
  const std::string& dir = SeedsPath();
  const std::string config = std::string(SourceDir()) + "/harness/experiments/small-seeds.json";
  Result<ConfigFile> cfg = LoadConfigFile(config);
  if (!cfg.ok()) {
    state.SkipWithError(cfg.status().message().c_str());
    return;
  }
  const auto sweep_seeds = static_cast<int64_t>(cfg->seeds.size());
  std::vector<std::string> args = {"locklab", "run", "--config", config, "--jobs", std::to_string(jobs), "--quiet", "--no-progress"};
  if (report) {
    args.insert(args.end(), {"--out", dir + "/seeds-report.json"});
  } else {
    args.insert(args.end(), {"--results", dir + "/seeds.jsonl"});
  }
  double wall_s = 0;
  int64_t seeds = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    if (const int code = QuietCli(args); code != 0) {
      state.SkipWithError(("locklab run exited with " + std::to_string(code)).c_str());
      return;
    }
    wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    seeds += sweep_seeds;
  }
  const double rate = wall_s > 0 ? static_cast<double>(seeds) / wall_s : 0;
  state.counters["seeds_per_s"] = rate;
  if (jobs == 1) g_seeds_jobs1[state.range(1)] = rate;
  if (jobs > 1 && g_seeds_jobs1.count(state.range(1)) > 0) state.counters["vs_jobs1"] = rate / g_seeds_jobs1[state.range(1)];
  if (jobs == 2) state.counters["of_target"] = rate / kTargetSeedsPerSJobs2;
}
BENCHMARK(BM_Seeds)
    ->ArgsProduct({{1, 2}, {0, 1}})
    ->ArgNames({"jobs", "report"})
    ->Iterations(3)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace locklab
