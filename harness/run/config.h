// Config: RunSpec <-> JSON, config files with sweeps, and the text forms of an algorithm
// choice ("token:release=del") and of a planned fault ("pause_client:at_ms=500,target=0,...").
//
// JSON keys are the RunSpec / FaultSpec field names (snake_case, units last). Times in a fault
// plan are ms in JSON and in flags (fractions allowed, µs precision) and µs in FaultAction.
// Readers are strict: an unknown key, a wrong type or a bad value is an error whose one-line
// message names the key and what was expected. Keys that are absent keep the value the spec
// already had, so a file may hold only the fields it changes.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "algorithms/status.h"
#include "harness/run/run_spec.h"

namespace locklab {

// A JSON value as text for a one-line message, cut to 40 characters.
std::string ShownJson(const nlohmann::json& v);
// Every key of `obj` must be in `known`; else kInvalid "unknown key 'PREFIX+KEY' (expected one
// of: ...)".
Status CheckJsonKeys(const nlohmann::json& obj, const std::vector<std::string>& known, const std::string& prefix);

// Deterministic: the same spec gives the same JSON (objects are sorted maps; doubles print in
// their shortest round-trip form).
nlohmann::json ToJson(const RunSpec& spec);
nlohmann::json ToJson(const FaultSpec& faults);
// kind, at_ms and target always; the other fields when the kind uses them or they are set.
nlohmann::json ToJson(const FaultAction& action);
// True when ToJson(a) and ToJson(b) can differ in "seed" alone (every other member they write
// is the same, doubles to the bit): the runs of a sweep over seeds, whose JSON is made once.
bool SameJsonButSeed(const RunSpec& a, const RunSpec& b);

// Reads the keys `j` holds into *spec (the others keep their values); *spec is untouched on
// failure. Values are type- and range-checked here (doubles must be finite); the checks that
// need the whole spec are ResolveSpec's.
Status FromJson(const nlohmann::json& j, RunSpec* spec);
// `where` prefixes messages, e.g. "faults.plan[2]".
Result<FaultAction> FaultActionFromJson(const nlohmann::json& j, const std::string& where);

// "NAME" or "NAME:opt=v,...".
struct AlgorithmChoice {
  std::string name;
  Options options;
  std::string ToString() const;  // "name" or "name:a=1,b=2" (sorted)
};
// The options are parsed, not checked: ResolveSpec checks them against the algorithm.
Result<AlgorithmChoice> ParseAlgorithmChoice(const std::string& text);

// "kind:at_ms=500,target=0,duration_ms=1500" (the keys of the JSON form).
Result<FaultAction> ParseFaultFlag(const std::string& text);
std::string FaultFlag(const FaultAction& action);

// A config file: the fields of a RunSpec, plus optional sweep lists
//   "algorithms": ["token", "timestamp:recovery=del"]  (instead of algorithm/algorithm_options)
//   "seeds": [1, 2, 3]                                   (instead of seed)
//   "sweep": {"retry": ["no3", "backoff:cap-ms=50"], "clients": [10, 100], "faults.net_delay_ms": [0, 1]}
//            any scalar run field (fault fields as "faults.KEY"), "retry" as "NAME[:opt=v,...]";
//            every combination is run (keys in the order given, the last varying fastest)
//   "comment": "..."                                     (ignored: free text for the reader)
// A locklab report is accepted too: its "config" is used.
struct ConfigFile {
  RunSpec base;
  std::vector<AlgorithmChoice> algorithms;  // empty: base.algorithm with base.algorithm_options
  std::vector<uint64_t> seeds;              // empty: base.seed
  std::vector<std::pair<std::string, std::vector<nlohmann::json>>> sweep;  // checked when read
};
constexpr size_t kMaxSweepRuns = 100'000;

// Starts from cfg's current contents (defaults for a fresh ConfigFile); *cfg is untouched on
// failure.
Status ConfigFromJson(const nlohmann::json& j, ConfigFile* cfg);
// Reads and parses the file (a fresh ConfigFile); messages start with the path.
Result<ConfigFile> LoadConfigFile(const std::string& path);
// The cartesian product algorithms x sweep x seeds, algorithm-major. Specs are not resolved.
std::vector<RunSpec> ExpandSweep(const ConfigFile& cfg);
// Sets one sweep value ("retry": "NAME[:opts]", or a scalar field; "faults.KEY" for a fault
// field) on *spec. kInvalid when the key or the value does not fit.
Status ApplySweepValue(const std::string& key, const nlohmann::json& value, RunSpec* spec);

}  // namespace locklab
