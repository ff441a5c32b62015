// Report: the JSON document a `locklab run` or `locklab suite` writes (schema locklab.report/1,
// see README.md "The report"), the replay command of a run, and writing files atomically.
//
// Determinism: for the sim backend the report holds no wall time and no host name, and every
// double is rounded to 3 decimals, so the same seed and build give the same bytes.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "algorithms/status.h"
#include "harness/run/run_spec.h"
#include "harness/run/write_file.h"  // WriteFileAtomic, for every report writer

namespace locklab {

constexpr const char* kReportSchema = "locklab.report/1";

struct ReportContext {
  std::string backend = "sim";
  uint64_t seed = 1;
  std::string host;        // redis backend only: this machine's name
  std::string started_at;  // redis backend only: ISO 8601 UTC, e.g. 2024-05-01T12:00:00Z
};

// The context of a report about `runs`: backend and seed of the first run; for the redis backend
// also the host name and the current wall time (the only place a report reads either).
ReportContext MakeReportContext(const std::vector<RunResult>& runs);
// The same from the sweep's first spec (a shard's report: the whole sweep's context).
ReportContext MakeReportContext(const RunSpec& first);

nlohmann::json BuildReport(std::span<const RunResult> runs, const ReportContext& context);
// BuildReport without the runs' JSON ("runs" is []): for ReportTextWithRuns.
nlohmann::json BuildReportHead(std::span<const RunResult> runs, const ReportContext& context);
// One element of "runs" as ReportText prints it inside the report (RunJson, indented for its
// place; the examples' timelines written as text, harness/report/timeline_text.h). Big sweeps
// make it on the thread that ran the run.
std::string RunText(const RunResult& run);
// ReportText of `report` (whose "runs" is empty) with `run_texts` (RunText of each run, in order)
// as its "runs": the bytes of ReportText(BuildReport(runs, ...)) with the same changes made to it,
// without building the runs' JSON again on the calling thread.
std::string ReportTextWithRuns(const nlohmann::json& report, const std::vector<std::string>& run_texts);
// The same with RunText of each of `runs` made here, on the calling thread (suites, scenarios).
std::string ReportTextWithRuns(const nlohmann::json& report, std::span<const RunResult> runs);
// How every double of a report (and of a results line) is rounded: 3 decimals, never "-0".
double Round3(double x);
// Redis commands per successful acquisition (0 when none succeeded), and acquisitions per second
// of true time (0 for a run of no time): the report's "commands_per_acquire" and
// "throughput_per_s" before rounding.
double CommandsPerAcquire(const RunResult& run);
double ThroughputPerS(const RunResult& run);
// One element of "runs".
nlohmann::json RunJson(const RunResult& run);
// "config": the run's spec when there is one; for a sweep (runs differing only in algorithm
// and/or seed) the spec with "algorithms"/"seeds" lists, loadable again by --config.
nlohmann::json ReportConfig(std::span<const RunResult> runs);
// The same from the specs alone (a shard's report: the whole sweep's config).
nlohmann::json ReportConfigOfSpecs(const std::vector<RunSpec>& specs);

// The flags after `locklab run` that reproduce `spec`: --backend, --algorithm and --seed always,
// every other field only when it differs from its default (for that algorithm and retry policy),
// options as --opt k=v / --retry-opt k=v, plan entries as --fault KIND:k=v,... . Values are
// shell-quoted when they need it.
std::vector<std::string> ReplayArgs(const RunSpec& spec);
// "locklab run " + ReplayArgs joined by spaces.
std::string ReplayCommand(const RunSpec& spec);
// Quotes `s` for a POSIX shell when it holds anything but [A-Za-z0-9_.,:=/@%+-].
std::string ShellQuote(const std::string& s);

// The report as text: 2-space indented JSON and a final newline.
std::string ReportText(const nlohmann::json& report);

}  // namespace locklab
