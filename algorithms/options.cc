#include "algorithms/options.h"

#include <charconv>

namespace locklab {

bool Options::Parse(const std::string& text, Options* out, std::string* error) {
  *out = Options();
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(pos, end - pos);
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      *error = "bad option '" + item + "' (expected name=value)";
      return false;
    }
    out->kv_[item.substr(0, eq)] = item.substr(eq + 1);
    pos = end + 1;
  }
  return true;
}

bool Options::Resolve(const std::string& owner, const std::vector<OptionSpec>& specs, std::string* error) {
  for (const auto& [k, v] : kv_) {
    const OptionSpec* spec = nullptr;
    for (const auto& s : specs)
      if (s.name == k) spec = &s;
    if (spec == nullptr) {
      std::string names;
      for (const auto& s : specs) names += (names.empty() ? "" : ", ") + s.name;
      *error = owner + ": unknown option '" + k + "' (options: " + (names.empty() ? "none" : names) + ")";
      return false;
    }
    if (!spec->choices.empty()) {
      bool ok = false;
      std::string list;
      for (const auto& c : spec->choices) {
        ok = ok || c == v;
        list += (list.empty() ? "" : "|") + c;
      }
      if (!ok) {
        *error = owner + ": option " + k + "=" + v + " is not one of " + list;
        return false;
      }
    }
  }
  for (const auto& s : specs)
    if (!kv_.count(s.name)) kv_[s.name] = s.default_value;
  return true;
}

const std::string& Options::Get(const std::string& k) const {
  static const std::string kEmpty;
  auto it = kv_.find(k);
  return it == kv_.end() ? kEmpty : it->second;
}

bool Options::GetInt(const std::string& k, int64_t* out, std::string* error) const {
  const std::string& v = Get(k);
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), *out);
  if (ec != std::errc() || p != v.data() + v.size()) {
    *error = "option " + k + "=" + v + " is not an integer";
    return false;
  }
  return true;
}

std::string Options::ToString() const {
  std::string s;
  for (const auto& [k, v] : kv_) s += (s.empty() ? "" : ",") + k + "=" + v;
  return s;
}

}  // namespace locklab
