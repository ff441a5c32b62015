// Scenario: one race from the documents, as data. A scenario file (JSON, one per scenario,
// harness/scenarios/<id>.json, read at run time) names its clients and what each one does, a
// timeline of faults ("at 100 ms pause A for 1500 ms", "delay A's 2nd command by 2500 ms"),
// parameters that the timeline is written in ("ttl_ms + 200"), and variants (a broken and a
// fixed algorithm) with the verdict each must show. The README documents the format with a
// complete example.
//
// A verdict is judged from the run's checked history, never read from the file: the file only
// says what to expect, the checkers say what happened (Judge).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/status.h"
#include "harness/run/run_spec.h"
#include "harness/scenario/expr.h"

namespace locklab {

constexpr size_t kMaxScenarioClients = 10'000;
constexpr size_t kMaxScenarioSteps = 1'000;
constexpr size_t kMaxScenarioFiles = 1'000;
constexpr size_t kMaxScenarioVariants = 1'000;  // and variations ("also")

// What a variant must show. Absent fields are not judged.
struct Expectation {
  std::optional<bool> overlap;                      // two holders at one instant, any clients
  std::vector<std::pair<int, int>> overlap_pairs;   // each of these pairs held together
  std::vector<std::pair<int, int>> no_overlap_pairs;  // none of these did
  std::optional<bool> damage;           // lost updates, oversold stock or stale writes accepted
  std::optional<bool> stuck;            // a waiter and no live holder for >= liveness_bound_ms
  std::optional<bool> releases_failed;  // some release found the lock no longer its own
  std::optional<int64_t> orders;        // seckill: exactly this many orders
};

struct ScenarioVariant {
  std::string name;        // "broken", "fixed", ...
  std::string algorithm;   // "token:release=del"
  std::string note;        // one line: what this variant shows
  nlohmann::json doc;      // the variant's object in the file
};

// A run of a variant with other parameters, and what it must show then (the file's "also"
// list): the same race with other numbers that still cross the threshold, or that do not.
struct Variation {
  std::string variant;
  Params params;
  nlohmann::json expect;
  std::string why;
};

struct Scenario {
  std::string id;
  std::string title;
  std::string source;                 // source document ids (README "Sources"), e.g. "000, 004"
  std::string story;                  // the timeline in words
  std::vector<std::string> backends;  // "sim", and "redis" when it also runs on real Redis
  std::string redis_note;             // why a sim-only scenario is sim-only
  Params params;                      // defaults
  std::vector<std::string> clients;   // names, in client-index order
  std::vector<ScenarioVariant> variants;
  std::vector<Variation> also;
  std::string path;                   // the file it came from
  nlohmann::json doc;                 // the whole file

  bool runs_on(const std::string& backend) const;
  const ScenarioVariant* FindVariant(const std::string& name) const;
};

// Reads and checks a scenario file: every variant must compile with the default parameters on
// every backend it names. kInvalid with one line naming the file and the problem.
Result<Scenario> LoadScenario(const std::string& path);
// The same from a document already in memory (the explorer's candidates); `path` names it in
// messages and in replay commands.
Result<Scenario> ParseScenario(const nlohmann::json& doc, const std::string& path);
// Every *.json in `dir` (at most kMaxScenarioFiles), sorted by id (ids must be unique).
Result<std::vector<Scenario>> LoadScenarioDir(const std::string& dir);
// $LOCKLAB_SCENARIOS if set, else the source tree's harness/scenarios.
std::string DefaultScenarioDir();
// `name_or_path`: an id looked up in `dir`, or a path to a .json file.
Result<Scenario> FindScenario(const std::string& name_or_path, const std::string& dir);

// One variant, compiled for a backend with parameters (defaults < the variant's < overrides).
struct ScenarioRun {
  std::string scenario;
  std::string variant;
  Params params;  // in force
  RunSpec spec;   // resolved
  Expectation expect;
  double liveness_bound_ms = 0;
  std::string replay;  // "locklab scenario <id> --variant v --backend b --seed n [--param k=v]..."
  std::vector<std::string> client_names;  // the scenario's, by client index
};

// `overrides`: parameters the user gave; each must be one the scenario has. `expect_doc`: when
// not null, judged instead of the variant's own "expect" (variations). The spec is resolved
// (ResolveSpec): kInvalid names the first problem.
Result<ScenarioRun> CompileVariant(const Scenario& sc, const std::string& variant, const Params& overrides,
                                   const std::string& backend, uint64_t seed, const nlohmann::json* expect_doc);

struct Verdict {
  bool matches = false;
  std::string expected;  // "overlap B+C, no overlap A+C", ...
  std::string observed;  // the same keys as observed
  std::vector<std::string> mismatches;  // one line per key that differs
};
Verdict Judge(const ScenarioRun& run, const RunResult& result);

// "A", "B", ... as the scenario names its clients; "c<N>" past the list.
std::string ClientName(const Scenario& sc, int client);

}  // namespace locklab
