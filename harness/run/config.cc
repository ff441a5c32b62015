#include "harness/run/config.h"

#include <bit>
#include <charconv>
#include <string_view>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string_view>

#include "harness/run/read_file.h"
#include "harness/run/spec_fields.h"

namespace locklab {
namespace {

using nlohmann::json;

std::string Quote(const std::string& key) { return "'" + key + "'"; }

// "faults.plan[0]" + "kind"; a bare key when there is no prefix.
std::string Path(const std::string& where, const std::string& key) { return where.empty() ? key : where + "." + key; }

Status ReadInt64(const json& v, const std::string& key, int64_t lo, int64_t hi, int64_t* out) {
  if (!v.is_number_integer()) return Status::Invalid(Quote(key) + " must be an integer (got " + ShownJson(v) + ")");
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi))
    return Status::Invalid(Quote(key) + " is out of range (got " + ShownJson(v) + ")");
  int64_t x = v.get<int64_t>();
  if (x < lo || x > hi) return Status::Invalid(Quote(key) + " is out of range (got " + ShownJson(v) + ")");
  *out = x;
  return Status::Ok();
}

// Reads one scalar field of a RunSpec from `v`, type-checked.
Status ReadField(const SpecField& f, const json& v, RunSpec* spec) {
  const std::string key = f.path();
  return std::visit(
      [&](auto* p) -> Status {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, std::string>) {
          if (!v.is_string()) return Status::Invalid(Quote(key) + " must be a string (got " + ShownJson(v) + ")");
          *p = v.get<std::string>();
        } else if constexpr (std::is_same_v<T, bool>) {
          if (!v.is_boolean()) return Status::Invalid(Quote(key) + " must be true or false (got " + ShownJson(v) + ")");
          *p = v.get<bool>();
        } else if constexpr (std::is_same_v<T, double>) {
          if (!v.is_number()) return Status::Invalid(Quote(key) + " must be a number (got " + ShownJson(v) + ")");
          if (!std::isfinite(v.get<double>()))
            return Status::Invalid(Quote(key) + " must be a finite number (got " + ShownJson(v) + ")");
          *p = v.get<double>();
        } else if constexpr (std::is_same_v<T, uint64_t>) {
          if (!v.is_number_unsigned())
            return Status::Invalid(Quote(key) + " must be a non-negative integer (got " + ShownJson(v) + ")");
          *p = v.get<uint64_t>();
        } else {
          int64_t x = 0;
          LOCKLAB_RETURN_IF_ERROR(ReadInt64(v, key, std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), &x));
          *p = static_cast<T>(x);
        }
        return Status::Ok();
      },
      f.get(*spec));
}

json FieldJson(const SpecField& f, const RunSpec& spec) {
  return std::visit([](auto* p) { return json(*p); }, f.get(const_cast<RunSpec&>(spec)));
}

json OptionsJson(const Options& o) {
  json j = json::object();
  for (const auto& [k, v] : o.values()) j[k] = v;
  return j;
}

// An object of strings; numbers and booleans are taken as their text, for hand-written files.
Status ReadOptions(const json& v, const std::string& key, Options* out) {
  if (!v.is_object()) return Status::Invalid(Quote(key) + " must be an object of strings (got " + ShownJson(v) + ")");
  Options o;
  for (const auto& [k, x] : v.items()) {
    if (x.is_string())
      o.Set(k, x.get<std::string>());
    else if (x.is_boolean())
      o.Set(k, x.get<bool>() ? "true" : "false");
    else if (x.is_number_integer())
      o.Set(k, x.dump());
    else
      return Status::Invalid(Quote(key + "." + k) + " must be a string (got " + ShownJson(x) + ")");
  }
  *out = o;
  return Status::Ok();
}

// Which FaultAction fields a kind uses (the rest are written only when set).
struct KindUses {
  bool duration = false, delta = false, node = false, message = false;
};
KindUses Uses(FaultAction::Kind k) {
  using K = FaultAction::Kind;
  KindUses u;
  u.duration = k == K::kPauseClient || k == K::kPauseNode || k == K::kPartition || k == K::kDelayMessage;
  u.delta = k == K::kClientClockJump || k == K::kNodeClockJump;
  u.node = k == K::kPartition;
  u.message = k == K::kDelayMessage;
  return u;
}

// µs -> ms for JSON: an integer when whole, else a fraction (exact to the µs).
json MsJson(int64_t us) { return us % 1000 == 0 ? json(us / 1000) : json(static_cast<double>(us) / 1000.0); }

Status ReadMs(const json& v, const std::string& key, int64_t* us) {
  constexpr int64_t kMaxMs = 9'000'000'000'000;  // keeps µs inside int64
  if (v.is_number_integer()) {
    int64_t ms = 0;
    LOCKLAB_RETURN_IF_ERROR(ReadInt64(v, key, -kMaxMs, kMaxMs, &ms));
    *us = ms * 1000;
    return Status::Ok();
  }
  if (!v.is_number()) return Status::Invalid(Quote(key) + " must be a number of ms (got " + ShownJson(v) + ")");
  double ms = v.get<double>();
  if (!std::isfinite(ms) || std::fabs(ms) > static_cast<double>(kMaxMs))
    return Status::Invalid(Quote(key) + " is out of range (got " + ShownJson(v) + ")");
  *us = std::llround(ms * 1000.0);
  return Status::Ok();
}

std::string KindList() {
  std::string s;
  for (int i = 0; i <= static_cast<int>(FaultAction::Kind::kDelayMessage); ++i)
    s += (s.empty() ? "" : ", ") + std::string(FaultKindName(static_cast<FaultAction::Kind>(i)));
  return s;
}

const std::vector<std::string> kFaultActionKeys = {"kind",     "at_ms",   "jitter_ms", "target",    "node",
                                                   "duration_ms", "delta_ms", "command", "on_send", "occurrence"};

}  // namespace

std::string ShownJson(const json& v) {
  std::string s = v.dump();
  return s.size() > 40 ? s.substr(0, 37) + "..." : s;
}

Status CheckJsonKeys(const json& obj, const std::vector<std::string>& known, const std::string& prefix) {
  for (const auto& [k, v] : obj.items()) {
    bool ok = false;
    for (const auto& n : known) ok = ok || n == k;
    if (ok) continue;
    std::string list;
    for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
    return Status::Invalid("unknown key " + Quote(prefix + k) + " (expected one of: " + list + ")");
  }
  return Status::Ok();
}

json ToJson(const FaultAction& a) {
  const KindUses u = Uses(a.kind);
  const FaultAction d;  // defaults
  json j;
  j["kind"] = FaultKindName(a.kind);
  j["at_ms"] = MsJson(a.at_us);
  if (a.jitter_us != 0) j["jitter_ms"] = MsJson(a.jitter_us);  // only when set: earlier reports keep their bytes
  j["target"] = a.target;
  if (u.node || a.node != d.node) j["node"] = a.node;
  if (u.duration || a.duration_us != d.duration_us) j["duration_ms"] = MsJson(a.duration_us);
  if (u.delta || a.delta_us != d.delta_us) j["delta_ms"] = MsJson(a.delta_us);
  if (u.message || a.command != d.command) j["command"] = a.command;
  if (!a.on_send.empty()) j["on_send"] = a.on_send;
  if (u.message || !a.on_send.empty() || a.occurrence != d.occurrence) j["occurrence"] = a.occurrence;
  return j;
}

json ToJson(const FaultSpec& faults) {
  RunSpec s;
  s.faults = faults;
  return ToJson(s)["faults"];
}

json ToJson(const RunSpec& spec) {
  json j = json::object();
  json faults = json::object();
  static const RunSpec kDefaults;
  for (const SpecField& f : SpecFields()) {
    if (f.omitted_at_default && FieldEquals(f, spec, kDefaults)) continue;
    (f.in_faults ? faults : j)[f.key] = FieldJson(f, spec);
  }
  json plan = json::array();
  for (const FaultAction& a : spec.faults.plan) plan.push_back(ToJson(a));
  faults["plan"] = plan;
  j["faults"] = faults;
  j["algorithm_options"] = OptionsJson(spec.algorithm_options);
  j["retry_options"] = OptionsJson(spec.retry_options);
  j["redis"] = spec.redis;
  if (!spec.profile_name.empty()) j["profile_name"] = spec.profile_name;  // informative: ResolveSpec re-derives it
  if (!spec.client_plans.empty()) {
    json plans = json::array();
    for (const ClientPlan& p : spec.client_plans) {
      plans.push_back({{"start_ms", p.start_ms}, {"requests", p.requests}, {"hold_ms", p.hold_ms},
                       {"acquire_timeout_ms", p.acquire_timeout_ms}});
      if (p.read) plans.back()["read"] = true;  // only when set: earlier reports keep their bytes
    }
    j["client_plans"] = plans;
  }
  return j;
}

bool SameJsonButSeed(const RunSpec& a, const RunSpec& b) {
  // What ToJson reads, member by member: a scalar field's value (a double to the bit, since -0.0
  // and 0.0 compare equal but print apart), the plan's actions as their JSON, and the rest whole.
  for (const SpecField& f : SpecFields()) {
    if (!f.in_faults && std::string_view(f.key) == "seed") continue;
    const FieldPtr pb = f.get(const_cast<RunSpec&>(b));
    const bool same = std::visit(
        [&](auto* x) {
          using T = std::remove_pointer_t<decltype(x)>;
          const T& y = *std::get<T*>(pb);
          if constexpr (std::is_same_v<T, double>)
            return std::bit_cast<uint64_t>(*x) == std::bit_cast<uint64_t>(y);
          else
            return *x == y;
        },
        f.get(const_cast<RunSpec&>(a)));
    if (!same) return false;
  }
  if (a.faults.plan.size() != b.faults.plan.size()) return false;
  for (size_t i = 0; i < a.faults.plan.size(); ++i)
    if (ToJson(a.faults.plan[i]).dump() != ToJson(b.faults.plan[i]).dump()) return false;
  return a.algorithm_options.values() == b.algorithm_options.values() &&
         a.retry_options.values() == b.retry_options.values() && a.redis == b.redis &&
         a.profile_name == b.profile_name && a.client_plans == b.client_plans;
}

namespace {

Status ReadClientPlans(const json& v, std::vector<ClientPlan>* out) {
  if (!v.is_array()) return Status::Invalid("'client_plans' must be a list of objects (got " + ShownJson(v) + ")");
  const std::vector<std::string> keys = {"start_ms", "requests", "hold_ms", "acquire_timeout_ms", "read"};
  std::vector<ClientPlan> plans;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string where = "client_plans[" + std::to_string(i) + "]";
    if (!v[i].is_object()) return Status::Invalid(Quote(where) + " must be an object (got " + ShownJson(v[i]) + ")");
    LOCKLAB_RETURN_IF_ERROR(CheckJsonKeys(v[i], keys, where + "."));
    ClientPlan p;
    for (const auto& [key, x] : v[i].items()) {
      if (key == "read") {
        if (!x.is_boolean()) return Status::Invalid(Quote(where + ".read") + " must be true or false (got " + ShownJson(x) + ")");
        p.read = x.get<bool>();
        continue;
      }
      int64_t* field = key == "start_ms" ? &p.start_ms : key == "requests" ? &p.requests
                     : key == "hold_ms"  ? &p.hold_ms  : &p.acquire_timeout_ms;
      LOCKLAB_RETURN_IF_ERROR(ReadInt64(x, where + "." + key, -1, std::numeric_limits<int64_t>::max(), field));
    }
    plans.push_back(p);
  }
  *out = std::move(plans);
  return Status::Ok();
}

}  // namespace

Result<FaultAction> FaultActionFromJson(const json& j, const std::string& where) {
  if (!j.is_object()) return Status::Invalid(Quote(where) + " must be an object (got " + ShownJson(j) + ")");
  LOCKLAB_RETURN_IF_ERROR(CheckJsonKeys(j, kFaultActionKeys, where.empty() ? "" : where + "."));
  FaultAction a;
  if (!j.contains("kind"))
    return Status::Invalid(Quote(Path(where, "kind")) + " is missing (one of: " + KindList() + ")");
  const json& k = j["kind"];
  if (!k.is_string() || !ParseFaultKind(k.get<std::string>(), &a.kind))
    return Status::Invalid(Quote(Path(where, "kind")) + " must be one of: " + KindList() + " (got " + ShownJson(k) +
                           ")");
  int64_t x = 0;
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  for (const auto& [key, v] : j.items()) {
    const std::string path = Path(where, key);
    if (key == "at_ms") LOCKLAB_RETURN_IF_ERROR(ReadMs(v, path, &a.at_us));
    if (key == "jitter_ms") LOCKLAB_RETURN_IF_ERROR(ReadMs(v, path, &a.jitter_us));
    if (key == "duration_ms") LOCKLAB_RETURN_IF_ERROR(ReadMs(v, path, &a.duration_us));
    if (key == "delta_ms") LOCKLAB_RETURN_IF_ERROR(ReadMs(v, path, &a.delta_us));
    if (key == "target" || key == "node" || key == "occurrence") {
      LOCKLAB_RETURN_IF_ERROR(ReadInt64(v, path, -kIntMax, kIntMax, &x));
      (key == "target" ? a.target : key == "node" ? a.node : a.occurrence) = static_cast<int>(x);
    }
    if (key == "command") {
      if (!v.is_string()) return Status::Invalid(Quote(path) + " must be a string (got " + ShownJson(v) + ")");
      a.command = v.get<std::string>();
    }
    if (key == "on_send") {
      if (!v.is_string() || v.get<std::string>().empty())
        return Status::Invalid(Quote(path) + " must be a command name or \"*\" (got " + ShownJson(v) + ")");
      a.on_send = v.get<std::string>();
    }
  }
  return a;
}

Status FromJson(const json& j, RunSpec* spec) {
  if (!j.is_object()) return Status::Invalid("a run spec must be a JSON object (got " + ShownJson(j) + ")");
  std::vector<std::string> top = {"algorithm_options", "retry_options", "redis", "faults", "client_plans",
                                  "profile_name"};
  std::vector<std::string> fault_keys = {"plan"};
  for (const SpecField& f : SpecFields()) (f.in_faults ? fault_keys : top).push_back(f.key);
  LOCKLAB_RETURN_IF_ERROR(CheckJsonKeys(j, top, ""));
  RunSpec s = *spec;  // untouched on failure
  for (const auto& [key, v] : j.items()) {
    if (const SpecField* f = FindSpecField(key, false)) {
      LOCKLAB_RETURN_IF_ERROR(ReadField(*f, v, &s));
    } else if (key == "algorithm_options") {
      LOCKLAB_RETURN_IF_ERROR(ReadOptions(v, key, &s.algorithm_options));
    } else if (key == "retry_options") {
      LOCKLAB_RETURN_IF_ERROR(ReadOptions(v, key, &s.retry_options));
    } else if (key == "redis") {
      if (!v.is_array())
        return Status::Invalid("'redis' must be a list of \"HOST:PORT\" strings (got " + ShownJson(v) + ")");
      s.redis.clear();
      for (const json& e : v) {
        if (!e.is_string())
          return Status::Invalid("'redis' must be a list of \"HOST:PORT\" strings (got " + ShownJson(e) + ")");
        s.redis.push_back(e.get<std::string>());
      }
    } else if (key == "profile_name") {  // what ToJson wrote; ResolveSpec derives it again from `profile`
      if (!v.is_string()) return Status::Invalid("'profile_name' must be a string (got " + ShownJson(v) + ")");
      s.profile_name = v.get<std::string>();
    } else if (key == "client_plans") {
      LOCKLAB_RETURN_IF_ERROR(ReadClientPlans(v, &s.client_plans));
    } else if (key == "faults") {
      if (!v.is_object()) return Status::Invalid("'faults' must be an object (got " + ShownJson(v) + ")");
      LOCKLAB_RETURN_IF_ERROR(CheckJsonKeys(v, fault_keys, "faults."));
      for (const auto& [fk, fv] : v.items()) {
        if (const SpecField* f = FindSpecField(fk, true)) {
          LOCKLAB_RETURN_IF_ERROR(ReadField(*f, fv, &s));
        } else {  // plan
          if (!fv.is_array())
            return Status::Invalid("'faults.plan' must be a list of faults (got " + ShownJson(fv) + ")");
          s.faults.plan.clear();
          for (size_t i = 0; i < fv.size(); ++i) {
            Result<FaultAction> a = FaultActionFromJson(fv[i], "faults.plan[" + std::to_string(i) + "]");
            if (!a.ok()) return a.status();
            s.faults.plan.push_back(*a);
          }
        }
      }
    }
  }
  *spec = s;
  return Status::Ok();
}

std::string AlgorithmChoice::ToString() const {
  std::string o = options.ToString();
  return o.empty() ? name : name + ":" + o;
}

Result<AlgorithmChoice> ParseAlgorithmChoice(const std::string& text) {
  const size_t colon = text.find(':');
  AlgorithmChoice c;
  c.name = text.substr(0, colon);
  if (c.name.empty())
    return Status::Invalid("empty algorithm name in '" + text + "' (expected NAME or NAME:opt=v,...)");
  if (colon != std::string::npos) {
    Result<Options> options = Options::Parse(text.substr(colon + 1));
    if (!options.ok()) return options.status().Prefixed("algorithm '" + text + "'");
    c.options = std::move(options).value();
  }
  return c;
}

Result<FaultAction> ParseFaultFlag(const std::string& text) {
  const std::string where = "--fault " + text;
  const size_t colon = text.find(':');
  json j;
  j["kind"] = text.substr(0, colon);
  if (colon != std::string::npos) {
    Result<Options> kv = Options::Parse(text.substr(colon + 1));
    if (!kv.ok())
      return Status::Invalid("fault '" + text + "': " + kv.status().message() +
                             " (expected KIND:at_ms=N,target=N,...)");
    for (const auto& [k, v] : kv->values()) {
      if (k == "kind") return Status::Invalid("fault '" + text + "': the kind goes before the ':'");
      if (k == "command" || k == "on_send") {
        j[k] = v;
        continue;
      }
      // Numbers keep their JSON type (integer or fraction) so FromJson checks them alike.
      int64_t i = 0;
      auto [pi, ei] = std::from_chars(v.data(), v.data() + v.size(), i);
      if (ei == std::errc() && pi == v.data() + v.size()) {
        j[k] = i;
        continue;
      }
      double d = 0;
      auto [pd, ed] = std::from_chars(v.data(), v.data() + v.size(), d);
      if (ed != std::errc() || pd != v.data() + v.size() || !std::isfinite(d))
        return Status::Invalid("fault '" + text + "': " + k + "=" + v + " is not a number");
      j[k] = d;
    }
  }
  Result<FaultAction> action = FaultActionFromJson(j, "");
  if (!action.ok()) return action.status().Prefixed("fault '" + text + "'");
  return action;
}

std::string FaultFlag(const FaultAction& a) {
  json j = ToJson(a);
  std::string s = j["kind"].get<std::string>();
  char sep = ':';
  for (const std::string& k : kFaultActionKeys) {
    if (k == "kind" || !j.contains(k)) continue;
    const json& v = j[k];
    s += sep + k + "=" +
         (v.is_string()         ? v.get<std::string>()
          : v.is_number_float() ? DoubleText(v.get<double>())
                                : v.dump());
    sep = ',';
  }
  return s;
}

namespace {

// "algorithms": ["NAME[:opt=v,...]", ...] instead of algorithm / algorithm_options.
Status ReadAlgorithmList(const json& j, ConfigFile* c) {
  if (j.contains("algorithm") || j.contains("algorithm_options"))
    return Status::Invalid("give either 'algorithm' (with 'algorithm_options') or 'algorithms', not both");
  const json& a = j["algorithms"];
  if (!a.is_array() || a.empty())
    return Status::Invalid("'algorithms' must be a non-empty list of \"NAME[:opt=v,...]\" strings (got " +
                           ShownJson(a) + ")");
  c->algorithms.clear();
  for (const json& e : a) {
    if (!e.is_string())
      return Status::Invalid("'algorithms' must be a list of \"NAME[:opt=v,...]\" strings (got " + ShownJson(e) + ")");
    Result<AlgorithmChoice> ch = ParseAlgorithmChoice(e.get<std::string>());
    if (!ch.ok()) return ch.status();
    c->algorithms.push_back(std::move(ch).value());
  }
  return Status::Ok();
}

// "seeds": [1, 2, ...] instead of seed.
Status ReadSeedList(const json& j, ConfigFile* c) {
  if (j.contains("seed")) return Status::Invalid("give either 'seed' or 'seeds', not both");
  const json& s = j["seeds"];
  if (!s.is_array() || s.empty())
    return Status::Invalid("'seeds' must be a non-empty list of non-negative integers (got " + ShownJson(s) + ")");
  c->seeds.clear();
  for (const json& e : s) {
    if (!e.is_number_unsigned())
      return Status::Invalid("'seeds' must be a list of non-negative integers (got " + ShownJson(e) + ")");
    c->seeds.push_back(e.get<uint64_t>());
  }
  return Status::Ok();
}

// "sweep": {"KEY": [values...], ...}; every value is checked now, so a bad one fails before any run.
Status ReadSweep(const json& sw, ConfigFile* c) {
  if (!sw.is_object() || sw.empty())
    return Status::Invalid(
        "'sweep' must be an object of lists, e.g. {\"retry\": [\"no3\", \"backoff\"], \"clients\": [10, 100]}");
  c->sweep.clear();
  for (const auto& [key, values] : sw.items()) {
    if (!values.is_array() || values.empty())
      return Status::Invalid("'sweep." + key + "' must be a non-empty list (got " + ShownJson(values) + ")");
    for (const json& v : values) {
      RunSpec probe;
      if (Status st = ApplySweepValue(key, v, &probe); !st.ok()) return st.Prefixed("'sweep." + key + "'");
    }
    c->sweep.emplace_back(key, std::vector<json>(values.begin(), values.end()));
  }
  return Status::Ok();
}

}  // namespace

Status ConfigFromJson(const json& in, ConfigFile* cfg) {
  const json* src = &in;
  // A report holds the config it ran: accept it, so a report can be re-run as it is.
  if (in.is_object() && in.contains("schema") && in["schema"].is_string() &&
      in["schema"].get<std::string>().rfind("locklab.report/", 0) == 0) {
    if (!in.contains("config")) return Status::Invalid("report has no 'config'");
    src = &in["config"];
  }
  if (!src->is_object()) return Status::Invalid("a config must be a JSON object (got " + ShownJson(*src) + ")");
  json j = *src;
  ConfigFile c = *cfg;
  if (j.contains("comment")) {  // free text for the reader of the file
    if (!j["comment"].is_string()) return Status::Invalid("'comment' must be a string");
    j.erase("comment");
  }
  if (j.contains("algorithms")) {
    LOCKLAB_RETURN_IF_ERROR(ReadAlgorithmList(j, &c));
    j.erase("algorithms");
  }
  if (j.contains("seeds")) {
    LOCKLAB_RETURN_IF_ERROR(ReadSeedList(j, &c));
    j.erase("seeds");
  }
  if (j.contains("sweep")) {
    LOCKLAB_RETURN_IF_ERROR(ReadSweep(j["sweep"], &c));
    j.erase("sweep");
  }
  LOCKLAB_RETURN_IF_ERROR(FromJson(j, &c.base));
  size_t runs = std::max<size_t>(c.algorithms.size(), 1) * std::max<size_t>(c.seeds.size(), 1);
  for (const auto& [key, values] : c.sweep) runs = std::min<size_t>(runs * values.size(), kMaxSweepRuns + 1);
  if (runs > kMaxSweepRuns)
    return Status::Invalid("the sweep has " + std::to_string(runs) + " runs (limit " + std::to_string(kMaxSweepRuns) +
                           ")");
  *cfg = c;
  return Status::Ok();
}

Result<ConfigFile> LoadConfigFile(const std::string& path) {
  Result<std::string> text = ReadFileText(path);
  if (!text.ok()) return text.status();
  json j;
  try {
    // Comments are allowed: config files are written by hand.
    j = json::parse(*text, nullptr, true, true);
  } catch (const json::exception& e) {  // a syntax error, or a number too large for a double (1e999)
    std::string what = e.what();
    size_t p = what.find("] ");  // drop "[json.exception.parse_error.101] "
    return Status::Invalid(path + ": invalid JSON: " + (p == std::string::npos ? what : what.substr(p + 2)));
  }
  ConfigFile cfg;
  if (Status st = ConfigFromJson(j, &cfg); !st.ok()) return st.Prefixed(path);
  return cfg;
}

Status ApplySweepValue(const std::string& key, const json& value, RunSpec* spec) {
  if (key == "retry") {
    // The same NAME[:opt=v,...] form as an algorithm.
    Result<AlgorithmChoice> c = value.is_string() ? ParseAlgorithmChoice(value.get<std::string>())
                                                  : Result<AlgorithmChoice>(Status::Invalid("not a string"));
    if (!c.ok()) return Status::Invalid("a retry policy is \"NAME[:opt=v,...]\" (got " + ShownJson(value) + ")");
    spec->retry = c->name;
    spec->retry_options = c->options;
    return Status::Ok();
  }
  if (key == "algorithm" || key == "seed") return Status::Invalid("use the lists 'algorithms' and 'seeds' for " + key);
  const bool in_faults = key.rfind("faults.", 0) == 0;
  const SpecField* f = FindSpecField(in_faults ? key.substr(7) : key, in_faults);
  if (f == nullptr)
    return Status::Invalid("not a scalar run field (e.g. clients, hold_ms, ttl_ms, faults.net_delay_ms, retry)");
  return ReadField(*f, value, spec);
}

std::vector<RunSpec> ExpandSweep(const ConfigFile& cfg) {
  std::vector<AlgorithmChoice> algs = cfg.algorithms;
  if (algs.empty()) algs.push_back({cfg.base.algorithm, cfg.base.algorithm_options});
  std::vector<uint64_t> seeds = cfg.seeds;
  if (seeds.empty()) seeds.push_back(cfg.base.seed);
  // The sweep's combinations, as specs built from the base (values were checked when read).
  std::vector<RunSpec> combos = {cfg.base};
  for (const auto& [key, values] : cfg.sweep) {
    std::vector<RunSpec> next;
    for (const RunSpec& c : combos)
      for (const json& v : values) {
        RunSpec s = c;
        (void)ApplySweepValue(key, v, &s);  // checked when read (ConfigFromJson)
        next.push_back(std::move(s));
      }
    combos = std::move(next);
  }
  std::vector<RunSpec> out;
  for (const auto& a : algs)
    for (const RunSpec& combo : combos)
      for (uint64_t seed : seeds) {
        RunSpec s = combo;
        s.algorithm = a.name;
        s.algorithm_options = a.options;
        s.seed = seed;
        out.push_back(s);
      }
  return out;
}

}  // namespace locklab
