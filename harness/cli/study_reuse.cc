// `locklab study --redis-from FILE`: the real-Redis cells of an earlier study, reused (study.h).
#include <algorithm>
#include <map>
#include <utility>

#include "harness/cli/study.h"
#include "harness/report/interval_json.h"
#include "harness/run/read_file.h"

namespace locklab {
namespace {

using json = nlohmann::json;

// One recorded cell into `c`, whose seed-1 replay command must be the recorded one (the same spec).
Status Fill(const json& r, const std::string& what, StudyCell* c) {
  if (r.at("replay").get<std::string>() != c->replay)
    return Status::Invalid(what + " ran another configuration: recorded '" + r.at("replay").get<std::string>() +
                           "', this study '" + c->replay + "'");
  c->runs = r.at("runs").get<int>();
  c->completed = r.at("completed").get<int>();
  c->violations_per_acq = IntervalFromJson(r.at("violations_per_acquisition"));
  c->damage_per_acq = IntervalFromJson(r.at("damage_per_acquisition"));
  c->acquisitions = IntervalFromJson(r.at("acquisitions"));
  c->p99_acquire_ms = IntervalFromJson(r.at("p99_acquire_ms"));
  c->acquisitions_total = r.at("acquisitions_total").get<int64_t>();
  c->violations_total = r.at("violations_total").get<int64_t>();
  c->damage_total = r.at("damage_total").get<int64_t>();
  c->first_error = r.value("error", "");
  return Status::Ok();
}

}  // namespace

Status ReuseRedisCells(const StudyOptions& o, StudyResult* out) {
  const std::string what = "--redis-from " + o.redis_from;
  Result<std::string> text = ReadFileText(o.redis_from);
  if (!text.ok()) return Status::Invalid("--redis-from " + text.status().message());
  const json doc = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || doc.value("schema", "") != kStudySchema)
    return Status::Invalid(what + ": not a " + std::string(kStudySchema) + " file");
  try {
    const json& ctx = doc.at("context");
    if (ctx.contains("redis_machine"))  // the machine around the recorded real block, carried with it
      out->redis_machine = nlohmann::ordered_json::parse(ctx.at("redis_machine").dump());
    if (ctx.at("seeds").at("redis").get<int>() != o.redis_seeds)
      return Status::Invalid(what + ": it has " + std::to_string(ctx.at("seeds").at("redis").get<int>()) +
                             " real seeds per cell; give --redis-seeds that many");
    std::map<std::pair<std::string, std::string>, const json*> recorded;  // (preset, algorithm)
    for (const json& c : doc.at("cells"))
      if (c.at("backend") == "redis") recorded[{c.at("preset").get<std::string>(), c.at("algorithm").get<std::string>()}] = &c;
    for (StudyCell& c : out->cells) {
      if (c.backend != "redis") continue;
      const std::string cell = what + ": cell " + c.preset + "/" + c.algorithm;
      auto it = recorded.find({c.preset, c.algorithm});
      if (it == recorded.end()) return Status::Invalid(cell + " is not in it; run without --redis-from");
      LOCKLAB_RETURN_IF_ERROR(Fill(*it->second, cell, &c));
      if (c.completed < c.runs) out->all_completed = false;
    }
    if (recorded.empty() || std::none_of(out->cells.begin(), out->cells.end(),
                                         [](const StudyCell& c) { return c.backend == "redis"; }))
      return Status::Invalid(what + ": needs --backend redis or sim,redis, and a file with real-Redis cells");
  } catch (const json::exception& e) {
    return Status::Invalid(what + ": " + e.what());
  }
  return Status::Ok();
}

}  // namespace locklab
