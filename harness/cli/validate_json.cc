// The validation's JSON document and its terminal table (harness/cli/validate.h).
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>

#include "harness/run/host_info.h"
#include "harness/cli/validate.h"
#include "harness/report/text_table.h"
#include "harness/run/build_info.h"
#include "harness/run/config.h"

namespace locklab {
namespace {

using nlohmann::json;

json Number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
json Optional(const std::optional<double>& v) { return v ? Number(*v) : json(nullptr); }

std::string Kind(MetricKind k) {
  switch (k) {
    case MetricKind::kMean:
      return "mean";
    case MetricKind::kFailed:
      return "failed";
    case MetricKind::kRate:
      return "rate";
  }
  return "?";
}

// One backend: the estimate with its interval, and the figure of every seed (null: none).
json SampleJson(MetricKind kind, const SeedSample& s, const std::vector<std::optional<Figure>>& by_seed) {
  json per_seed = json::array(), events = json::array(), trials = json::array();
  for (const auto& f : by_seed) {
    if (!f) {
      per_seed.push_back(nullptr);
      events.push_back(nullptr);
      trials.push_back(nullptr);
      continue;
    }
    const bool rate = kind == MetricKind::kRate;
    per_seed.push_back(Number(rate ? (f->trials > 0 ? f->value / f->trials : 0) : f->value));
    events.push_back(Number(f->value));
    trials.push_back(Number(f->trials));
  }
  json j = {{"estimate", s.has_data ? Number(s.interval.estimate) : json(nullptr)},
            {"low", s.has_data ? Number(s.interval.low) : json(nullptr)},
            {"high", s.has_data ? Number(s.interval.high) : json(nullptr)},
            {"n", s.interval.n},
            {"method", s.interval.method},
            {"per_seed", per_seed}};
  if (kind == MetricKind::kRate) {
    j["events"] = events;
    j["trials"] = trials;
  }
  return j;
}

json MetricJson(const MetricResult& m) {
  const MetricInfo& info = MetricInfoOf(m.id);
  return {{"name", info.name},
          {"label", info.label},
          {"kind", Kind(info.kind)},
          {"sim", SampleJson(info.kind, m.sim, m.sim_by_seed)},
          {"real", SampleJson(info.kind, m.real, m.real_by_seed)},
          {"ratio",
           {{"estimate", Optional(m.ratio.estimate)},
            {"low", Optional(m.ratio.low)},
            {"high", Optional(m.ratio.high)},
            {"method", m.ratio.method}}},
          {"verdict", m.verdict.verdict},
          {"why", m.verdict.why}};
}

json ExperimentJson(const ExperimentResult& e) {
  json config = ToJson(e.base);
  config.erase("backend");
  config.erase("seed");
  json runs = json::array(), metrics = json::array();
  for (const ValidateRun& r : e.runs)
    runs.push_back({{"backend", r.backend},
                    {"seed", r.seed},
                    {"completed", r.completed},
                    {"error", r.error},
                    {"wall_s", std::round(r.wall_s * 1000) / 1000},
                    {"replay", r.replay}});
  for (const MetricResult& m : e.metrics) metrics.push_back(MetricJson(m));
  json out = {{"name", e.name}, {"config", config}, {"seeds", e.seeds}, {"metrics", metrics}, {"runs", runs}};
  if (!e.real_sources.empty()) out["real_sources"] = e.real_sources;  // pooled: real per_seed by file
  return out;
}

// A short number for a table cell: about 3 significant digits, at most 7 characters.
std::string Short(double v) {
  char buf[32];
  const double a = std::fabs(v);
  if (v == 0)
    return "0";
  else if (a >= 99.5)
    std::snprintf(buf, sizeof buf, a < 1e7 ? "%.0f" : "%.2g", v);
  else if (a >= 9.95)
    std::snprintf(buf, sizeof buf, "%.1f", v);
  else if (a >= 0.995)
    std::snprintf(buf, sizeof buf, "%.2f", v);
  else if (a >= 0.001)
    std::snprintf(buf, sizeof buf, "%.3f", v);
  else
    std::snprintf(buf, sizeof buf, "%.1e", v);
  return buf;
}

std::string Cell(const SeedSample& s) {
  if (!s.has_data) return "-";
  return Short(s.interval.estimate) + " [" + Short(s.interval.low) + ", " + Short(s.interval.high) + "]";
}

std::string RatioCell(const SimRealRatio& r) {
  if (!r.estimate) return "-";
  if (!r.low || !r.high) return Short(*r.estimate);
  return Short(*r.estimate) + " [" + Short(*r.low) + ", " + Short(*r.high) + "]";
}

}  // namespace

nlohmann::json ValidationJson(const ValidationResult& r, const ValidateOptions& o) {
  json groups = json::array();
  std::map<std::string, int64_t> counts = {{"agree", 0}, {"disagree", 0}, {"n/a", 0}};
  for (const ExperimentResult& e : r.experiments) {
    if (groups.empty() || groups.back()["name"] != e.group)
      groups.push_back({{"name", e.group}, {"seeds", e.seeds.size()}, {"experiments", json::array()}});
    groups.back()["experiments"].push_back(ExperimentJson(e));
    for (const MetricResult& m : e.metrics) ++counts[m.verdict.verdict];
  }
  json context = {{"version", ToolVersion()}, {"sha", GitSha()},     {"host", HostName()},
                  {"date", UtcNowText()},         {"quick", o.quick},    {"only", o.only},
                  {"command", o.command},     {"all_completed", r.all_completed},
                  {"profile", o.profile}};  // the simulator's cost profile
  if (!r.real_from.is_null()) context["real_from"] = r.real_from;  // real figures not run again
  context["load_average"] = {{"start", r.load_start}, {"end", r.load_end}};  // 1, 5, 15 min
  if (!r.wake_start.empty())  // the machine's state around the real runs made now
    context["wake_late_us"] = {{"start", WakeLatenessJson(r.wake_start)}, {"end", WakeLatenessJson(r.wake_end)}};
  json rule = {{"text", AgreementRuleText()},
               {"mean_factor", kAgreeMeanFactor},
               {"failed_fraction_of_requests", kAgreeFailedFraction},
               {"confidence", kConfidence95},
               {"means", "agree when sim mean is in [min(real/1.25, min real seed), max(real*1.25, max real seed)]"},
               {"failed", "agree when |sim mean - real mean| <= 0.05 * requests per run"},
               {"rates", "agree when the sim and real 95% intervals overlap"},
               {"n/a", "either backend has no value"}};
  return {{"schema", kValidationSchema}, {"context", context}, {"rule", rule},
          {"summary", counts},           {"groups", groups}};
}

std::string ValidationTable(const ValidationResult& r) {
  std::string out;
  std::string group;
  std::optional<TextTable> table;
  const auto flush = [&] {
    if (table) out += table->ToString() + "\n";
  };
  for (const ExperimentResult& e : r.experiments) {
    if (e.group != group) {
      flush();
      group = e.group;
      out += group + " (" + std::to_string(e.seeds.size()) +
             (e.real_sources.empty() ? " seeds per backend)\n" : " seeds on the simulator; real Redis: the runs pooled)\n");
      table.emplace(std::vector<std::string>{"experiment", "metric", "sim [95% CI]", "real [95% CI]", "sim/real",
                                             "verdict"});
    }
    bool first = true;
    for (const MetricResult& m : e.metrics) {
      table->AddRow({first ? e.name : "", MetricInfoOf(m.id).label, Cell(m.sim), Cell(m.real), RatioCell(m.ratio),
                     m.verdict.verdict});
      first = false;
    }
  }
  flush();
  if (r.real_from.is_object())
    out += "real Redis: the runs recorded in " + r.real_from.value("file", "") + " (" + r.real_from.value("date", "") +
           ", " + r.real_from.value("sha", "") + ") wherever they match; the others ran now\n";
  if (r.real_from.is_array()) {
    out += "real Redis: every run recorded for each experiment in " + std::to_string(r.real_from.size()) +
           " files, pooled (a sitting each); the others ran now:\n";
    for (const nlohmann::json& f : r.real_from)
      out += "  " + f.value("file", "") + " (" + f.value("date", "") + ", " + f.value("sha", "") + ")\n";
  }
  if (!r.wake_start.empty())
    out += "machine around the real runs: " + WakeLatenessText(r.wake_start) + " before; " +
           WakeLatenessText(r.wake_end) + " after (load " + r.load_start + " -> " + r.load_end + ")\n";
  return out;
}

}  // namespace locklab
