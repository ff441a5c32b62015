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

#include "harness/run/run_spec.h"

namespace locklab {

// A JSON value as text for a one-line message, cut to 40 characters.
std::string ShownJson(const nlohmann::json& v);
// Every key of `obj` must be in `known`; else false and *error = "unknown key 'PREFIX+KEY'
// (expected one of: ...)".
bool CheckJsonKeys(const nlohmann::json& obj, const std::vector<std::string>& known, const std::string& prefix,
                   std::string* error);

// Deterministic: the same spec gives the same JSON (objects are sorted maps; doubles print in
// their shortest round-trip form).
nlohmann::json ToJson(const RunSpec& spec);
nlohmann::json ToJson(const FaultSpec& faults);
// kind, at_ms and target always; the other fields when the kind uses them or they are set.
nlohmann::json ToJson(const FaultAction& action);

bool FromJson(const nlohmann::json& j, RunSpec* spec, std::string* error);
// `where` prefixes messages, e.g. "faults.plan[2]".
bool FromJson(const nlohmann::json& j, FaultAction* action, const std::string& where, std::string* error);

// "NAME" or "NAME:opt=v,...".
struct AlgorithmChoice {
  std::string name;
  Options options;
  std::string ToString() const;  // "name" or "name:a=1,b=2" (sorted)
};
bool ParseAlgorithmChoice(const std::string& text, AlgorithmChoice* out, std::string* error);

// "kind:at_ms=500,target=0,duration_ms=1500" (the keys of the JSON form).
bool ParseFaultFlag(const std::string& text, FaultAction* out, std::string* error);
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

// Starts from cfg's current contents (defaults for a fresh ConfigFile).
bool ConfigFromJson(const nlohmann::json& j, ConfigFile* cfg, std::string* error);
// Reads and parses the file; messages start with the path.
bool LoadConfigFile(const std::string& path, ConfigFile* cfg, std::string* error);
// The cartesian product algorithms x sweep x seeds, algorithm-major. Specs are not resolved.
std::vector<RunSpec> ExpandSweep(const ConfigFile& cfg);
// Sets one sweep value ("retry": "NAME[:opts]", or a scalar field; "faults.KEY" for a fault
// field) on *spec. false + *error when the key or the value does not fit.
bool ApplySweepValue(const std::string& key, const nlohmann::json& value, RunSpec* spec, std::string* error);

}  // namespace locklab
