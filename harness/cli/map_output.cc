// The map's JSON (schema locklab.map/1) and its table (harness/cli/map.h).
#include <cmath>
#include <cstdio>
#include <sstream>

#include "harness/cli/map.h"
#include "harness/report/interval_json.h"
#include "harness/report/text_table.h"
#include "harness/run/build_info.h"

namespace locklab {
namespace {

using ojson = nlohmann::ordered_json;

std::string Pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s + " ";
}

}  // namespace

ojson MapJson(const MapResult& r, const MapOptions& o) {
  const MapDef& d = *r.def;
  ojson j;
  j["schema"] = kMapSchema;
  j["map"] = ojson{{"name", d.name},     {"title", d.title},   {"x_label", d.x_label},
                   {"unit", MapUnitName(d.unit)}, {"workload", d.workload}, {"theory", d.theory},
                   {"theory_marks", d.marks}};
  j["context"] = ojson{{"version", ToolVersion()},
                       {"sha", GitSha()},
                       {"command", o.command},
                       {"backend", o.backend},
                       {"requests", o.requests > 0 ? ojson(o.requests) : ojson("the map's own")},
                       {"batch", r.batch},
                       {"max_seeds", r.max_seeds},
                       {"precision", o.precision},
                       {"floor", o.floor},
                       {"all_completed", r.all_completed}};
  ojson curves = ojson::array();
  for (size_t c : r.curves)
    curves.push_back(ojson{{"label", d.curves[c].label},
                           {"algorithm", d.curves[c].algorithm},
                           {"metric", MapMetricName(d.curves[c].metric)}});
  j["curves"] = curves;
  ojson points = ojson::array();
  for (const MapPoint& p : r.points) {
    const MapCurve& c = d.curves[p.curve];
    ojson x{{"x", p.x},
            {"curve", c.label},
            {"algorithm", c.algorithm},
            {"metric", MapMetricName(c.metric)},
            {"seeds", p.seeds},
            {"completed", p.completed},
            {"acquisitions", p.acquisitions},
            {"events", c.metric == MapMetric::kDamage ? p.damage : p.violations},
            {"runs_with_events", c.metric == MapMetric::kDamage ? p.runs_with_damage : p.runs_with_violations},
            {"rate", IntervalJson(p.rate(c.metric))},
            {"stop", MapStopName(p.stop)},
            {"violations", p.violations},
            {"damage", p.damage},
            {"violation_rate", IntervalJson(p.violation_rate)},
            {"damage_rate", IntervalJson(p.damage_rate)},
            {"replay", p.replay},
            {"replay_note", "seed 1; the other seeds: the same command with --seed 2.." + std::to_string(p.seeds)}};
    if (p.not_fired > 0) x["fault_not_fired"] = p.not_fired;  // runs left out of the rate
    if (!p.first_error.empty()) x["error"] = p.first_error;
    points.push_back(std::move(x));
  }
  j["points"] = std::move(points);
  return j;
}

std::string MapTable(const MapResult& r) {
  const MapDef& d = *r.def;
  std::ostringstream out;
  out << "locklab map " << d.name << ": " << d.title << "\n" << d.workload << "\n";
  out << "rate = events per " << MapUnitName(d.unit) << " [95% CI]; events = violations, or damage where the curve says\n\n";
  out << Pad("curve", 28) << Pad("x", 8) << Pad("seeds", 6) << Pad(d.unit == MapUnit::kFault ? "faults" : "acquired", 9)
      << Pad(d.unit == MapUnit::kFault ? "w/event" : "events", 7) << Pad("rate [95% CI]", 28) << "stop\n";
  for (const MapPoint& p : r.points) {
    const MapCurve& c = d.curves[p.curve];
    const Interval& i = p.rate(c.metric);
    char x[32];
    std::snprintf(x, sizeof x, "%g", p.x);
    const bool damage = c.metric == MapMetric::kDamage;
    const int64_t events = d.unit == MapUnit::kFault ? (damage ? p.runs_with_damage : p.runs_with_violations)
                                                     : (damage ? p.damage : p.violations);
    const int64_t trials = d.unit == MapUnit::kFault ? p.completed - p.not_fired : p.acquisitions;
    std::string cell = ShortRate(i.estimate) + " [" + ShortRate(i.low) + "," + ShortRate(i.high) + "]";
    if (p.completed < p.seeds) cell += " *";
    out << Pad(c.label, 28) << Pad(x, 8) << Pad(std::to_string(p.seeds), 6) << Pad(std::to_string(trials), 9)
        << Pad(std::to_string(events), 7) << Pad(cell, 28) << MapStopName(p.stop) << "\n";
  }
  out << "\n" << d.x_label << "; theory: " << d.theory << "\n";
  out << (d.unit == MapUnit::kFault ? "Per fault: runs with an event / runs whose fault happened, Wilson 95%.\n"
                                    : "Per acquisition: pooled over seeds, cluster-robust 95% over seeds (no event: the "
                                      "Wilson bound of 0 in all acquisitions).\n");
  out << "* = a run did not complete (see the JSON).\n";
  return out.str();
}

}  // namespace locklab
