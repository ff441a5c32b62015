#include "harness/cli/sweep_run.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "harness/cli/cli.h"
#include "harness/real/wake_probe.h"
#include "harness/report/report.h"
#include "harness/report/report_text.h"
#include "harness/report/results_jsonl.h"
#include "harness/run/jepsen_history.h"
#include "harness/run/sweep_shard.h"
#include "harness/run/write_file.h"

namespace locklab {
namespace {


// A file that could not be written stops the sweep (thrown out of RunInOrder's consume).
struct WriteError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A violation's timeline on stdout; `run` is its number in the sweep.
void PrintFirstViolation(const RunResult& r, size_t run, bool with_replay) {
  const Violation& v = r.check.safety.examples[0];
  std::string clients;
  for (int c : v.clients) clients += (clients.empty() ? "" : ", ") + std::to_string(c);
  std::printf("\nfirst violation (run %zu, %s, seed %llu): %.3f ms to %.3f ms, clients %s (!! = two holders)\n", run,
              AlgorithmLabel(r.spec).c_str(), static_cast<unsigned long long>(r.spec.seed),
              static_cast<double>(v.start_us) / 1000.0, static_cast<double>(v.end_us) / 1000.0, clients.c_str());
  std::fputs(TimelineTable(v).c_str(), stdout);
  if (with_replay) std::printf("replay: %s\n", ReplayCommand(r.spec).c_str());
}

// "results/run-token-seeds.json" -> "results/run-token-seeds.shard-2-of-8.json".
std::string ShardPath(const std::string& path, const Shard& s) {
  const std::string tag = ".shard-" + std::to_string(s.index) + "-of-" + std::to_string(s.count);
  const size_t dot = path.rfind('.');
  const size_t slash = path.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return path + tag;
  return path.substr(0, dot) + tag + path.substr(dot);
}

bool IsDirectory(const std::string& path) { return path.back() == '/' || std::filesystem::is_directory(path); }

// One finished run, and what a worker thread prepared for the --results file.
struct Finished {
  RunResult result;
  bool found = false;      // FoundViolation
  std::string line;        // its results line, with the newline ("" without --results)
  std::string full_text;   // its full report, when it goes to the --full-dir
  std::string run_text;    // its element of the sweep's report ("" without a report)
};

class SweepRun {
 public:
  explicit SweepRun(RunRequest& req) : req_(req) {}
  int Run();

 private:
  int Prepare();
  RunResult RunAt(size_t k) const;
  Finished RunAndPrepare(size_t k) const;
  void Consume(size_t k, Finished&& f);
  int WriteOutputs();
  void PrintSummary() const;

  RunRequest& req_;
  std::vector<size_t> selection_;  // 0-based sweep indices this process runs
  int jobs_ = 1;
  std::string report_path_;  // "" = no report
  std::string sweep_hash_;
  std::vector<std::string> config_hashes_;  // by spec, with sweep_hash_
  AtomicFileWriter results_file_;
  std::vector<RunResult> results_;  // kept for the report and the table
  std::vector<std::string> run_texts_;  // each run's element of the report (RunText), in order
  std::optional<RunResult> first_violation_;
  size_t first_violation_run_ = 0, violations_found_ = 0, full_written_ = 0;
  bool all_completed_ = true;
};

int SweepRun::Prepare() {
  std::vector<RunSpec>& specs = req_.specs;
  // Resolved on --jobs threads (thousands of specs in a big sweep); the first bad one in sweep
  // order is the one reported.
  std::optional<std::string> bad;
  RunInOrder<Status>(
      specs.size(), req_.jobs, 64 * static_cast<size_t>(req_.jobs), [&](size_t i) { return ResolveSpec(&specs[i]); },
      [&](size_t i, Status&& st) {
        if (st.ok() || bad) return;
        const RunSpec& s = specs[i];
        bad = specs.size() > 1 ? s.algorithm + ", seed " + std::to_string(s.seed) + ": " + st.message() : st.message();
      });
  if (bad) return BadInput(*bad);
  if (req_.results.empty() || !req_.out.empty()) {
    report_path_ = req_.out.empty() ? DefaultRunReportPath(specs) : req_.out;
    if (req_.out.empty() && req_.sharded) report_path_ = ShardPath(report_path_, req_.shard);
    if (IsDirectory(report_path_)) return BadInput("--out " + report_path_ + ": give a file name, not a directory");
  }
  if (!req_.results.empty() && IsDirectory(req_.results))
    return BadInput("--results " + req_.results + ": give a file name, not a directory");
  if (!req_.history_out.empty()) {
    if (specs.size() != 1 || req_.sharded)
      return BadInput("--history-out: one run only (this sweep has " + std::to_string(specs.size()) + " runs)");
    if (IsDirectory(req_.history_out))
      return BadInput("--history-out " + req_.history_out + ": give a file name, not a directory");
  }
  selection_ = ShardRuns(specs.size(), req_.sharded ? req_.shard : Shard{});
  jobs_ = static_cast<int>(std::min<size_t>(static_cast<size_t>(req_.jobs), std::max<size_t>(selection_.size(), 1)));
  for (const RunSpec& s : specs)
    if (s.backend != "sim") jobs_ = 1;  // real servers and ports per run: one at a time
  if (req_.sharded || !req_.results.empty()) {
    SweepHashes hashes = HashSweep(specs, req_.jobs);
    sweep_hash_ = std::move(hashes.sweep);
    config_hashes_ = std::move(hashes.configs);
  }
  if (!req_.results.empty()) {
    if (Status st = results_file_.Open(req_.results); !st.ok()) {
      std::fprintf(stderr, "locklab: %s\n", OneLine(st.message()).c_str());
      return kExitInternal;
    }
  }
  return kExitOk;
}

RunResult SweepRun::RunAt(size_t k) const {
  const size_t i = selection_[k];
  const RunSpec& s = req_.specs[i];
  const std::string where = req_.sharded ? " (run " + std::to_string(i + 1) + "/" +
                                               std::to_string(req_.specs.size()) + " of the sweep)"
                                         : "";
  if (jobs_ <= 1) {  // today's lines, in order
    if (req_.progress)
      std::fprintf(stderr, "[%zu/%zu] %s %s seed %llu%s ...\n", k + 1, selection_.size(), s.backend.c_str(),
                   AlgorithmLabel(s).c_str(), static_cast<unsigned long long>(s.seed), where.c_str());
    return RunOne(s, req_.progress, /*keep_events=*/!req_.history_out.empty());
  }
  RunResult r = RunOne(s, /*progress=*/false);
  if (req_.progress)  // one line per run, written at once: lines of different runs do not mix
    std::fprintf(stderr, "[%zu/%zu] %s %s seed %llu%s: %lld events\n", k + 1, selection_.size(), s.backend.c_str(),
                 AlgorithmLabel(s).c_str(), static_cast<unsigned long long>(s.seed), where.c_str(),
                 static_cast<long long>(r.history_events));
  return r;
}

// On a worker thread: the run, and its line and full report (JSON work that would otherwise
// all fall on the thread that writes).
Finished SweepRun::RunAndPrepare(size_t k) const {
  Finished f;
  f.result = RunAt(k);
  f.found = FoundViolation(f.result);
  const bool full = !req_.results.empty() && f.found && !req_.full_dir.empty();
  // The run's element of a report (the report's JSON work, here too): for the sweep's report
  // and for the run's own full report.
  std::string run_text;
  if (full || !report_path_.empty()) run_text = RunText(f.result);
  if (full) {
    const std::span<const RunResult> one(&f.result, 1);
    f.full_text = ReportTextWithRuns(BuildReportHead(one, MakeReportContext(f.result.spec)), {run_text});
  }
  if (!req_.results.empty()) {
    const RunPlace place{selection_[k] + 1, req_.specs.size(), sweep_hash_, config_hashes_[selection_[k]]};
    f.line = ResultLine(f.result, place, full) + "\n";
  }
  if (!report_path_.empty()) f.run_text = std::move(run_text);
  return f;
}

void SweepRun::Consume(size_t k, Finished&& f) {
  const size_t run = selection_[k] + 1;
  RunResult& r = f.result;
  if (!r.completed) {
    all_completed_ = false;
    std::fprintf(stderr, "locklab: run %zu (%s, seed %llu) did not complete: %s\n", run, r.spec.algorithm.c_str(),
                 static_cast<unsigned long long>(r.spec.seed), OneLine(r.error).c_str());
  }
  if (!req_.history_out.empty()) {  // one run (Prepare): its history, then the events can go
    if (Status st = WriteFileAtomic(req_.history_out, JepsenHistoryText(r.events, r.duration_us)); !st.ok())
      throw WriteError(st.message());
    r.events.clear();
    r.events.shrink_to_fit();
  }
  violations_found_ += f.found ? 1 : 0;
  if (!first_violation_ && !r.check.safety.examples.empty()) {
    first_violation_ = r;
    first_violation_run_ = run;
  }
  if (!f.full_text.empty()) {
    const std::string path = (std::filesystem::path(req_.full_dir) / FullReportName(run)).string();
    if (Status st = WriteFileAtomic(path, f.full_text); !st.ok()) throw WriteError(st.message());
    ++full_written_;
  }
  if (!f.line.empty())
    if (Status st = results_file_.Append(f.line); !st.ok()) throw WriteError(st.message());
  if (!report_path_.empty()) {
    results_.push_back(std::move(r));
    run_texts_.push_back(std::move(f.run_text));
  }
}

void SweepRun::PrintSummary() const {
  if (!report_path_.empty()) {
    std::fputs(RunsTable(results_).c_str(), stdout);
    for (size_t k = 0; k < results_.size(); ++k)
      if (!results_[k].check.safety.examples.empty()) {
        PrintFirstViolation(results_[k], selection_[k] + 1, results_.size() > 1);
        break;
      }
    return;
  }
  std::printf("%zu runs, %zu found a violation\n", selection_.size(), violations_found_);
  if (first_violation_) PrintFirstViolation(*first_violation_, first_violation_run_, true);
}

int SweepRun::WriteOutputs() {
  if (!req_.results.empty()) {
    if (Status st = results_file_.Commit(); !st.ok()) throw WriteError(st.message());
    std::printf("results: %s (%zu lines)\n", req_.results.c_str(), selection_.size());
    if (full_written_ > 0)
      std::printf("full reports of the %zu runs that found a violation: %s\n", full_written_, req_.full_dir.c_str());
  }
  if (report_path_.empty()) {
    std::printf("replay: each line's \"replay\" in %s\n", req_.results.c_str());
    return kExitOk;
  }
  const std::vector<RunSpec>& specs = req_.specs;
  nlohmann::json report =
      BuildReportHead(results_, req_.sharded ? MakeReportContext(specs[0]) : MakeReportContext(results_));
  if (!req_.sweep_config.is_null())
    report["config"] = req_.sweep_config;
  else if (req_.sharded)
    report["config"] = ReportConfigOfSpecs(specs);
  // The machine's state right after the real runs (not in a shard's report: shards must agree
  // on everything but their runs to merge).
  if (report["context"]["backend"] == "redis" && !req_.sharded)
    report["context"]["machine_after"] = MachineNowJson();
  if (req_.sharded)
    report["shard"] = {{"index", req_.shard.index},
                       {"count", req_.shard.count},
                       {"runs", specs.size()},
                       {"sweep", sweep_hash_}};
  if (Status st = WriteFileAtomic(report_path_, ReportTextWithRuns(report, run_texts_)); !st.ok())
    throw WriteError(st.message());
  std::printf("report: %s\n", report_path_.c_str());
  if (!req_.history_out.empty()) std::printf("history: %s (locklab check %s)\n", req_.history_out.c_str(), ShellQuote(req_.history_out).c_str());
  if (results_.size() == 1)
    std::printf("replay: %s\n", ReplayCommand(results_[0].spec).c_str());
  else
    std::printf("replay: each run's \"replay\" in the report, or: locklab run --config %s\n", report_path_.c_str());
  return kExitOk;
}

int SweepRun::Run() {
  if (const int code = Prepare(); code != kExitOk) return code;
  try {
    // A window of finished runs waiting for an earlier one: memory stays bounded.
    RunInOrder<Finished>(
        selection_.size(), jobs_, 8 * static_cast<size_t>(jobs_), [this](size_t k) { return RunAndPrepare(k); },
        [this](size_t k, Finished&& f) { Consume(k, std::move(f)); });
    if (!req_.quiet) PrintSummary();
    WriteOutputs();
  } catch (const WriteError& e) {
    std::fprintf(stderr, "locklab: %s\n", OneLine(e.what()).c_str());
    return kExitInternal;
  }
  std::fflush(stdout);
  return all_completed_ ? kExitOk : kExitInternal;
}

}  // namespace

CLI::Validator JobsRange() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        int n = 0;
        const bool ok = CLI::detail::lexical_cast(v, n) && n >= 1 && n <= kMaxJobs;
        return ok ? "" : "'" + v + "' is not from 1 to " + std::to_string(kMaxJobs);
      },
      "");
}

void AddWideFlags(CLI::App* app, int* jobs, std::string* shard, std::string* results, std::string* full_dir) {
  app->add_option("--jobs", *jobs,
                  "simulator runs at the same time (threads, 1 to " + std::to_string(kMaxJobs) +
                      "; default: this machine's cores; the report is the same for any N). Real-Redis runs always "
                      "go one at a time")
      ->type_name("N")
      ->check(JobsRange());
  app->add_option("--shard", *shard,
                  "run only the I-th of N slices of the sweep (1-based; round-robin: runs I, I+N, I+2N, ...); "
                  "join the outputs with locklab merge")
      ->type_name("I/N")
      ->check(CLI::Validator([](std::string& v) { return v.empty() ? "give I/N" : ""; }, ""));
  app->add_option("--results", *results,
                  "compact results: one JSON line per run (figures, replay; format in the README); no report "
                  "unless --out is given too")
      ->type_name("FILE.jsonl");
  app->add_option("--full-dir", *full_dir,
                  "with --results: the full reports of the runs that found a violation, DIR/run-<n>.json "
                  "(default: the results path without .jsonl, + \"-full\")")
      ->type_name("DIR");
}

Status ApplyWideFlags(int jobs, const std::string& shard, const std::string& results, const std::string& full_dir,
                      RunRequest* req) {
  if (jobs < 1 || jobs > kMaxJobs) return Status::Invalid("--jobs: give 1 to " + std::to_string(kMaxJobs));
  req->jobs = jobs;
  if (!shard.empty()) {
    Result<Shard> s = ParseShard(shard);
    if (!s.ok()) return s.status();
    req->sharded = true;
    req->shard = *s;
  }
  if (!full_dir.empty() && results.empty()) return Status::Invalid("--full-dir: give --results FILE.jsonl too");
  req->results = results;
  req->full_dir = full_dir;
  if (!results.empty() && full_dir.empty()) {
    const bool jsonl = results.size() > 6 && results.compare(results.size() - 6, 6, ".jsonl") == 0;
    req->full_dir = (jsonl ? results.substr(0, results.size() - 6) : results) + "-full";
  }
  return Status::Ok();
}

int ExecuteRun(RunRequest& req) { return SweepRun(req).Run(); }

}  // namespace locklab
