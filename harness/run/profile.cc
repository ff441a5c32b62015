#include "harness/run/profile.h"
#include "harness/run/host_info.h"
#include "harness/run/read_file.h"
#include "harness/run/write_file.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <thread>

#include "harness/run/build_info.h"

namespace locklab {
namespace {

using ojson = nlohmann::ordered_json;

// To `per` parts of a unit (1000: 0.001); dividing gives the double nearest the decimal.
double Round(double x, double per) { return std::round(x * per) / per; }

ojson DistJson(const sim::CostDist& d) {
  ojson points = ojson::array();
  for (const auto& [p, us] : d.points) points.push_back(ojson::array({Round(p, 1e4), Round(us, 1e3)}));
  ojson j;
  j["mean_us"] = Round(d.MeanUs(), 1e3);
  j["points"] = std::move(points);
  return j;
}

// dump(2) puts each number of a [p, us] pair on a line of its own; one pair a line reads better.
std::string CompactPairs(const std::string& text) {
  static const std::regex pair(R"(\[\s*(-?[0-9.eE+-]+),\s*(-?[0-9.eE+-]+)\s*\])");
  return std::regex_replace(text, pair, "[$1, $2]");
}

const char* PlacementName(sim::ClientCosts::Placement p) {
  return p == sim::ClientCosts::Placement::kOneProcess ? "one-process" : "process-per-client";
}

std::string FirstLineOf(const std::string& path, const std::string& prefix) {
  std::ifstream f(path);
  for (std::string line; std::getline(f, line);)
    if (line.rfind(prefix, 0) == 0) return line;
  return "";
}

// --- Loading: every check names the key it is about. ---

Status Bad(const std::string& key, const std::string& what) { return Status::Invalid(key + ": " + what); }

Status OnlyKeys(const nlohmann::json& j, const std::string& where, const std::set<std::string>& allowed) {
  if (!j.is_object()) return Bad(where.empty() ? "profile" : where, "must be an object");
  for (const auto& [key, value] : j.items())
    if (allowed.count(key) == 0) return Bad(where.empty() ? key : where + "." + key, "unknown key");
  return Status::Ok();
}

Result<double> NonNegative(const nlohmann::json& v, const std::string& key) {
  if (!v.is_number()) return Bad(key, "must be a number");
  const double x = v.get<double>();
  if (!std::isfinite(x)) return Bad(key, "must be finite");
  if (x < 0) return Bad(key, "must not be negative");
  return x;
}

// A number from lo to hi, bounds included; `range` says them in the error ("from 1 to 1000000 (µs)").
Result<double> NumberIn(const nlohmann::json& v, const std::string& key, double lo, double hi, const char* range) {
  if (!v.is_number()) return Bad(key, "must be a number");
  const double x = v.get<double>();
  if (!(x >= lo && x <= hi)) return Bad(key, std::string("must be ") + range);
  return x;
}

Status ReadPoint(const nlohmann::json& pt, const std::string& key, std::pair<double, double>* out) {
  if (!pt.is_array() || pt.size() != 2) return Bad(key, "must be a pair [p, us]");
  Result<double> p = NonNegative(pt[0], key + ".p");
  if (!p.ok()) return p.status();
  Result<double> us = NonNegative(pt[1], key + ".us");
  if (!us.ok()) return us.status();
  if (*p > 1) return Bad(key, "p must be at most 1");
  *out = {*p, *us};
  return Status::Ok();
}

Result<sim::CostDist> ReadDist(const nlohmann::json& parent, const std::string& name, const std::string& key) {
  if (!parent.contains(name)) return Bad(key, "missing");
  const nlohmann::json& j = parent.at(name);
  if (Status s = OnlyKeys(j, key, {"mean_us", "points"}); !s.ok()) return s;
  if (j.contains("mean_us"))
    if (Result<double> m = NonNegative(j.at("mean_us"), key + ".mean_us"); !m.ok()) return m.status();
  if (!j.contains("points")) return Bad(key + ".points", "missing");
  const nlohmann::json& pts = j.at("points");
  if (!pts.is_array() || pts.size() < 2) return Bad(key + ".points", "must be an array of at least 2 [p, us] pairs");
  sim::CostDist d;
  for (size_t i = 0; i < pts.size(); ++i) {
    const std::string at = key + ".points[" + std::to_string(i) + "]";
    std::pair<double, double> pt;
    if (Status s = ReadPoint(pts[i], at, &pt); !s.ok()) return s;
    if (i == 0 && pt.first != 0.0) return Bad(at, "the first p must be 0");
    if (i > 0 && pt.first <= d.points.back().first) return Bad(at, "p must rise (" + std::to_string(pt.first) +
                                                                     " after " + std::to_string(d.points.back().first) + ")");
    if (i > 0 && pt.second < d.points.back().second) return Bad(at, "us must not fall (an inverse CDF)");
    d.points.push_back(pt);
  }
  if (d.points.back().first != 1.0) return Bad(key + ".points", "the last p must be 1");
  return d;
}

Status ReadContext(const nlohmann::json& j, ProfileContext* c) {
  if (Status s = OnlyKeys(j, "context", {"host", "cpu_model", "cpu_count", "redis_server_version", "date_utc",
                                         "locklab_version", "locklab_sha", "load_average_1m", "rounds", "quick",
                                         "cpu_placement"});
      !s.ok())
    return s;
  for (const char* k :
       {"host", "cpu_model", "redis_server_version", "date_utc", "locklab_version", "locklab_sha", "cpu_placement"})
    if (j.contains(k) && !j.at(k).is_string()) return Bad(std::string("context.") + k, "must be a string");
  for (const char* k : {"cpu_count", "load_average_1m", "rounds"})
    if (j.contains(k))
      if (Result<double> x = NonNegative(j.at(k), std::string("context.") + k); !x.ok()) return x.status();
  if (j.contains("quick") && !j.at("quick").is_boolean()) return Bad("context.quick", "must be true or false");
  c->host = j.value("host", "");
  c->cpu_model = j.value("cpu_model", "");
  c->cpu_count = j.value("cpu_count", 0);
  c->redis_server_version = j.value("redis_server_version", "");
  c->cpu_placement = j.value("cpu_placement", "");
  c->date_utc = j.value("date_utc", "");
  c->locklab_version = j.value("locklab_version", "");
  c->locklab_sha = j.value("locklab_sha", "");
  c->load_average_1m = j.value("load_average_1m", 0.0);
  c->rounds = j.value("rounds", 0);
  c->quick = j.value("quick", false);
  return Status::Ok();
}

// The distributions of a node, and of a client (required, then optional: absent in profiles
// made before their keys), by key, in the order profiles write them. `N` / `C` may be const.
template <class N>
auto NodeDists(N& n) {
  using D = decltype(&n.command_us);
  return std::array<std::pair<const char*, D>, 6>{{{"command_us", &n.command_us},
                                                   {"wake_us", &n.wake_us},
                                                   {"script_us", &n.script_us},
                                                   {"script_call_us", &n.script_call_us},
                                                   {"publish_per_receiver_us", &n.publish_per_receiver_us},
                                                   {"blpop_serve_us", &n.blpop_serve_us}}};
}
template <class C>
auto ClientDists(C& c) {
  using D = decltype(&c.send_us);
  return std::array<std::pair<const char*, D>, 4>{
      {{"send_us", &c.send_us}, {"reply_us", &c.reply_us}, {"timer_us", &c.timer_us}, {"hold_us", &c.hold_us}}};
}
template <class C>
auto OptionalClientDists(C& c) {
  using D = decltype(&c.message_us);
  return std::array<std::pair<const char*, D>, 7>{{{"message_us", &c.message_us},
                                                   {"wake_cpu_us", &c.wake_cpu_us},
                                                   {"held_callback_us", &c.held_callback_us},
                                                   {"held_write_us", &c.held_write_us},
                                                   {"held_read_us", &c.held_read_us},
                                                   {"cold_write_us", &c.cold_write_us},
                                                   {"cold_read_us", &c.cold_read_us}}};
}

Status ReadNode(const nlohmann::json& j, sim::NodeCosts* n) {
  std::set<std::string> names;
  for (const auto& [name, dist] : NodeDists(*n)) names.insert(name);
  if (Status s = OnlyKeys(j, "node", names); !s.ok()) return s;
  for (const auto& [name, dist] : NodeDists(*n)) {
    Result<sim::CostDist> d = ReadDist(j, name, std::string("node.") + name);
    if (!d.ok()) return d.status();
    *dist = std::move(*d);
  }
  return Status::Ok();
}

// client.wake_after_idle (optional): rows of {"idle_us": X, "late_us": DIST}, idle_us rising.
Status ReadWakeRows(const nlohmann::json& j, std::vector<sim::WakeRow>* rows) {
  const std::string key = "client.wake_after_idle";
  if (!j.is_array()) return Bad(key, "must be an array of {\"idle_us\", \"late_us\"} rows");
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string at = key + "[" + std::to_string(i) + "]";
    if (Status s = OnlyKeys(j[i], at, {"idle_us", "late_us"}); !s.ok()) return s;
    if (!j[i].contains("idle_us")) return Bad(at + ".idle_us", "missing");
    Result<double> idle = NonNegative(j[i].at("idle_us"), at + ".idle_us");
    if (!idle.ok()) return idle.status();
    if (*idle <= 0 || (!rows->empty() && *idle <= rows->back().idle_us))
      return Bad(at + ".idle_us", "must be above 0 and rise from row to row");
    Result<sim::CostDist> late = ReadDist(j[i], "late_us", at + ".late_us");
    if (!late.ok()) return late.status();
    rows->push_back(sim::WakeRow{*idle, std::move(*late)});
  }
  return Status::Ok();
}

Status ReadClient(const nlohmann::json& j, sim::ClientCosts* c) {
  if (Status s = OnlyKeys(j, "client",
                          {"placement", "send_us", "reply_us", "timer_us", "hold_us", "message_us", "wake_cpu_us",
                           "wake_after_idle", "held_callback_us", "held_write_us", "held_read_us", "cold_after_ms",
                           "cold_write_us", "cold_read_us"});
      !s.ok())
    return s;
  if (!j.contains("placement")) return Bad("client.placement", "missing");
  const nlohmann::json& p = j.at("placement");
  if (p == "one-process") {
    c->placement = sim::ClientCosts::Placement::kOneProcess;
  } else if (p == "process-per-client") {
    c->placement = sim::ClientCosts::Placement::kProcessPerClient;
  } else {
    return Bad("client.placement", "must be \"one-process\" or \"process-per-client\"");
  }
  for (const auto& [name, dist] : ClientDists(*c)) {
    Result<sim::CostDist> d = ReadDist(j, name, std::string("client.") + name);
    if (!d.ok()) return d.status();
    *dist = std::move(*d);
  }
  for (const auto& [name, dist] : OptionalClientDists(*c)) {
    if (!j.contains(name)) continue;  // optional: profiles made before the key
    Result<sim::CostDist> d = ReadDist(j, name, std::string("client.") + name);
    if (!d.ok()) return d.status();
    *dist = std::move(*d);
  }
  if (j.contains("cold_after_ms")) {
    Result<double> ms = NumberIn(j.at("cold_after_ms"), "client.cold_after_ms", 0.001, 1e6, "from 0.001 to 1000000 (ms)");
    if (!ms.ok()) return ms.status();
    c->cold_after_ms = *ms;
  }
  if ((c->cold_after_ms > 0) != (j.contains("cold_write_us") || j.contains("cold_read_us")))
    return Bad("client.cold_after_ms", "goes with cold_write_us or cold_read_us (or both), and they with it");
  if (j.contains("wake_after_idle")) return ReadWakeRows(j.at("wake_after_idle"), &c->wake_after_idle);
  return Status::Ok();
}

// An optional key of the loop with two allowed words: *second is whether it says `second`
// (absent: the first, the default).
Status ReadChoice(const nlohmann::json& j, const std::string& key, const char* first, const char* second,
                  bool* is_second) {
  if (!j.contains(key)) return Status::Ok();
  const nlohmann::json& w = j.at(key);
  if (w != first && w != second)
    return Bad("loop." + key, std::string("must be \"") + first + "\" or \"" + second + "\"");
  *is_second = w == second;
  return Status::Ok();
}

// loop (optional): {"model": "queue"} or {"model": "passes", "wire_us": DIST, "reply_write_us": DIST,
// "held_request": "path" (the default) or "loop", "client": "events" (the default) or "passes",
// "client_wake": "timer" (the default) or "socket" (with "client": "passes" only)}.
Status ReadLoop(const nlohmann::json& j, sim::LoopCosts* loop) {
  if (Status s = OnlyKeys(j, "loop", {"model", "wire_us", "reply_write_us", "held_request", "client", "client_wake"});
      !s.ok())
    return s;
  if (!j.contains("model")) return Bad("loop.model", "missing");
  if (j.at("model") == "queue") {
    if (j.contains("wire_us") || j.contains("reply_write_us") || j.contains("held_request") || j.contains("client") ||
        j.contains("client_wake"))
      return Bad("loop", "wire_us, reply_write_us, held_request, client and client_wake belong to the \"passes\" model");
    return Status::Ok();
  }
  if (Status s = ReadChoice(j, "held_request", "path", "loop", &loop->held_request_waits); !s.ok()) return s;
  if (Status s = ReadChoice(j, "client", "events", "passes", &loop->client_passes); !s.ok()) return s;
  if (Status s = ReadChoice(j, "client_wake", "timer", "socket", &loop->socket_wakes); !s.ok()) return s;
  if (loop->socket_wakes && !loop->client_passes)
    return Bad("loop.client_wake", "\"socket\" needs the client loop in passes (\"client\": \"passes\")");
  if (j.at("model") != "passes") return Bad("loop.model", "must be \"queue\" or \"passes\"");
  loop->passes = true;
  for (auto [name, dist] : {std::pair{"wire_us", &loop->wire_us}, std::pair{"reply_write_us", &loop->reply_write_us}}) {
    Result<sim::CostDist> d = ReadDist(j, name, std::string("loop.") + name);
    if (!d.ok()) return d.status();
    *dist = std::move(*d);
  }
  return Status::Ok();
}

// Type-7 quantile of sorted values.
double Quantile(const std::vector<double>& sorted, double p) {
  const double h = (static_cast<double>(sorted.size()) - 1) * p;
  const size_t lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

// The figures of a profile (node, client, loop, one_way_us, replica_one_way_us) into *j.
void BodyJson(const sim::CostModel& model, ojson* out) {
  ojson& j = *out;
  ojson& n = j["node"];
  for (const auto& [name, dist] : NodeDists(model.node)) n[name] = DistJson(*dist);
  ojson& cl = j["client"];
  cl["placement"] = PlacementName(model.client.placement);
  for (const auto& [name, dist] : ClientDists(model.client)) cl[name] = DistJson(*dist);
  for (const auto& [name, dist] : OptionalClientDists(model.client))
    if (!dist->points.empty()) cl[name] = DistJson(*dist);
  if (model.client.cold_after_ms > 0) cl["cold_after_ms"] = Round(model.client.cold_after_ms, 1e3);
  if (!model.client.wake_after_idle.empty()) {
    ojson rows = ojson::array();
    for (const sim::WakeRow& r : model.client.wake_after_idle)
      rows.push_back(ojson{{"idle_us", Round(r.idle_us, 1e3)}, {"late_us", DistJson(r.late_us)}});
    cl["wake_after_idle"] = std::move(rows);
  }
  if (model.loop.passes) {
    ojson& l = j["loop"];
    l["model"] = "passes";
    l["wire_us"] = DistJson(model.loop.wire_us);
    l["reply_write_us"] = DistJson(model.loop.reply_write_us);
    if (model.loop.held_request_waits) l["held_request"] = "loop";
    if (model.loop.client_passes) l["client"] = "passes";
    if (model.loop.socket_wakes) l["client_wake"] = "socket";
  }
  j["one_way_us"] = DistJson(model.one_way_us);
  if (model.replica_one_way_us > 0) j["replica_one_way_us"] = model.replica_one_way_us;
}

// The figures (node, client, loop, one_way_us, replica_one_way_us) of a profile or of its
// fewer_connections block.
Status ReadBody(const nlohmann::json& j, sim::CostModel* m) {
  if (!j.contains("node")) return Bad("node", "missing");
  if (Status s = ReadNode(j.at("node"), &m->node); !s.ok()) return s;
  if (!j.contains("client")) return Bad("client", "missing");
  if (Status s = ReadClient(j.at("client"), &m->client); !s.ok()) return s;
  if (j.contains("loop"))
    if (Status s = ReadLoop(j.at("loop"), &m->loop); !s.ok()) return s;
  const sim::ClientCosts& c = m->client;
  const bool held_split = !c.held_callback_us.points.empty() || !c.held_write_us.points.empty() || !c.held_read_us.points.empty();
  if ((c.cold_after_ms > 0 || held_split) && !m->loop.client_passes)
    return Bad("client", "held_callback_us, held_write_us, held_read_us and cold_after_ms need the client loop in passes "
                         "(loop.client: \"passes\")");
  if (!c.held_write_us.points.empty() && !m->loop.held_request_waits)
    return Bad("client.held_write_us", "needs held requests written by the loop (loop.held_request: \"loop\")");
  Result<sim::CostDist> one_way = ReadDist(j, "one_way_us", "one_way_us");
  if (!one_way.ok()) return one_way.status();
  m->one_way_us = std::move(*one_way);
  if (j.contains("replica_one_way_us")) {
    Result<double> us = NumberIn(j.at("replica_one_way_us"), "replica_one_way_us", 1, 1e6, "from 1 to 1000000 (µs)");
    if (!us.ok()) return us.status();
    m->replica_one_way_us = *us;
  }
  return Status::Ok();
}

// "machine": {"stalls_per_s": rate per CPU, from 0 to 100000, "stall_us": their lengths}.
Status ReadMachine(const nlohmann::json& j, sim::StallCosts* m) {
  if (Status s = OnlyKeys(j, "machine", {"stalls_per_s", "stall_us"}); !s.ok()) return s;
  if (!j.contains("stalls_per_s")) return Bad("machine.stalls_per_s", "missing");
  Result<double> per_s = NumberIn(j.at("stalls_per_s"), "machine.stalls_per_s", 0, 1e5, "from 0 to 100000 (per second)");
  if (!per_s.ok()) return per_s.status();
  Result<sim::CostDist> d = ReadDist(j, "stall_us", "machine.stall_us");
  if (!d.ok()) return d.status();
  m->per_s = *per_s;
  m->length_us = std::move(*d);
  return Status::Ok();
}

// "connections": an integer from 1 to 1,000,000.
Result<int> ReadConnections(const nlohmann::json& j, const std::string& key) {
  if (!j.is_number_integer() || j.get<int64_t>() < 1 || j.get<int64_t>() > 1'000'000)
    return Bad(key, "must be a whole number from 1 to 1000000");
  return static_cast<int>(j.get<int64_t>());
}

// fewer_connections: {"connections": N, and the figures as at the top}, N below the top's.
Status ReadFewer(const nlohmann::json& j, const sim::CostModel& top, sim::CostModel* fewer) {
  const std::string key = "fewer_connections";
  if (Status s = OnlyKeys(j, key, {"connections", "node", "client", "loop", "one_way_us", "replica_one_way_us"}); !s.ok())
    return s;
  if (top.connections == 0) return Bad(key, "needs the profile's own \"connections\"");
  if (!j.contains("connections")) return Bad(key + ".connections", "missing");
  Result<int> n = ReadConnections(j.at("connections"), key + ".connections");
  if (!n.ok()) return n.status();
  if (*n >= top.connections) return Bad(key + ".connections", "must be below the profile's " + std::to_string(top.connections));
  fewer->connections = *n;
  fewer->name = FewerConnectionsName(top.name, *n);
  if (Status s = ReadBody(j, fewer); !s.ok()) return s.Prefixed(key);
  return Status::Ok();
}

// The model a choice names, loaded once per process and kept (addresses stay valid).
Result<const sim::CostModel*> Chosen(const std::string& profile, int clients) {
  static const sim::CostModel legacy = sim::LegacyCostModel();
  if (profile == kLegacyProfileChoice) return &legacy;
  const std::string path = profile == kDefaultProfileChoice ? CommittedProfilePath() : profile;
  static std::mutex mu;
  static std::map<std::string, sim::CostModel> cache;  // by path; a handful of profiles per process
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(path); it != cache.end()) return &ForClients(it->second, clients);
  Result<sim::CostModel> m = LoadProfile(path);
  if (!m.ok()) {  // LoadProfile's message names the path (and the key): one line, the flag first
    const std::string flag = profile == kDefaultProfileChoice ? "--profile default: " : "--profile: ";
    return Status::Invalid(flag + m.status().message());
  }
  const sim::CostModel& kept = cache.emplace(path, std::move(m).value()).first->second;
  return &ForClients(kept, clients);
}

}  // namespace

ProfileContext LocalProfileContext() {
  ProfileContext c;
  c.host = HostName();
  const std::string model = FirstLineOf("/proc/cpuinfo", "model name");
  if (const size_t colon = model.find(':'); colon != std::string::npos)
    c.cpu_model = model.substr(model.find_first_not_of(" \t", colon + 1));
  c.cpu_count = static_cast<int>(std::thread::hardware_concurrency());
  c.date_utc = UtcNowText();
  c.locklab_version = ToolVersion();
  c.locklab_sha = GitSha();
  c.load_average_1m = std::strtod(LoadAverageText().c_str(), nullptr);  // its first figure, 0 if unreadable
  return c;
}

nlohmann::ordered_json ProfileJson(const sim::CostModel& model, const ProfileContext& context) {
  ojson j;
  j["schema"] = kProfileSchema;
  j["name"] = model.name;
  ojson& c = j["context"];
  c["host"] = context.host;
  c["cpu_model"] = context.cpu_model;
  c["cpu_count"] = context.cpu_count;
  c["redis_server_version"] = context.redis_server_version;
  c["date_utc"] = context.date_utc;
  c["locklab_version"] = context.locklab_version;
  c["locklab_sha"] = context.locklab_sha;
  c["load_average_1m"] = Round(context.load_average_1m, 100);
  c["rounds"] = context.rounds;
  c["quick"] = context.quick;
  if (!context.cpu_placement.empty()) c["cpu_placement"] = context.cpu_placement;
  if (model.connections > 0) j["connections"] = model.connections;
  BodyJson(model, &j);
  if (model.machine.per_s > 0)
    j["machine"] = ojson{{"stalls_per_s", Round(model.machine.per_s, 1e3)}, {"stall_us", DistJson(model.machine.length_us)}};
  if (model.fewer != nullptr) {
    ojson& f = j["fewer_connections"];
    f["connections"] = model.fewer->connections;
    BodyJson(*model.fewer, &f);
  }
  j["measurements"] = context.measurements.is_object() ? context.measurements : ojson::object();
  return j;
}

Status WriteProfile(const std::string& path, const sim::CostModel& model, const ProfileContext& context) {
  return WriteFileAtomic(path, CompactPairs(ProfileJson(model, context).dump(2)) + "\n");
}

Result<sim::CostModel> ProfileFromJson(const nlohmann::json& j, ProfileContext* context_out) {
  if (Status s = OnlyKeys(j, "", {"schema", "name", "context", "connections", "node", "client", "loop", "one_way_us",
                                 "replica_one_way_us", "machine", "fewer_connections", "measurements"});
      !s.ok())
    return s;
  if (!j.contains("schema")) return Bad("schema", "missing");
  if (j.at("schema") != kProfileSchema)
    return Bad("schema", "must be \"" + std::string(kProfileSchema) + "\" (got " + j.at("schema").dump() + ")");
  sim::CostModel m;
  if (!j.contains("name") || !j.at("name").is_string()) return Bad("name", "missing or not a string");
  m.name = j.at("name").get<std::string>();
  ProfileContext context;
  if (j.contains("context"))
    if (Status s = ReadContext(j.at("context"), &context); !s.ok()) return s;
  if (j.contains("measurements") && !j.at("measurements").is_object()) return Bad("measurements", "must be an object");
  if (j.contains("connections")) {
    Result<int> n = ReadConnections(j.at("connections"), "connections");
    if (!n.ok()) return n.status();
    m.connections = *n;
  }
  if (Status s = ReadBody(j, &m); !s.ok()) return s;
  if (j.contains("machine"))
    if (Status s = ReadMachine(j.at("machine"), &m.machine); !s.ok()) return s;
  if (j.contains("fewer_connections")) {
    auto fewer = std::make_shared<sim::CostModel>();
    if (Status s = ReadFewer(j.at("fewer_connections"), m, fewer.get()); !s.ok()) return s;
    fewer->machine = m.machine;  // the machine's, whatever the connections
    m.fewer = std::move(fewer);
  }
  if (context_out != nullptr) {
    *context_out = std::move(context);
    if (j.contains("measurements")) context_out->measurements = j.at("measurements");
  }
  return m;
}

std::string FewerConnectionsName(const std::string& name, int connections) {
  return name + "@" + std::to_string(connections);
}

const sim::CostModel& ForClients(const sim::CostModel& model, int clients) {
  if (model.fewer == nullptr || clients <= 0) return model;
  // Nearest on a log scale: below the geometric mean of the two connection counts.
  const int64_t c = clients;
  return c * c < static_cast<int64_t>(model.fewer->connections) * model.connections ? *model.fewer : model;
}

Result<sim::CostModel> LoadProfile(const std::string& path, ProfileContext* context) {
  Result<std::string> text = ReadFileText(path);  // "PATH: no such file", "PATH: a directory, not a file", ...
  if (!text.ok()) return text.status();
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::Invalid(path + ": not JSON");
  Result<sim::CostModel> m = ProfileFromJson(j, context);
  if (!m.ok()) return m.status().Prefixed(path);
  return m;
}

std::string CommittedProfilePath() { return std::string(SourceDir()) + "/harness/profiles/default.json"; }

Result<sim::CostModel> ChooseProfile(const std::string& profile, int clients) {
  Result<const sim::CostModel*> m = Chosen(profile, clients);
  if (!m.ok()) return m.status();
  return **m;
}

Result<std::string> ChosenProfileName(const std::string& profile, int clients) {
  Result<const sim::CostModel*> m = Chosen(profile, clients);
  if (!m.ok()) return m.status();
  return (*m)->name;
}

SampleSummary DistFromSamples(std::vector<double> samples_us) {
  SampleSummary s;
  s.samples = samples_us.size();
  if (samples_us.empty()) return s;
  for (double& x : samples_us) {
    if (!(x >= 0)) {  // negative (or NaN): a difference of two noisy timings
      x = 0;
      ++s.clamped;
    }
  }
  std::sort(samples_us.begin(), samples_us.end());
  s.trimmed = samples_us.size() / 1000;
  samples_us.resize(samples_us.size() - s.trimmed);
  const int intervals = samples_us.size() >= 100 ? 20 : 10;
  for (int i = 0; i <= intervals; ++i) {
    const double p = static_cast<double>(i) / intervals;
    s.dist.points.emplace_back(p, Quantile(samples_us, p));
  }
  return s;
}

}  // namespace locklab
