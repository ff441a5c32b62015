// The `locklab` command line: `list`, `run` and `suite` (see `locklab --help`).
//
// Exit codes: 0 the runs completed (violations are findings, not errors); 1 internal failure
// (a run did not complete, a report could not be written); 2 bad input, with one line
// "locklab: <problem>" on stderr. --help and --version exit 0.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "algorithms/status.h"
#include "harness/run/run_spec.h"
#include "harness/run/sweep_shard.h"

namespace locklab {

constexpr int kExitOk = 0;
constexpr int kExitInternal = 1;
constexpr int kExitBadInput = 2;

// The whole program; main() only calls this.
int CliMain(int argc, char** argv);

// `s` on one line: newlines become spaces, trailing spaces go (CLI11's messages span lines).
std::string OneLine(std::string s);
// Bad input: "locklab: MSG" on one line on stderr; returns kExitBadInput for the caller to return.
int BadInput(const std::string& msg);
// --backend of suite and study: "sim", "redis" or "sim,redis"; kInvalid naming the problem.
Result<std::vector<std::string>> ParseBackendList(const std::string& text);

// What `locklab run ARGS...` would do, without doing it.
struct RunRequest {
  std::vector<RunSpec> specs;  // the sweep (config file x flags), not yet resolved
  std::string out;             // report path ("" = the default)
  std::string history_out;     // --history-out: the run's history file ("" = none; one run only)
  bool quiet = false;
  bool progress = true;
  nlohmann::json sweep_config;  // a config with a "sweep": the report's config (null otherwise)
  int jobs = 1;                 // threads for simulator runs (1..kMaxJobs; --jobs, default: the cores)
  bool sharded = false;         // --shard I/N given: only that slice runs, its report says so
  Shard shard;
  std::string results;          // --results FILE.jsonl: a line per run ("" = none)
  std::string full_dir;         // --full-dir: full reports of the runs that found a violation
};
// `args` are the words after "locklab run". The config file (--config) is read here; flags
// override its values: --algorithm replaces the file's algorithm(s) and their options, --seed
// its seed(s), --retry its retry options, --fault its whole plan, --redis its server list;
// --opt / --retry-opt add to (or change) the options. kInvalid with a one-line message on bad
// input. The specs are not resolved (ResolveSpec checks the values that need the whole spec).
Result<RunRequest> ParseRunArgs(const std::vector<std::string>& args);

// Where `locklab run` writes its report by default: results/run-<algorithm>-<seed>.json
// ("sweep" for more than one algorithm, "seeds" for more than one seed).
std::string DefaultRunReportPath(const std::vector<RunSpec>& specs);

}  // namespace locklab
