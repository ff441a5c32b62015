// The scalar fields of a RunSpec, listed once: their JSON key, their flag and their help.
//
// Config JSON (config.cc), command-line flags (cli.cc) and replay commands (report.cc) all walk
// this one table, so a field added to RunSpec and listed here is readable from a file, settable
// by a flag and reproduced by a replay command, with the same name everywhere.
// The non-scalar fields (algorithm_options, retry_options, redis, faults.plan) are handled by
// each of those files on its own.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "harness/run/run_spec.h"

namespace locklab {

using FieldPtr = std::variant<int*, int64_t*, uint64_t*, double*, std::string*, bool*>;

struct SpecField {
  const char* key;  // JSON key (inside "faults" when in_faults), snake_case, units last
  bool in_faults;
  const char* help;  // one line, with units, for --help and `locklab list`
  FieldPtr (*get)(RunSpec& spec);
  // Added after many reports were written: a config JSON leaves the field out while it has its
  // default, so that those reports keep their bytes (and read back with the default).
  bool omitted_at_default = false;

  // "--ttl-ms": the key with '_' -> '-'.
  std::string flag() const;
  // The JSON path, e.g. "faults.gc_pause_ms".
  std::string path() const;
};

// Every scalar field, in the order --help shows them.
const std::vector<SpecField>& SpecFields();
const SpecField* FindSpecField(const std::string& key, bool in_faults);

// The field's value as text (numbers in their shortest round-trip form, bools true/false).
std::string FieldText(const SpecField& f, const RunSpec& spec);
// Same value in two specs?
bool FieldEquals(const SpecField& f, const RunSpec& a, const RunSpec& b);

// Shortest decimal text that reads back as the same double ("0.5", "1e-06", "3").
std::string DoubleText(double v);

}  // namespace locklab
