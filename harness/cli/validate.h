// `locklab validate`: does the simulator agree with real Redis? A canonical set of experiments
// runs on both backends with several seeds each; per experiment and metric the two backends'
// figures (each with a 95% interval over seeds), their ratio sim/real and a verdict by the
// agreement rule (harness/cli/validate_rule.h) go to a table and to a JSON file
// (schema locklab.validation/1, see README.md "Validation").
//
// Groups (each runnable alone with --only NAME):
//  - retry:    the retry study's load (harness/experiments/retry-strategies.json, every strategy,
//              plus the fifo lock of retry-fifo.json); default 3 seeds
//  - suite:    the suite's four fault presets x every algorithm (harness/cli/suite.h); 10 seeds
//  - gc-pause: the token lock under stop-the-world pauses of pause/TTL = 0.5 .. 2; 10 seeds
// Seeds are 1..N. A run that does not complete gives no values (its figures are partial).
#pragma once

#include <cstdint>
#include <optional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "algorithms/status.h"
#include "harness/cli/validate_rule.h"
#include "harness/real/wake_probe.h"
#include "harness/run/run_spec.h"

namespace locklab {

constexpr const char* kValidationSchema = "locklab.validation/1";

enum class MetricId {
  kAcquisitionsPerS,          // acquisitions / run duration
  kRequestP50Ms,              // time per request (acquire start to end of request)
  kRequestP99Ms,
  kCommandsPerAcquisition,    // Redis commands / acquisitions
  kFailedRequests,            // failed + unknown requests per run
  kViolationsPerAcquisition,  // mutual-exclusion violations / acquisitions
  kLostUpdatesPerAcquisition, // (lost updates + oversold) / acquisitions
  kAcquisitions,              // acquisitions per run
  kAcquireP99Ms,              // acquire latency, p99
  kClientCpuPerAcquisitionUs, // the client process's CPU / acquisitions (RunResult::client_cpu_us)
};
struct MetricInfo {
  const char* name;   // JSON: "acquisitions_per_s"
  const char* label;  // table: "acq/s"
  MetricKind kind;
};
const MetricInfo& MetricInfoOf(MetricId id);

struct ValidateExperiment {
  std::string name;   // unique in its group: "no3", "gc-pause/token", "pause/ttl=1.1"
  RunSpec base;       // backend and seed are set per run
  std::vector<MetricId> metrics;
};
struct ValidateGroup {
  std::string name;     // "retry" | "suite" | "gc-pause"
  std::string summary;  // one line
  int default_seeds = 10;
  std::vector<ValidateExperiment> experiments;
};
// The group names, in run order.
const std::vector<std::string>& ValidateGroupNames();
// The canonical set (quick: the small version of `--quick`). Reads the retry study's files from
// the source tree; Invalid when one cannot be read.
Result<std::vector<ValidateGroup>> ValidateGroups(bool quick);

struct ValidateOptions {
  std::vector<std::string> only;  // group names; empty: all
  int seeds = 0;                  // 0: each group's default (quick: 3)
  bool quick = false;
  std::string profile = "default";  // the simulator's cost profile (RunSpec::profile)
  // Earlier validation JSONs whose real runs are reused (none made for what they have): one
  // file, where it has the same experiment, configuration and seeds; several, every real run
  // they recorded for the experiment's configuration, pooled (validate_recorded.h, FindPooled).
  std::vector<std::string> real_from;
  std::string out = "results/validation/validation.json";
  bool progress = true;           // run i of n, elapsed, ETA on stderr
  std::string command;            // the command line, for the JSON's context
};

struct ValidateRun {
  std::string backend;
  uint64_t seed = 1;
  bool completed = false;
  std::string error;
  std::string replay;
  double wall_s = 0;  // wall time of the run, seconds
};
// One run's figure for one metric: for a rate, `value` events of `trials` acquisitions; for
// the other kinds `value` alone. Empty when the run gives none (not completed; no acquisition
// for a per-acquisition figure; no request for a latency).
struct Figure {
  double value = 0;
  double trials = 0;
};
std::optional<Figure> FigureOf(MetricId id, const RunResult& r);

struct MetricResult {
  MetricId id;
  std::vector<std::optional<Figure>> sim_by_seed, real_by_seed;
  SeedSample sim, real;
  SimRealRatio ratio;
  Agreement verdict;
};
struct ExperimentResult {
  std::string group, name;
  RunSpec base;
  std::vector<uint64_t> seeds;       // the simulator's (and real Redis's when run now or from one file)
  std::vector<int> real_sources;    // pooled --real-from: the file of each real value; else empty
  std::vector<ValidateRun> runs;
  std::vector<MetricResult> metrics;
};
struct ValidationResult {
  std::vector<ExperimentResult> experiments;
  bool all_completed = true;
  nlohmann::json real_from;  // --real-from: where the real figures come from (an array when pooled); null otherwise
  std::string load_start, load_end;  // the machine's load averages (LoadAverageText) around the runs
  // How late a sleeping thread woke (ProbeWakeLateness) before and after the runs; empty when no
  // real run was made now (all of them from --real-from).
  std::vector<WakeLateness> wake_start, wake_end;
};

// Checks the flags' values (group names, seed count, --out not a directory): Invalid names the flag.
Status CheckValidateOptions(const ValidateOptions& o);
// Runs the selected groups on both backends. Checks the options and resolves every spec first:
// Invalid before any run on bad input. Progress on stderr when o.progress.
Result<ValidationResult> RunValidation(const ValidateOptions& o);

// Judges one metric from the figures of each backend's runs, by seed. real_sittings (pooled
// --real-from: the sitting of each real run; empty otherwise) makes real Redis's intervals
// cluster-robust over the sittings (validate_rule.h, PooledMeanSample).
MetricResult JudgeMetric(MetricId id, int64_t requests_per_run, const std::vector<std::optional<Figure>>& sim,
                         const std::vector<std::optional<Figure>>& real, const std::vector<int>& real_sittings = {});

// The JSON document (context: version, sha, host, date, options; the rule; groups).
nlohmann::json ValidationJson(const ValidationResult& r, const ValidateOptions& o);
// The table for a terminal (at most 120 columns for the canonical set).
std::string ValidationTable(const ValidationResult& r);

}  // namespace locklab
