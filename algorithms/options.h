// Options: the key=value settings that select an algorithm's or a retry policy's variant
// (e.g. release=del). Each user declares what it accepts; anything else is an error that
// names the option and the accepted values.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace locklab {

struct OptionSpec {
  std::string name;
  std::string default_value;
  std::vector<std::string> choices;  // empty: any value (numbers are checked by the reader)
  std::string help;
};

class Options {
 public:
  Options() = default;
  explicit Options(std::map<std::string, std::string> kv) : kv_(std::move(kv)) {}

  // Parses "a=1,b=x" (empty string: no options). Returns false and sets *error on bad syntax.
  static bool Parse(const std::string& text, Options* out, std::string* error);

  void Set(const std::string& k, const std::string& v) { kv_[k] = v; }
  const std::map<std::string, std::string>& values() const { return kv_; }

  // Checks every given option against `specs` and fills in defaults. On failure *error names
  // the offending option, e.g. "token: unknown option 'relase' (options: release)".
  bool Resolve(const std::string& owner, const std::vector<OptionSpec>& specs, std::string* error);

  const std::string& Get(const std::string& k) const;  // after Resolve: always present
  bool GetInt(const std::string& k, int64_t* out, std::string* error) const;
  bool GetBool(const std::string& k) const { return Get(k) == "true"; }

  // "a=1,b=x", sorted by key (stable, used in reports and replay commands).
  std::string ToString() const;

 private:
  std::map<std::string, std::string> kv_;
};

}  // namespace locklab
