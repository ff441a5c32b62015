#include "harness/scenario/scenario.h"
#include "harness/run/build_info.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <type_traits>
#include <variant>

#include "harness/run/config.h"
#include "harness/report/report.h"
#include "harness/run/spec_fields.h"

namespace locklab {
namespace {

using nlohmann::json;

bool Fail(std::string* error, std::string msg) {
  *error = std::move(msg);
  return false;
}

// An object with only `known` keys; messages start with `where`.
bool CheckKeys(const json& obj, const std::vector<std::string>& known, const std::string& where, std::string* error) {
  if (!obj.is_object()) return Fail(error, where + " must be an object (got " + ShownJson(obj) + ")");
  if (CheckJsonKeys(obj, known, "", error)) return true;
  return Fail(error, where + ": " + *error);
}

bool ReadString(const json& v, const std::string& where, std::string* out, std::string* error) {
  if (v.is_string()) {
    *out = v.get<std::string>();
    return true;
  }
  if (v.is_array()) {  // a long text may be written as a list of lines
    std::string s;
    for (const json& line : v) {
      if (!line.is_string()) return Fail(error, where + " must be a string or a list of strings");
      s += (s.empty() ? "" : "\n") + line.get<std::string>();
    }
    *out = s;
    return true;
  }
  return Fail(error, where + " must be a string (got " + ShownJson(v) + ")");
}

// A number, or an expression over the parameters.
bool ReadNum(const json& v, const Params& p, const std::string& where, double* out, std::string* error) {
  if (v.is_number()) {
    *out = v.get<double>();
    return true;
  }
  if (v.is_string()) {
    if (!EvalExpr(v.get<std::string>(), p, out, error)) return Fail(error, where + ": " + *error);
    return true;
  }
  return Fail(error, where + " must be a number or an expression (got " + ShownJson(v) + ")");
}

bool ReadInt(const json& v, const Params& p, const std::string& where, int64_t* out, std::string* error) {
  double d = 0;
  if (!ReadNum(v, p, where, &d, error)) return false;
  if (!std::isfinite(d) || std::fabs(d) > 9e15) return Fail(error, where + " is out of range");
  *out = std::llround(d);
  return true;
}

bool ReadParams(const json& v, const std::string& where, Params* out, std::string* error) {
  if (!v.is_object()) return Fail(error, where + " must be an object of numbers (got " + ShownJson(v) + ")");
  for (const auto& [k, x] : v.items()) {
    if (!x.is_number()) return Fail(error, where + "." + k + " must be a number (got " + ShownJson(x) + ")");
    (*out)[k] = x.get<double>();
  }
  return true;
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
bool ReadPairs(const Scenario& sc, const json& v, const std::string& where, std::vector<std::pair<int, int>>* out,
               std::string* error) {
  if (!v.is_array()) return Fail(error, where + " must be a list of \"A+B\" strings");
  for (const json& x : v) {
    if (!x.is_string()) return Fail(error, where + " must be a list of \"A+B\" strings (got " + ShownJson(x) + ")");
    const std::string s = x.get<std::string>();
    const size_t plus = s.find('+');
    const int a = plus == std::string::npos ? -1 : ClientIndex(sc, s.substr(0, plus));
    const int b = plus == std::string::npos ? -1 : ClientIndex(sc, s.substr(plus + 1));
    if (a < 0 || b < 0 || a == b)
      return Fail(error, where + ": '" + s + "' is not two of the scenario's clients (" + ClientList(sc) + ")");
    out->emplace_back(std::min(a, b), std::max(a, b));
  }
  return true;
}

bool ReadExpect(const Scenario& sc, const json& v, const Params& p, const std::string& where, Expectation* out,
                std::string* error) {
  if (!CheckKeys(v, {"overlap", "no_overlap", "damage", "stuck", "releases_failed", "orders"}, where, error))
    return false;
  Expectation e;
  for (const auto& [k, x] : v.items()) {
    const std::string w = where + "." + k;
    if (k == "overlap") {
      if (x.is_boolean()) {
        e.overlap = x.get<bool>();
      } else if (!ReadPairs(sc, x, w, &e.overlap_pairs, error)) {
        return Fail(error, w + " must be true, false or a list of \"A+B\" pairs");
      }
    } else if (k == "no_overlap") {
      if (!ReadPairs(sc, x, w, &e.no_overlap_pairs, error)) return false;
    } else if (k == "orders") {
      int64_t n = 0;
      if (!ReadInt(x, p, w, &n, error)) return false;
      e.orders = n;
    } else {
      if (!x.is_boolean()) return Fail(error, w + " must be true or false (got " + ShownJson(x) + ")");
      (k == "damage" ? e.damage : k == "stuck" ? e.stuck : e.releases_failed) = x.get<bool>();
    }
  }
  *out = e;
  return true;
}

// One timeline step -> a planned fault.
bool ReadStep(const Scenario& sc, const json& v, const Params& p, const std::string& where, FaultAction* out,
              std::string* error) {
  if (!CheckKeys(v,
                 {"do", "at_ms", "client", "node", "duration_ms", "delta_ms", "command", "occurrence", "on_send",
                  "why"},
                 where, error))
    return false;
  if (!v.contains("do") || !v["do"].is_string())
    return Fail(error, where + ".do must name a fault (see `locklab list`)");
  FaultAction a;
  if (!ParseFaultKind(v["do"].get<std::string>(), &a.kind))
    return Fail(error, where + ".do: unknown fault '" + v["do"].get<std::string>() + "' (see `locklab list`)");
  using K = FaultAction::Kind;
  const bool on_client = a.kind == K::kPauseClient || a.kind == K::kCrashClient || a.kind == K::kClientClockJump ||
                         a.kind == K::kPartition || a.kind == K::kDelayMessage;
  if (on_client) {
    if (!v.contains("client") || !v["client"].is_string())
      return Fail(error, where + ".client must name the client (" + ClientList(sc) + ")");
    a.target = ClientIndex(sc, v["client"].get<std::string>());
    if (a.target < 0)
      return Fail(error, where + ".client: no client '" + v["client"].get<std::string>() + "' (" + ClientList(sc) + ")");
  } else if (v.contains("client")) {
    return Fail(error, where + ": " + v["do"].get<std::string>() + " acts on a node: give \"node\", not \"client\"");
  }
  int64_t x = 0;
  for (const auto& [k, val] : v.items()) {
    const std::string w = where + "." + k;
    if (k == "at_ms" || k == "duration_ms" || k == "delta_ms") {
      double ms = 0;
      if (!ReadNum(val, p, w, &ms, error)) return false;
      const int64_t us = std::llround(ms * 1000);
      (k == "at_ms" ? a.at_us : k == "duration_ms" ? a.duration_us : a.delta_us) = us;
    } else if (k == "node" || k == "occurrence") {
      if (!ReadInt(val, p, w, &x, error)) return false;
      if (x < 0 || x > 1'000'000) return Fail(error, w + " is out of range");
      if (k == "occurrence") a.occurrence = static_cast<int>(x);
      else if (a.kind == K::kPartition) a.node = static_cast<int>(x);
      else a.target = static_cast<int>(x);
    } else if (k == "command" || k == "on_send") {
      if (!val.is_string()) return Fail(error, w + " must be a command name");
      (k == "command" ? a.command : a.on_send) = val.get<std::string>();
    }
  }
  *out = a;
  return true;
}

bool HasPair(const std::vector<std::pair<int, int>>& v, std::pair<int, int> p) {
  return std::find(v.begin(), v.end(), p) != v.end();
}

std::string Join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
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

bool LoadScenario(const std::string& path, Scenario* out, std::string* error) {
  std::ifstream in(path);
  if (!in) return Fail(error, path + ": cannot read it");
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::exception& e) {
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    return Fail(error, path + ": not valid JSON: " + what);
  }
  Scenario sc;
  sc.path = path;
  sc.doc = doc;
  auto fail = [&](const std::string& msg) { return Fail(error, path + ": " + msg); };
  std::string err;
  if (!CheckKeys(doc,
                 {"id", "title", "source", "story", "backends", "redis_note", "params", "run", "clients", "steps",
                  "liveness_bound_ms", "variants", "also"},
                 "the scenario", &err))
    return fail(err);
  for (const char* k : {"id", "title", "variants"})
    if (!doc.contains(k)) return fail(std::string("'") + k + "' is missing");
  if (!ReadString(doc["id"], "id", &sc.id, &err) || !ReadString(doc["title"], "title", &sc.title, &err)) return fail(err);
  if (sc.id.empty() || sc.id.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos)
    return fail("id '" + sc.id + "' must be lower-case letters, digits and '-'");
  if (doc.contains("source") && !ReadString(doc["source"], "source", &sc.source, &err)) return fail(err);
  if (doc.contains("story") && !ReadString(doc["story"], "story", &sc.story, &err)) return fail(err);
  if (doc.contains("redis_note") && !ReadString(doc["redis_note"], "redis_note", &sc.redis_note, &err)) return fail(err);
  sc.backends = {"sim"};
  if (doc.contains("backends")) {
    const json& b = doc["backends"];
    if (!b.is_array() || b.empty()) return fail("'backends' must be a list: [\"sim\"] or [\"sim\", \"redis\"]");
    sc.backends.clear();
    for (const json& x : b) {
      if (!x.is_string() || (x != "sim" && x != "redis")) return fail("'backends' may hold \"sim\" and \"redis\"");
      sc.backends.push_back(x.get<std::string>());
    }
  }
  if (doc.contains("params") && !ReadParams(doc["params"], "params", &sc.params, &err)) return fail(err);
  if (doc.contains("clients")) {
    const json& cl = doc["clients"];
    if (!cl.is_array() || cl.size() > kMaxScenarioClients)
      return fail("'clients' must be a list of at most " + std::to_string(kMaxScenarioClients) + " clients");
    for (size_t i = 0; i < cl.size(); ++i) {
      const std::string w = "clients[" + std::to_string(i) + "]";
      if (!CheckKeys(cl[i], {"name", "start_ms", "requests", "hold_ms", "acquire_timeout_ms", "why"}, w, &err))
        return fail(err);
      std::string name = "c" + std::to_string(i);
      if (cl[i].contains("name") && !ReadString(cl[i]["name"], w + ".name", &name, &err)) return fail(err);
      if (ClientIndex(sc, name) >= 0) return fail(w + ": client name '" + name + "' is used twice");
      sc.clients.push_back(name);
    }
  }
  if (doc.contains("steps") && (!doc["steps"].is_array() || doc["steps"].size() > kMaxScenarioSteps))
    return fail("'steps' must be a list of at most " + std::to_string(kMaxScenarioSteps) + " steps");
  if (!doc["variants"].is_array() || doc["variants"].empty()) return fail("'variants' must be a non-empty list");
  for (size_t i = 0; i < doc["variants"].size(); ++i) {
    const json& v = doc["variants"][i];
    const std::string w = "variants[" + std::to_string(i) + "]";
    if (!CheckKeys(v, {"name", "algorithm", "note", "params", "run", "steps", "expect"}, w, &err)) return fail(err);
    ScenarioVariant var;
    var.doc = v;
    if (!v.contains("name") || !ReadString(v["name"], w + ".name", &var.name, &err))
      return fail(w + ".name must be a string");
    if (!v.contains("algorithm") || !ReadString(v["algorithm"], w + ".algorithm", &var.algorithm, &err))
      return fail(w + ".algorithm must name an algorithm, e.g. \"token:release=del\"");
    if (v.contains("note") && !ReadString(v["note"], w + ".note", &var.note, &err)) return fail(err);
    if (!v.contains("expect")) return fail(w + ".expect is missing: say what this variant must show");
    if (sc.FindVariant(var.name) != nullptr) return fail(w + ": variant '" + var.name + "' is defined twice");
    sc.variants.push_back(var);
  }
  if (doc.contains("also")) {
    if (!doc["also"].is_array()) return fail("'also' must be a list");
    for (size_t i = 0; i < doc["also"].size(); ++i) {
      const json& v = doc["also"][i];
      const std::string w = "also[" + std::to_string(i) + "]";
      if (!CheckKeys(v, {"variant", "params", "expect", "why"}, w, &err)) return fail(err);
      Variation a;
      if (!v.contains("variant") || !ReadString(v["variant"], w + ".variant", &a.variant, &err) ||
          sc.FindVariant(a.variant) == nullptr)
        return fail(w + ".variant must name one of the scenario's variants");
      if (v.contains("params") && !ReadParams(v["params"], w + ".params", &a.params, &err)) return fail(err);
      if (!v.contains("expect")) return fail(w + ".expect is missing");
      a.expect = v["expect"];
      if (v.contains("why") && !ReadString(v["why"], w + ".why", &a.why, &err)) return fail(err);
      sc.also.push_back(a);
    }
  }
  // Compile everything once, so that a mistake shows up when the file is read.
  for (const std::string& backend : sc.backends) {
    for (const auto& var : sc.variants) {
      ScenarioRun run;
      if (!CompileVariant(sc, var.name, {}, backend, 1, nullptr, &run, &err))
        return fail("variant " + var.name + " (" + backend + "): " + err);
    }
    for (size_t i = 0; i < sc.also.size(); ++i) {
      ScenarioRun run;
      if (!CompileVariant(sc, sc.also[i].variant, sc.also[i].params, backend, 1, &sc.also[i].expect, &run, &err))
        return fail("also[" + std::to_string(i) + "] (" + backend + "): " + err);
    }
  }
  *out = std::move(sc);
  return true;
}

bool LoadScenarioDir(const std::string& dir, std::vector<Scenario>* out, std::string* error) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return Fail(error, "scenario directory " + dir + " does not exist (set --scenario-dir or LOCKLAB_SCENARIOS)");
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".json") continue;
    if (paths.size() >= kMaxScenarioFiles)
      return Fail(error, dir + ": more than " + std::to_string(kMaxScenarioFiles) + " scenario files");
    paths.push_back(entry.path().string());
  }
  if (ec) return Fail(error, dir + ": " + ec.message());
  std::vector<Scenario> all;
  for (const auto& p : paths) {
    Scenario sc;
    if (!LoadScenario(p, &sc, error)) return false;
    all.push_back(std::move(sc));
  }
  std::sort(all.begin(), all.end(), [](const Scenario& a, const Scenario& b) { return a.id < b.id; });
  for (size_t i = 1; i < all.size(); ++i)
    if (all[i].id == all[i - 1].id)
      return Fail(error, "scenario id '" + all[i].id + "' is used by " + all[i - 1].path + " and " + all[i].path);
  *out = std::move(all);
  return true;
}

std::string DefaultScenarioDir() {
  if (const char* env = std::getenv("LOCKLAB_SCENARIOS"); env != nullptr && *env != '\0') return env;
  return std::string(SourceDir()) + "/harness/scenarios";
}

bool FindScenario(const std::string& name_or_path, const std::string& dir, Scenario* out, std::string* error) {
  if (name_or_path.size() > 5 && name_or_path.compare(name_or_path.size() - 5, 5, ".json") == 0)
    return LoadScenario(name_or_path, out, error);
  std::vector<Scenario> all;
  if (!LoadScenarioDir(dir, &all, error)) return false;
  std::vector<std::string> ids;
  for (auto& sc : all) {
    if (sc.id == name_or_path) {
      *out = std::move(sc);
      return true;
    }
    ids.push_back(sc.id);
  }
  return Fail(error, "unknown scenario '" + name_or_path + "' (" + Join(ids, ", ") + "; or a path to a .json file)");
}

bool CompileVariant(const Scenario& sc, const std::string& variant, const Params& overrides,
                    const std::string& backend, uint64_t seed, const json* expect_doc, ScenarioRun* out,
                    std::string* error) {
  const ScenarioVariant* var = sc.FindVariant(variant);
  if (var == nullptr) {
    std::vector<std::string> names;
    for (const auto& v : sc.variants) names.push_back(v.name);
    return Fail(error, "scenario " + sc.id + " has no variant '" + variant + "' (" + Join(names, ", ") + ")");
  }
  if (!sc.runs_on(backend))
    return Fail(error, "scenario " + sc.id + " runs on " + Join(sc.backends, " and ") + " only" +
                           (sc.redis_note.empty() ? "" : " (" + sc.redis_note + ")"));
  ScenarioRun run;
  run.scenario = sc.id;
  run.variant = variant;
  run.params = sc.params;
  run.client_names = sc.clients;
  if (var->doc.contains("params") && !ReadParams(var->doc["params"], "params", &run.params, error)) return false;
  for (const auto& [k, v] : overrides) {
    if (run.params.count(k) == 0) {
      std::vector<std::string> names;
      for (const auto& [n, x] : run.params) names.push_back(n);
      return Fail(error, "scenario " + sc.id + " has no parameter '" + k + "' (its parameters: " +
                             (names.empty() ? "none" : Join(names, ", ")) + ")");
    }
    run.params[k] = v;
  }
  const Params& p = run.params;

  RunSpec& s = run.spec;
  if (sc.doc.contains("run") && !FromJson(sc.doc["run"], &s, error)) return Fail(error, "run: " + *error);
  if (var->doc.contains("run") && !FromJson(var->doc["run"], &s, error)) return Fail(error, "variant run: " + *error);
  AlgorithmChoice choice;
  if (!ParseAlgorithmChoice(var->algorithm, &choice, error)) return false;
  s.algorithm = choice.name;
  s.algorithm_options = choice.options;
  s.backend = backend;
  s.seed = seed;
  // A parameter named like a numeric run field (ttl_ms, stock, clients, ...) sets that field.
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
            *ptr = static_cast<T>(std::llround(v));
            return true;
          } else {
            return false;
          }
        },
        field->get(s));
    if (!ok) return Fail(error, "parameter '" + k + "' names the run field " + k + ", which does not take this number");
  }

  if (!sc.clients.empty()) {
    const json& cl = sc.doc["clients"];
    s.clients = static_cast<int>(cl.size());
    s.client_plans.clear();
    for (size_t i = 0; i < cl.size(); ++i) {
      ClientPlan plan;
      const std::string w = "clients[" + std::to_string(i) + "]";
      if (cl[i].contains("start_ms") && !ReadInt(cl[i]["start_ms"], p, w + ".start_ms", &plan.start_ms, error))
        return false;
      if (cl[i].contains("requests") && !ReadInt(cl[i]["requests"], p, w + ".requests", &plan.requests, error))
        return false;
      if (cl[i].contains("hold_ms") && !ReadInt(cl[i]["hold_ms"], p, w + ".hold_ms", &plan.hold_ms, error))
        return false;
      if (cl[i].contains("acquire_timeout_ms") &&
          !ReadInt(cl[i]["acquire_timeout_ms"], p, w + ".acquire_timeout_ms", &plan.acquire_timeout_ms, error))
        return false;
      s.client_plans.push_back(plan);
    }
  }
  for (const json* steps : {sc.doc.contains("steps") ? &sc.doc["steps"] : nullptr,
                            var->doc.contains("steps") ? &var->doc["steps"] : nullptr}) {
    if (steps == nullptr) continue;
    if (!steps->is_array()) return Fail(error, "steps must be a list");
    for (size_t i = 0; i < steps->size(); ++i) {
      FaultAction a;
      if (!ReadStep(sc, (*steps)[i], p, "steps[" + std::to_string(i) + "]", &a, error)) return false;
      s.faults.plan.push_back(a);
    }
  }
  if (sc.doc.contains("liveness_bound_ms") &&
      !ReadNum(sc.doc["liveness_bound_ms"], p, "liveness_bound_ms", &run.liveness_bound_ms, error))
    return false;
  const json& expect = expect_doc != nullptr ? *expect_doc : var->doc["expect"];
  if (!ReadExpect(sc, expect, p, "expect", &run.expect, error)) return false;
  if (run.expect.stuck.has_value() && run.liveness_bound_ms <= 0)
    return Fail(error, "expect.stuck needs the scenario's liveness_bound_ms");
  if (!ResolveSpec(&s, error)) return false;

  // The command that reruns exactly this: parameters that differ from the file's defaults.
  std::string replay = "locklab scenario " + ShellQuote(sc.path.empty() || sc.path.find("/harness/scenarios/") !=
                                                                                 std::string::npos
                                                            ? sc.id
                                                            : sc.path);
  replay += " --variant " + ShellQuote(variant) + " --backend " + backend + " --seed " + std::to_string(seed);
  for (const auto& [k, v] : overrides) replay += " --param " + ShellQuote(k + "=" + DoubleText(v));
  run.replay = replay;
  *out = std::move(run);
  return true;
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
    const int64_t damage = res.lost_updates + res.oversold + res.stale_writes_accepted;
    std::string o = damage > 0 ? "damage (lost " + std::to_string(res.lost_updates) + ", oversold " +
                                     std::to_string(res.oversold) + ", stale " +
                                     std::to_string(res.stale_writes_accepted) + ")"
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
