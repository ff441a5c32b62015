#include "algorithms/options.h"

#include <charconv>

namespace locklab {
namespace {

// The whole text is a decimal integer that fits int64.
bool ParseInt(const std::string& v, int64_t* out) {
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), *out);
  return ec == std::errc() && p == v.data() + v.size();
}

std::string Join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

}  // namespace

OptionSpec OptionSpec::Enum(std::string name, std::initializer_list<const char*> choices, std::string help) {
  OptionSpec s;
  s.name = std::move(name);
  s.type = Type::kEnum;
  s.choices.assign(choices.begin(), choices.end());
  s.default_value = s.choices.empty() ? "" : s.choices.front();
  s.help = std::move(help);
  return s;
}

OptionSpec OptionSpec::Int(std::string name, int64_t default_value, int64_t min, int64_t max, std::string help) {
  OptionSpec s;
  s.name = std::move(name);
  s.type = Type::kInt;
  s.default_value = std::to_string(default_value);
  s.min = min;
  s.max = max;
  s.help = std::move(help);
  return s;
}

OptionSpec OptionSpec::Bool(std::string name, bool default_value, std::string help) {
  OptionSpec s;
  s.name = std::move(name);
  s.type = Type::kBool;
  s.default_value = default_value ? "true" : "false";
  s.choices = {"true", "false"};
  s.help = std::move(help);
  return s;
}

OptionSpec OptionSpec::LaterBool(std::string name, std::string help) {
  OptionSpec s = Bool(std::move(name), false, std::move(help));
  s.written_at_default = false;
  return s;
}

std::string OptionSpec::ValuesText() const {
  if (type == Type::kInt) return std::to_string(min) + ".." + std::to_string(max);
  return Join(choices, "|");
}

Status OptionSpec::Check(const std::string& owner, const std::string& value) const {
  if (type == Type::kInt) {
    int64_t v = 0;
    if (!ParseInt(value, &v) || v < min || v > max)
      return Status::Invalid(owner + ": option " + name + "=" + value + " is not an integer in [" +
                             std::to_string(min) + ", " + std::to_string(max) + "]");
    return Status::Ok();
  }
  for (const auto& c : choices)
    if (c == value) return Status::Ok();
  return Status::Invalid(owner + ": option " + name + "=" + value + " is not one of " + ValuesText());
}

Result<Options> Options::Parse(const std::string& text) {
  Options out;
  size_t pos = 0;
  // Each pass consumes at least one character (the item and its comma).
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(pos, end - pos);
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) return Status::Invalid("bad option '" + item + "' (expected name=value)");
    out.kv_[item.substr(0, eq)] = item.substr(eq + 1);
    pos = end + 1;
  }
  return out;
}

Status Options::Resolve(const std::string& owner, const std::vector<OptionSpec>& specs) {
  for (const auto& [k, v] : kv_) {
    const OptionSpec* spec = nullptr;
    for (const auto& s : specs)
      if (s.name == k) spec = &s;
    if (spec == nullptr) {
      std::vector<std::string> names;
      for (const auto& s : specs) names.push_back(s.name);
      return Status::Invalid(owner + ": unknown option '" + k +
                             "' (options: " + (names.empty() ? "none" : Join(names, ", ")) + ")");
    }
    if (Status st = spec->Check(owner, v); !st.ok()) return st;
  }
  for (const auto& s : specs)
    if (!kv_.count(s.name) && s.written_at_default) kv_[s.name] = s.default_value;
  return Status::Ok();
}

const std::string& Options::Get(const std::string& k) const {
  static const std::string kEmpty;
  auto it = kv_.find(k);
  return it == kv_.end() ? kEmpty : it->second;
}

int64_t Options::GetInt(const std::string& k) const {
  int64_t v = 0;
  return ParseInt(Get(k), &v) ? v : 0;
}

std::string Options::ToString() const {
  std::string s;
  for (const auto& [k, v] : kv_) s += (s.empty() ? "" : ",") + k + "=" + v;
  return s;
}

}  // namespace locklab
