// Options: the key=value settings that select an algorithm's or a retry policy's variant
// (e.g. release=del). Each user declares what it accepts as a table of OptionSpecs; anything
// else is an error that names the option and the accepted values.
//
// Values are checked in one place, Options::Resolve: after it succeeds every declared option is
// present and valid, so Get/GetInt/GetBool cannot fail. Values keep the text they were given
// ("0200" stays "0200"): reports and replay commands show them as written.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "algorithms/status.h"

namespace locklab {

struct OptionSpec {
  enum class Type : unsigned char { kEnum, kInt, kBool };

  std::string name;
  Type type = Type::kEnum;
  std::string default_value;         // the default as text, as reports show it
  std::vector<std::string> choices;  // kEnum: the accepted values (the first is the default)
  int64_t min = 0, max = 0;          // kInt: the accepted range, both ends included
  std::string help;
  // false: an option added after reports were committed. Resolve leaves it out while it has its
  // default (Get gives "", so only for a Bool whose default is false), so that reports and
  // replay commands of runs that do not set it keep their bytes.
  bool written_at_default = true;

  // One of `choices`; the default is the first.
  static OptionSpec Enum(std::string name, std::initializer_list<const char*> choices, std::string help);
  // An integer in [min, max].
  static OptionSpec Int(std::string name, int64_t default_value, int64_t min, int64_t max, std::string help);
  // true or false.
  static OptionSpec Bool(std::string name, bool default_value, std::string help);
  // A Bool that defaults to false and is left out of resolved options at that default.
  static OptionSpec LaterBool(std::string name, std::string help);

  // What a value may be, for `locklab list` and messages: "lua|del|get-then-del", "0..86400000",
  // "true|false".
  std::string ValuesText() const;
  // ok, or kInvalid "OWNER: option K=V is not ..." naming the accepted values.
  Status Check(const std::string& owner, const std::string& value) const;
};

// The longest time an option given in ms may ask for: one day.
constexpr int64_t kMaxOptionMs = 86'400'000;

class Options {
 public:
  Options() = default;
  explicit Options(std::map<std::string, std::string> kv) : kv_(std::move(kv)) {}

  // Parses "a=1,b=x" (empty string: no options). kInvalid on bad syntax ("bad option 'x'
  // (expected name=value)"). Values are not checked here (Resolve does, against the specs).
  static Result<Options> Parse(const std::string& text);

  void Set(const std::string& k, const std::string& v) { kv_[k] = v; }
  const std::map<std::string, std::string>& values() const { return kv_; }

  // Checks every given option against `specs` (known name, value of the right type and in
  // range) and fills in defaults. kInvalid names the offending option, e.g.
  // "token: unknown option 'relase' (options: release)".
  Status Resolve(const std::string& owner, const std::vector<OptionSpec>& specs);

  // After Resolve: always present and valid. Before it (or for an undeclared name): "" / 0 / false.
  const std::string& Get(const std::string& k) const;
  int64_t GetInt(const std::string& k) const;
  bool GetBool(const std::string& k) const { return Get(k) == "true"; }

  // "a=1,b=x", sorted by key (stable, used in reports and replay commands).
  std::string ToString() const;

 private:
  std::map<std::string, std::string> kv_;
};

}  // namespace locklab
