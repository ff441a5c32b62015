#include "harness/scenario/scenario.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <type_traits>
#include <variant>

#include "harness/report/report.h"
#include "harness/run/build_info.h"
#include "harness/run/config.h"
#include "harness/run/read_file.h"
#include "harness/run/spec_fields.h"

namespace locklab {
namespace {

using nlohmann::json;

// An object with only `known` keys; messages start with `where`.
Status CheckKeys(const json& obj, const std::vector<std::string>& known, const std::string& where) {
  if (!obj.is_object()) return Status::Invalid(where + " must be an object (got " + ShownJson(obj) + ")");
  return CheckJsonKeys(obj, known, "").Prefixed(where);
}

Result<std::string> ReadString(const json& v, const std::string& where) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {  // a long text may be written as a list of lines
    std::string s;
    for (const json& line : v) {
      if (!line.is_string()) return Status::Invalid(where + " must be a string or a list of strings");
      s += (s.empty() ? "" : "\n") + line.get<std::string>();
    }
    return s;
  }
  return Status::Invalid(where + " must be a string (got " + ShownJson(v) + ")");
}

// Reads the string at obj[key] into *out when the key is there; messages name `where`.
Status ReadOptionalString(const json& obj, const char* key, const std::string& where, std::string* out) {
  if (!obj.contains(key)) return Status::Ok();
  Result<std::string> s = ReadString(obj[key], where);
  if (!s.ok()) return s.status();
  *out = std::move(s).value();
  return Status::Ok();
}

// obj[key] as a string; kInvalid `message` when it is absent or not a string.
Result<std::string> RequiredString(const json& obj, const char* key, const std::string& message) {
  if (!obj.contains(key)) return Status::Invalid(message);
  Result<std::string> s = ReadString(obj[key], key);
  if (!s.ok()) return Status::Invalid(message);
  return s;
}

// A number, or an expression over the parameters; finite either way.
Result<double> ReadNum(const json& v, const Params& p, const std::string& where) {
  if (v.is_number()) {
    if (!std::isfinite(v.get<double>())) return Status::Invalid(where + " must be a finite number");
    return v.get<double>();
  }
  if (v.is_string()) {
    Result<double> x = EvalExpr(v.get<std::string>(), p);
    if (!x.ok()) return x.status().Prefixed(where);
    return x;
  }
  return Status::Invalid(where + " must be a number or an expression (got " + ShownJson(v) + ")");
}

Result<int64_t> ReadInt(const json& v, const Params& p, const std::string& where) {
  Result<double> d = ReadNum(v, p, where);
  if (!d.ok()) return d.status();
  if (std::fabs(*d) > 9e15) return Status::Invalid(where + " is out of range");
  return static_cast<int64_t>(std::llround(*d));
}

Status ReadParams(const json& v, const std::string& where, Params* out) {
  if (!v.is_object()) return Status::Invalid(where + " must be an object of numbers (got " + ShownJson(v) + ")");
  for (const auto& [k, x] : v.items()) {
    if (!x.is_number() || !std::isfinite(x.get<double>()))
      return Status::Invalid(where + "." + k + " must be a number (got " + ShownJson(x) + ")");
    (*out)[k] = x.get<double>();
  }
  return Status::Ok();
}

int ClientIndex(const Scenario& sc, const std::string& name) {
  for (size_t i = 0; i < sc.clients.size(); ++i)
    if (sc.clients[i] == name) return static_cast<int>(i);
  return -1;
}

std::string ClientList(const Scenario& sc) {
  std::string s;
  for (const auto& c : sc.clients) s += (s.empty() ? "" : ", ") + c;
  return s.empty() ? "none named" : s;
}

// "A+B" -> (0, 1).
Status ReadPairs(const Scenario& sc, const json& v, const std::string& where, std::vector<std::pair<int, int>>* out) {
  if (!v.is_array()) return Status::Invalid(where + " must be a list of \"A+B\" strings");
  for (const json& x : v) {
    if (!x.is_string()) return Status::Invalid(where + " must be a list of \"A+B\" strings (got " + ShownJson(x) + ")");
    const std::string s = x.get<std::string>();
    const size_t plus = s.find('+');
    const int a = plus == std::string::npos ? -1 : ClientIndex(sc, s.substr(0, plus));
    const int b = plus == std::string::npos ? -1 : ClientIndex(sc, s.substr(plus + 1));
    if (a < 0 || b < 0 || a == b)
      return Status::Invalid(where + ": '" + s + "' is not two of the scenario's clients (" + ClientList(sc) + ")");
    out->emplace_back(std::min(a, b), std::max(a, b));
  }
  return Status::Ok();
}

Result<Expectation> ReadExpect(const Scenario& sc, const json& v, const Params& p, const std::string& where) {
  LOCKLAB_RETURN_IF_ERROR(
      CheckKeys(v, {"overlap", "no_overlap", "damage", "stuck", "releases_failed", "orders"}, where));
  Expectation e;
  for (const auto& [k, x] : v.items()) {
    const std::string w = where + "." + k;
    if (k == "overlap") {
      if (x.is_boolean()) {
        e.overlap = x.get<bool>();
      } else if (!ReadPairs(sc, x, w, &e.overlap_pairs).ok()) {
        return Status::Invalid(w + " must be true, false or a list of \"A+B\" pairs");
      }
    } else if (k == "no_overlap") {
      LOCKLAB_RETURN_IF_ERROR(ReadPairs(sc, x, w, &e.no_overlap_pairs));
    } else if (k == "orders") {
      Result<int64_t> n = ReadInt(x, p, w);
      if (!n.ok()) return n.status();
      e.orders = *n;
    } else {
      if (!x.is_boolean()) return Status::Invalid(w + " must be true or false (got " + ShownJson(x) + ")");
      (k == "damage" ? e.damage : k == "stuck" ? e.stuck : e.releases_failed) = x.get<bool>();
    }
  }
  return e;
}

// A step's "client" (for a fault on a client) into a.target.
Status ReadStepClient(const Scenario& sc, const json& v, const std::string& where, FaultAction* a) {
  using K = FaultAction::Kind;
  const bool on_client = a->kind == K::kPauseClient || a->kind == K::kCrashClient || a->kind == K::kClientClockJump ||
                         a->kind == K::kPartition || a->kind == K::kDelayMessage;
  if (on_client) {
    if (!v.contains("client") || !v["client"].is_string())
      return Status::Invalid(where + ".client must name the client (" + ClientList(sc) + ")");
    a->target = ClientIndex(sc, v["client"].get<std::string>());
    if (a->target < 0)
      return Status::Invalid(where + ".client: no client '" + v["client"].get<std::string>() + "' (" + ClientList(sc) +
                             ")");
  } else if (v.contains("client")) {
    return Status::Invalid(where + ": " + v["do"].get<std::string>() +
                           " acts on a node: give \"node\", not \"client\"");
  }
  return Status::Ok();
}

// One timeline step -> a planned fault.
Result<FaultAction> ReadStep(const Scenario& sc, const json& v, const Params& p, const std::string& where) {
  LOCKLAB_RETURN_IF_ERROR(CheckKeys(
      v, {"do", "at_ms", "client", "node", "duration_ms", "delta_ms", "command", "occurrence", "on_send", "why"},
      where));
  if (!v.contains("do") || !v["do"].is_string())
    return Status::Invalid(where + ".do must name a fault (see `locklab list`)");
  FaultAction a;
  if (!ParseFaultKind(v["do"].get<std::string>(), &a.kind))
    return Status::Invalid(where + ".do: unknown fault '" + v["do"].get<std::string>() + "' (see `locklab list`)");
  LOCKLAB_RETURN_IF_ERROR(ReadStepClient(sc, v, where, &a));
  for (const auto& [k, val] : v.items()) {
    const std::string w = where + "." + k;
    if (k == "at_ms" || k == "duration_ms" || k == "delta_ms") {
      Result<double> ms = ReadNum(val, p, w);
      if (!ms.ok()) return ms.status();
      if (std::fabs(*ms) > 9e12) return Status::Invalid(w + " is out of range");
      const int64_t us = std::llround(*ms * 1000);
      (k == "at_ms" ? a.at_us : k == "duration_ms" ? a.duration_us : a.delta_us) = us;
    } else if (k == "node" || k == "occurrence") {
      Result<int64_t> x = ReadInt(val, p, w);
      if (!x.ok()) return x.status();
      if (*x < 0 || *x > 1'000'000) return Status::Invalid(w + " is out of range");
      if (k == "occurrence")
        a.occurrence = static_cast<int>(*x);
      else if (a.kind == FaultAction::Kind::kPartition)
        a.node = static_cast<int>(*x);
      else
        a.target = static_cast<int>(*x);
    } else if (k == "command" || k == "on_send") {
      if (!val.is_string()) return Status::Invalid(w + " must be a command name");
      (k == "command" ? a.command : a.on_send) = val.get<std::string>();
    }
  }
  return a;
}

bool HasPair(const std::vector<std::pair<int, int>>& v, std::pair<int, int> p) {
  return std::find(v.begin(), v.end(), p) != v.end();
}

std::string Join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

Result<json> ReadJsonFile(const std::string& path) {
  Result<std::string> text = ReadFileText(path);
  if (!text.ok()) return text.status();
  try {
    return json::parse(*text);
  } catch (const json::exception& e) {
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    return Status::Invalid(path + ": not valid JSON: " + what);
  }
}

// id, title, source, story, redis_note, backends and params.
Status ReadHeader(const json& doc, Scenario* sc) {
  LOCKLAB_RETURN_IF_ERROR(CheckKeys(doc,
                                    {"id", "title", "source", "story", "backends", "redis_note", "params", "run",
                                     "clients", "steps", "liveness_bound_ms", "variants", "also"},
                                    "the scenario"));
  for (const char* k : {"id", "title", "variants"})
    if (!doc.contains(k)) return Status::Invalid(std::string("'") + k + "' is missing");
  LOCKLAB_RETURN_IF_ERROR(ReadOptionalString(doc, "id", "id", &sc->id));
  LOCKLAB_RETURN_IF_ERROR(ReadOptionalString(doc, "title", "title", &sc->title));
  if (sc->id.empty() || sc->id.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos)
    return Status::Invalid("id '" + sc->id + "' must be lower-case letters, digits and '-'");
  LOCKLAB_RETURN_IF_ERROR(ReadOptionalString(doc, "source", "source", &sc->source));
  LOCKLAB_RETURN_IF_ERROR(ReadOptionalString(doc, "story", "story", &sc->story));
  LOCKLAB_RETURN_IF_ERROR(ReadOptionalString(doc, "redis_note", "redis_note", &sc->redis_note));
  sc->backends = {"sim"};
  if (doc.contains("backends")) {
    const json& b = doc["backends"];
    if (!b.is_array() || b.empty())
      return Status::Invalid("'backends' must be a list: [\"sim\"] or [\"sim\", \"redis\"]");
    sc->backends.clear();
    for (const json& x : b) {
      if (!x.is_string() || (x != "sim" && x != "redis"))
        return Status::Invalid("'backends' may hold \"sim\" and \"redis\"");
      sc->backends.push_back(x.get<std::string>());
    }
  }
  if (doc.contains("params")) LOCKLAB_RETURN_IF_ERROR(ReadParams(doc["params"], "params", &sc->params));
  return Status::Ok();
}

// The clients' names (their plans are read when a variant is compiled) and the steps' shape.
Status ReadClientNames(const json& doc, Scenario* sc) {
  if (doc.contains("clients")) {
    const json& cl = doc["clients"];
    if (!cl.is_array() || cl.size() > kMaxScenarioClients)
      return Status::Invalid("'clients' must be a list of at most " + std::to_string(kMaxScenarioClients) + " clients");
    for (size_t i = 0; i < cl.size(); ++i) {
      const std::string w = "clients[" + std::to_string(i) + "]";
      LOCKLAB_RETURN_IF_ERROR(
          CheckKeys(cl[i], {"name", "start_ms", "requests", "hold_ms", "acquire_timeout_ms", "mode", "why"}, w));
      std::string name = "c" + std::to_string(i);
      LOCKLAB_RETURN_IF_ERROR(ReadOptionalString(cl[i], "name", w + ".name", &name));
      if (ClientIndex(*sc, name) >= 0) return Status::Invalid(w + ": client name '" + name + "' is used twice");
      sc->clients.push_back(name);
    }
  }
  if (doc.contains("steps") && (!doc["steps"].is_array() || doc["steps"].size() > kMaxScenarioSteps))
    return Status::Invalid("'steps' must be a list of at most " + std::to_string(kMaxScenarioSteps) + " steps");
  return Status::Ok();
}

Status ReadVariants(const json& doc, Scenario* sc) {
  if (!doc["variants"].is_array() || doc["variants"].empty() || doc["variants"].size() > kMaxScenarioVariants)
    return Status::Invalid("'variants' must be a non-empty list of at most " + std::to_string(kMaxScenarioVariants) +
                           " variants");
  for (size_t i = 0; i < doc["variants"].size(); ++i) {
    const json& v = doc["variants"][i];
    const std::string w = "variants[" + std::to_string(i) + "]";
    LOCKLAB_RETURN_IF_ERROR(CheckKeys(v, {"name", "algorithm", "note", "params", "run", "steps", "expect"}, w));
    ScenarioVariant var;
    var.doc = v;
    Result<std::string> name = RequiredString(v, "name", w + ".name must be a string");
    if (!name.ok()) return name.status();
    var.name = *name;
    Result<std::string> alg =
        RequiredString(v, "algorithm", w + ".algorithm must name an algorithm, e.g. \"token:release=del\"");
    if (!alg.ok()) return alg.status();
    var.algorithm = *alg;
    LOCKLAB_RETURN_IF_ERROR(ReadOptionalString(v, "note", w + ".note", &var.note));
    if (!v.contains("expect")) return Status::Invalid(w + ".expect is missing: say what this variant must show");
    if (sc->FindVariant(var.name) != nullptr)
      return Status::Invalid(w + ": variant '" + var.name + "' is defined twice");
    sc->variants.push_back(var);
  }
  return Status::Ok();
}

Status ReadAlso(const json& doc, Scenario* sc) {
  if (!doc.contains("also")) return Status::Ok();
  if (!doc["also"].is_array() || doc["also"].size() > kMaxScenarioVariants)
    return Status::Invalid("'also' must be a list of at most " + std::to_string(kMaxScenarioVariants) + " entries");
  for (size_t i = 0; i < doc["also"].size(); ++i) {
    const json& v = doc["also"][i];
    const std::string w = "also[" + std::to_string(i) + "]";
    LOCKLAB_RETURN_IF_ERROR(CheckKeys(v, {"variant", "params", "expect", "why"}, w));
    Variation a;
    const std::string unknown = w + ".variant must name one of the scenario's variants";
    Result<std::string> variant = RequiredString(v, "variant", unknown);
    if (!variant.ok() || sc->FindVariant(*variant) == nullptr) return Status::Invalid(unknown);
    a.variant = *variant;
    if (v.contains("params")) LOCKLAB_RETURN_IF_ERROR(ReadParams(v["params"], w + ".params", &a.params));
    if (!v.contains("expect")) return Status::Invalid(w + ".expect is missing");
    a.expect = v["expect"];
    LOCKLAB_RETURN_IF_ERROR(ReadOptionalString(v, "why", w + ".why", &a.why));
    sc->also.push_back(a);
  }
  return Status::Ok();
}

// Every variant and variation, once per backend, so that a mistake shows up when the file is read.
Status CompileAll(const Scenario& sc) {
  for (const std::string& backend : sc.backends) {
    for (const auto& var : sc.variants) {
      Result<ScenarioRun> run = CompileVariant(sc, var.name, {}, backend, 1, nullptr);
      if (!run.ok()) return run.status().Prefixed("variant " + var.name + " (" + backend + ")");
    }
    for (size_t i = 0; i < sc.also.size(); ++i) {
      Result<ScenarioRun> run =
          CompileVariant(sc, sc.also[i].variant, sc.also[i].params, backend, 1, &sc.also[i].expect);
      if (!run.ok()) return run.status().Prefixed("also[" + std::to_string(i) + "] (" + backend + ")");
    }
  }
  return Status::Ok();
}

// The parameters in force: the scenario's defaults < the variant's < the user's overrides (each
// of which must be a parameter the scenario has).
Result<Params> VariantParams(const Scenario& sc, const ScenarioVariant& var, const Params& overrides) {
  Params params = sc.params;
  if (var.doc.contains("params")) LOCKLAB_RETURN_IF_ERROR(ReadParams(var.doc["params"], "params", &params));
  for (const auto& [k, v] : overrides) {
    if (params.count(k) == 0) {
      std::vector<std::string> names;
      for (const auto& [n, x] : params) names.push_back(n);
      return Status::Invalid("scenario " + sc.id + " has no parameter '" + k +
                             "' (its parameters: " + (names.empty() ? "none" : Join(names, ", ")) + ")");
    }
    params[k] = v;
  }
  return params;
}

// A parameter named like a numeric run field (ttl_ms, stock, clients, ...) sets that field.
Status ApplyParamFields(const Params& p, RunSpec* s) {
  for (const auto& [k, value] : p) {
    const SpecField* field = FindSpecField(k, false);
    if (field == nullptr) continue;
    const double v = value;
    const bool ok = std::visit(
        [&](auto* ptr) -> bool {
          using T = std::remove_pointer_t<decltype(ptr)>;
          if constexpr (std::is_same_v<T, double>) {
            *ptr = v;
            return true;
          } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
            if (v < 0 && std::is_unsigned_v<T>) return false;
            if (!(std::fabs(v) <= static_cast<double>(std::numeric_limits<T>::max()))) return false;
            *ptr = static_cast<T>(std::llround(v));
            return true;
          } else {
            return false;
          }
        },
        field->get(*s));
    if (!ok)
      return Status::Invalid("parameter '" + k + "' names the run field " + k + ", which does not take this number");
  }
  return Status::Ok();
}

// The scenario's named clients, each with its own plan.
Status ReadClientPlans(const Scenario& sc, const Params& p, RunSpec* s) {
  if (sc.clients.empty()) return Status::Ok();
  const json& cl = sc.doc["clients"];
  s->clients = static_cast<int>(cl.size());
  s->client_plans.clear();
  for (size_t i = 0; i < cl.size(); ++i) {
    ClientPlan plan;
    const std::string w = "clients[" + std::to_string(i) + "]";
    for (const char* key : {"start_ms", "requests", "hold_ms", "acquire_timeout_ms"}) {
      if (!cl[i].contains(key)) continue;
      Result<int64_t> x = ReadInt(cl[i][key], p, w + "." + key);
      if (!x.ok()) return x.status();
      const std::string k = key;
      (k == "start_ms"   ? plan.start_ms
       : k == "requests" ? plan.requests
       : k == "hold_ms"  ? plan.hold_ms
                         : plan.acquire_timeout_ms) = *x;
    }
    if (cl[i].contains("mode")) {  // "read" or "write" (the default): what its requests take the lock for
      const json& m = cl[i]["mode"];
      if (!m.is_string() || (m != "read" && m != "write"))
        return Status::Invalid(w + ".mode must be \"read\" or \"write\" (got " + m.dump() + ")");
      plan.read = m == "read";
    }
    s->client_plans.push_back(plan);
  }
  return Status::Ok();
}

// The scenario's steps, then the variant's, as the run's fault plan.
Status ReadSteps(const Scenario& sc, const ScenarioVariant& var, const Params& p, RunSpec* s) {
  for (const json* steps : {sc.doc.contains("steps") ? &sc.doc["steps"] : nullptr,
                            var.doc.contains("steps") ? &var.doc["steps"] : nullptr}) {
    if (steps == nullptr) continue;
    if (!steps->is_array() || steps->size() > kMaxScenarioSteps)
      return Status::Invalid("steps must be a list of at most " + std::to_string(kMaxScenarioSteps) + " steps");
    for (size_t i = 0; i < steps->size(); ++i) {
      Result<FaultAction> a = ReadStep(sc, (*steps)[i], p, "steps[" + std::to_string(i) + "]");
      if (!a.ok()) return a.status();
      s->faults.plan.push_back(*a);
    }
  }
  return Status::Ok();
}

// The command that reruns exactly this: parameters that differ from the file's defaults.
std::string ScenarioReplay(const Scenario& sc, const std::string& variant, const Params& overrides,
                           const std::string& backend, uint64_t seed) {
  const bool in_tree = sc.path.empty() || sc.path.find("/harness/scenarios/") != std::string::npos;
  std::string replay = "locklab scenario " + ShellQuote(in_tree ? sc.id : sc.path);
  replay += " --variant " + ShellQuote(variant) + " --backend " + backend + " --seed " + std::to_string(seed);
  for (const auto& [k, v] : overrides) replay += " --param " + ShellQuote(k + "=" + DoubleText(v));
  return replay;
}

}  // namespace

bool Scenario::runs_on(const std::string& backend) const {
  return std::find(backends.begin(), backends.end(), backend) != backends.end();
}

const ScenarioVariant* Scenario::FindVariant(const std::string& name) const {
  for (const auto& v : variants)
    if (v.name == name) return &v;
  return nullptr;
}

std::string ClientName(const Scenario& sc, int client) {
  if (client >= 0 && static_cast<size_t>(client) < sc.clients.size()) return sc.clients[static_cast<size_t>(client)];
  return "c" + std::to_string(client);
}

Result<Scenario> ParseScenario(const json& doc, const std::string& path) {
  Scenario sc;
  sc.path = path;
  sc.doc = doc;
  for (Status (*step)(const json&, Scenario*) : {&ReadHeader, &ReadClientNames, &ReadVariants, &ReadAlso})
    LOCKLAB_RETURN_IF_ERROR(step(doc, &sc).Prefixed(path));
  LOCKLAB_RETURN_IF_ERROR(CompileAll(sc).Prefixed(path));
  return sc;
}

Result<Scenario> LoadScenario(const std::string& path) {
  Result<json> doc = ReadJsonFile(path);
  if (!doc.ok()) return doc.status();
  return ParseScenario(*doc, path);
}

Result<std::vector<Scenario>> LoadScenarioDir(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return Status::Invalid("scenario directory " + dir + " does not exist (set --scenario-dir or LOCKLAB_SCENARIOS)");
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".json") continue;
    if (paths.size() >= kMaxScenarioFiles)
      return Status::Invalid(dir + ": more than " + std::to_string(kMaxScenarioFiles) + " scenario files");
    paths.push_back(entry.path().string());
  }
  if (ec) return Status::Invalid(dir + ": " + ec.message());
  std::vector<Scenario> all;
  for (const auto& p : paths) {
    Result<Scenario> sc = LoadScenario(p);
    if (!sc.ok()) return sc.status();
    all.push_back(std::move(sc).value());
  }
  std::sort(all.begin(), all.end(), [](const Scenario& a, const Scenario& b) { return a.id < b.id; });
  for (size_t i = 1; i < all.size(); ++i)
    if (all[i].id == all[i - 1].id)
      return Status::Invalid("scenario id '" + all[i].id + "' is used by " + all[i - 1].path + " and " + all[i].path);
  return all;
}

std::string DefaultScenarioDir() {
  if (const char* env = std::getenv("LOCKLAB_SCENARIOS"); env != nullptr && *env != '\0') return env;
  return std::string(SourceDir()) + "/harness/scenarios";
}

Result<Scenario> FindScenario(const std::string& name_or_path, const std::string& dir) {
  if (name_or_path.size() > 5 && name_or_path.compare(name_or_path.size() - 5, 5, ".json") == 0)
    return LoadScenario(name_or_path);
  Result<std::vector<Scenario>> all = LoadScenarioDir(dir);
  if (!all.ok()) return all.status();
  std::vector<std::string> ids;
  for (auto& sc : *all) {
    if (sc.id == name_or_path) return std::move(sc);
    ids.push_back(sc.id);
  }
  return Status::Invalid("unknown scenario '" + name_or_path + "' (" + Join(ids, ", ") +
                         "; or a path to a .json file)");
}

Result<ScenarioRun> CompileVariant(const Scenario& sc, const std::string& variant, const Params& overrides,
                                   const std::string& backend, uint64_t seed, const json* expect_doc) {
  const ScenarioVariant* var = sc.FindVariant(variant);
  if (var == nullptr) {
    std::vector<std::string> names;
    for (const auto& v : sc.variants) names.push_back(v.name);
    return Status::Invalid("scenario " + sc.id + " has no variant '" + variant + "' (" + Join(names, ", ") + ")");
  }
  if (!sc.runs_on(backend))
    return Status::Invalid("scenario " + sc.id + " runs on " + Join(sc.backends, " and ") + " only" +
                           (sc.redis_note.empty() ? "" : " (" + sc.redis_note + ")"));
  ScenarioRun run;
  run.scenario = sc.id;
  run.variant = variant;
  run.client_names = sc.clients;
  Result<Params> params = VariantParams(sc, *var, overrides);
  if (!params.ok()) return params.status();
  run.params = std::move(params).value();
  const Params& p = run.params;

  RunSpec& s = run.spec;
  if (sc.doc.contains("run")) LOCKLAB_RETURN_IF_ERROR(FromJson(sc.doc["run"], &s).Prefixed("run"));
  if (var->doc.contains("run")) LOCKLAB_RETURN_IF_ERROR(FromJson(var->doc["run"], &s).Prefixed("variant run"));
  Result<AlgorithmChoice> choice = ParseAlgorithmChoice(var->algorithm);
  if (!choice.ok()) return choice.status();
  s.algorithm = choice->name;
  s.algorithm_options = choice->options;
  s.backend = backend;
  s.seed = seed;
  LOCKLAB_RETURN_IF_ERROR(ApplyParamFields(p, &s));
  LOCKLAB_RETURN_IF_ERROR(ReadClientPlans(sc, p, &s));
  LOCKLAB_RETURN_IF_ERROR(ReadSteps(sc, *var, p, &s));
  if (sc.doc.contains("liveness_bound_ms")) {
    Result<double> bound = ReadNum(sc.doc["liveness_bound_ms"], p, "liveness_bound_ms");
    if (!bound.ok()) return bound.status();
    run.liveness_bound_ms = *bound;
  }
  Result<Expectation> expect = ReadExpect(sc, expect_doc != nullptr ? *expect_doc : var->doc["expect"], p, "expect");
  if (!expect.ok()) return expect.status();
  run.expect = *expect;
  if (run.expect.stuck.has_value() && run.liveness_bound_ms <= 0)
    return Status::Invalid("expect.stuck needs the scenario's liveness_bound_ms");
  LOCKLAB_RETURN_IF_ERROR(ResolveSpec(&s));
  run.replay = ScenarioReplay(sc, variant, overrides, backend, seed);
  return run;
}

Verdict Judge(const ScenarioRun& run, const RunResult& r) {
  auto name = [&](int c) {
    return c >= 0 && static_cast<size_t>(c) < run.client_names.size() ? run.client_names[static_cast<size_t>(c)]
                                                                         : "c" + std::to_string(c);
  };
  auto pair_text = [&](std::pair<int, int> p) { return name(p.first) + "+" + name(p.second); };
  const SafetyResult& safety = r.check.safety;
  const ResourceResult& res = r.check.resource;
  const LivenessResult& live = r.check.liveness;
  const Expectation& e = run.expect;
  Verdict v;
  std::vector<std::string> exp, obs;
  auto judge = [&](bool ok, std::string expected, std::string observed) {
    exp.push_back(expected);
    obs.push_back(observed);
    if (!ok) v.mismatches.push_back("expected " + expected + ", observed " + observed);
  };
  const bool overlap = safety.violations > 0;
  std::vector<std::string> pairs;
  for (const auto& p : safety.overlapping_pairs) pairs.push_back(pair_text(p));
  const std::string overlap_obs = overlap ? "overlap (" + Join(pairs, ", ") + ")" : "no overlap";
  if (e.overlap.has_value()) judge(*e.overlap == overlap, *e.overlap ? "overlap" : "no overlap", overlap_obs);
  for (const auto& p : e.overlap_pairs)
    judge(HasPair(safety.overlapping_pairs, p), pair_text(p) + " overlap",
          HasPair(safety.overlapping_pairs, p) ? pair_text(p) + " overlap" : overlap_obs);
  for (const auto& p : e.no_overlap_pairs)
    judge(!HasPair(safety.overlapping_pairs, p), pair_text(p) + " apart",
          HasPair(safety.overlapping_pairs, p) ? pair_text(p) + " overlap" : pair_text(p) + " apart");
  if (e.damage.has_value()) {
    const int64_t damage = res.LostOrOversold() + res.stale_writes_accepted + res.stale_reads;
    std::string o = damage > 0 ? "damage (lost " + std::to_string(res.lost_updates) + ", oversold " +
                                     std::to_string(res.oversold) + ", stale " +
                                     std::to_string(res.stale_writes_accepted) +
                                     (res.stale_reads > 0 ? ", stale reads " + std::to_string(res.stale_reads) : "") + ")"
                               : "no damage";
    judge(*e.damage == (damage > 0), *e.damage ? "damage" : "no damage", o);
  }
  if (e.stuck.has_value()) {
    const bool stuck = live.stuck_ms_max >= run.liveness_bound_ms;
    const std::string bound = std::to_string(std::llround(run.liveness_bound_ms));
    std::ostringstream o;
    o << (stuck ? "stuck " : "not stuck (") << std::llround(live.stuck_ms_max) << "ms" << (stuck ? "" : ")");
    judge(*e.stuck == stuck, *e.stuck ? "stuck >= " + bound + "ms" : "stuck < " + bound + "ms", o.str());
  }
  if (e.releases_failed.has_value()) {
    const bool failed = live.releases_failed > 0;
    judge(*e.releases_failed == failed, *e.releases_failed ? "a release fails" : "releases ok",
          failed ? std::to_string(live.releases_failed) + " release(s) failed" : "releases ok");
  }
  if (e.orders.has_value())
    judge(res.orders == *e.orders, std::to_string(*e.orders) + " orders", std::to_string(res.orders) + " orders");
  if (!r.completed) v.mismatches.push_back("the run did not complete: " + r.error);
  v.matches = v.mismatches.empty();
  v.expected = Join(exp, ", ");
  v.observed = Join(obs, ", ");
  return v;
}

}  // namespace locklab
