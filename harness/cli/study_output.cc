// The study's table (120 columns) and JSON (harness/cli/study.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/lock.h"
#include "harness/cli/study.h"
#include "harness/cli/suite.h"
#include "harness/report/interval_json.h"
#include "harness/report/known_gaps.h"
#include "harness/real/wake_probe.h"
#include "harness/report/text_table.h"
#include "harness/run/build_info.h"

namespace locklab {
namespace {

using ojson = nlohmann::ordered_json;

// "0.0123 [0.0101,0.015]": 24 characters at most.
std::string RateCell(const Interval& i, int completed) {
  if (completed == 0) return "n/a";
  return ShortRate(i.estimate) + " [" + ShortRate(i.low) + "," + ShortRate(i.high) + "]";
}

constexpr int kAlgWidth = 14;
constexpr int kCellWidth = 26;

std::string Pad(const std::string& s, int width) {
  return s.size() >= static_cast<size_t>(width) ? s + " " : s + std::string(static_cast<size_t>(width) - s.size(), ' ');
}

std::string Trimmed(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::string BackendName(const std::string& b) { return b == "sim" ? "simulator" : "real Redis"; }

void Block(const StudyResult& r, const std::string& backend, int seeds, bool damage, std::ostream& out) {
  out << BackendName(backend) << ", " << seeds << " seeds per cell: "
      << (damage ? "damage (lost updates + oversold)" : "mutual-exclusion violations")
      << " per acquisition [95% CI]\n";
  std::string line = Pad("algorithm", kAlgWidth);
  for (const SuitePreset& p : SuitePresets()) line += Pad(p.name, kCellWidth);
  out << Trimmed(line) << "\n";
  std::map<std::string, std::map<std::string, const StudyCell*>> by;  // algorithm -> preset -> cell
  for (const StudyCell& c : r.cells)
    if (c.backend == backend) by[c.algorithm][c.preset] = &c;
  for (const AlgorithmInfo& a : Algorithms()) {
    line = Pad(a.name, kAlgWidth);
    for (const SuitePreset& p : SuitePresets()) {
      const StudyCell* c = by[a.name][p.name];
      std::string cell = c == nullptr ? "-" : RateCell(damage ? c->damage_per_acq : c->violations_per_acq, c->completed);
      if (c != nullptr && c->completed < c->runs) cell += "*";
      line += Pad(cell, kCellWidth);
    }
    out << Trimmed(line) << "\n";
  }
  out << "\n";
}

bool Apart(const Interval& a, const Interval& b) { return a.high < b.low || b.high < a.low; }

// One backend's cells with a completed run, by (preset, algorithm): the other backend's beside each.
std::map<std::pair<std::string, std::string>, const StudyCell*> CellsOf(const StudyResult& r,
                                                                        const std::string& backend) {
  std::map<std::pair<std::string, std::string>, const StudyCell*> by;
  for (const StudyCell& c : r.cells)
    if (c.backend == backend && c.completed > 0) by[{c.preset, c.algorithm}] = &c;
  return by;
}

std::string Percent(double share) { return std::to_string(static_cast<int>(std::lround(100 * share))) + "%"; }

// One rate outside the prediction: "  gc-pause/token violations: real ...; simulated ..., range ...".
std::string OutsideLine(const std::string& name, const Interval& real, int completed, const Interval& sim,
                        const Prediction& p, int redis_seeds) {
  return "  " + name + ": real " + RateCell(real, completed) + "; simulated " + ShortRate(sim.estimate) +
         ", range for " + std::to_string(redis_seeds) + " seeds [" + ShortRate(p.low) + "," + ShortRate(p.high) + "]";
}

// With both backends: the rates where real Redis falls outside what the simulator predicts for
// a block of real Redis's seed count (prediction.h), those where the two should agree apart from
// the known gaps (known_gaps.h), and, for the reader who compares the printed intervals, how
// often they miss each other and why that is no test with few seeds.
void Disagreements(const StudyResult& r, const StudyOptions& o, std::ostream& out) {
  const auto real = CellsOf(r, "redis");
  int compared = 0, gap_compared = 0, apart = 0;
  double chance = 0, worst_coverage = 1;  // expected outside by chance; the lowest cluster-t coverage
  std::string worst;
  std::vector<std::string> lines, gap_lines;
  for (const StudyCell& s : r.cells) {
    auto it = real.find({s.preset, s.algorithm});
    if (s.backend != "sim" || s.completed == 0 || it == real.end()) continue;
    for (const bool damage : {false, true}) {
      const Prediction& p = damage ? s.damage_pred : s.violations_pred;
      const Interval& a = damage ? s.damage_per_acq : s.violations_per_acq;
      const Interval& b = damage ? it->second->damage_per_acq : it->second->violations_per_acq;
      if (!p.valid) continue;
      const std::string name = s.preset + "/" + s.algorithm + (damage ? " damage" : " violations");
      const bool outside = !WithinPrediction(p, b.estimate);
      if (const KnownGap* g = FindKnownGap(s.preset, s.algorithm, damage)) {
        ++gap_compared;
        if (outside)
          gap_lines.push_back(OutsideLine(name, b, it->second->completed, a, p, o.redis_seeds) + "\n    (" +
                              std::string(g->why) + ")");
        continue;
      }
      ++compared;
      chance += p.outside;
      if (Apart(a, b)) ++apart;
      if (p.cluster_t_coverage < worst_coverage) worst_coverage = p.cluster_t_coverage, worst = name;
      if (outside) lines.push_back(OutsideLine(name, b, it->second->completed, a, p, o.redis_seeds));
    }
  }
  if (compared + gap_compared == 0) return;
  out << "Where real Redis falls outside the simulator's prediction for " << o.redis_seeds
      << " seeds (the central 95% of the rate\npooled over " << o.redis_seeds << " of its " << o.sim_seeds
      << " seeds drawn at random, " << kPredictionDraws << " draws), of the " << compared
      << " comparisons where the two should agree\n(cells x violations, damage): "
      << (lines.empty() ? "none" : std::to_string(lines.size())) << "\n";
  for (const std::string& l : lines) out << l << "\n";
  out << "(By chance alone, were the backends alike in every such cell, about " << Fixed(chance, 1)
      << " would fall outside. The two\n95% intervals miss each other in " << apart;
  if (!worst.empty())
    out << "; that is no test with few real seeds: a cluster-t interval over " << o.redis_seeds
        << " seeds covers\nits rate in as few as " << Percent(worst_coverage) << " of the simulator's draws (" << worst
        << ")";
  out << ". README \"What make run shows\".)\n";
  if (gap_compared > 0) {
    out << "In the " << gap_compared << " comparisons of the simulator's known gaps (README \"Where the simulator is known "
        << "to differ\"): " << (gap_lines.empty() ? "none" : std::to_string(gap_lines.size())) << " outside\n";
    for (const std::string& l : gap_lines) out << l << "\n";
  }
  out << "\n";
}

ojson PredictionRateJson(const Prediction& p) {
  if (!p.valid) return nullptr;
  return ojson{{"low", p.low}, {"high", p.high}, {"outside", p.outside}, {"cluster_t_coverage", p.cluster_t_coverage}};
}

// What a block of real Redis's seed count should show, per rate (prediction.h).
ojson PredictionJson(const StudyCell& c) {
  const Prediction& p = c.violations_pred.valid ? c.violations_pred : c.damage_pred;
  return ojson{{"block_runs", p.block_runs},
               {"reference_runs", p.reference_runs},
               {"draws", p.draws},
               {"method", p.method},
               {"violations_per_acquisition", PredictionRateJson(c.violations_pred)},
               {"damage_per_acquisition", PredictionRateJson(c.damage_pred)}};
}

// A cell's known gap (known_gaps.h): the rates it concerns and why; null when none.
ojson KnownGapJson(const StudyCell& c) {
  const KnownGap* v = FindKnownGap(c.preset, c.algorithm, false);
  const KnownGap* d = FindKnownGap(c.preset, c.algorithm, true);
  if (v == nullptr && d == nullptr) return nullptr;
  ojson rates = ojson::array();
  if (v != nullptr) rates.push_back("violations_per_acquisition");
  if (d != nullptr) rates.push_back("damage_per_acquisition");
  return ojson{{"rates", std::move(rates)}, {"why", std::string((v != nullptr ? v : d)->why)}};
}

// "1 ms sleeps woke 58 µs late (median; p90 71), 5 ms 60 (p90 80)" from WakeLatenessJson's rows.
std::string WakeText(const ojson& rows) {
  std::vector<WakeLateness> v;
  for (const ojson& r : rows)
    v.push_back({r.value("sleep_us", 0), r.value("n", 0), r.value("median_us", 0.0), r.value("p90_us", 0.0)});
  return WakeLatenessText(v);
}

// Three lines on the machine around the real block, when it was recorded; none when the record
// (perhaps from a --redis-from file) is not of the shape StudyResult::redis_machine says.
void MachineLines(const StudyResult& r, std::ostream& out) {
  const ojson& m = r.redis_machine;
  if (!m.is_object() || !m.contains("wake_late_us")) return;
  std::ostringstream lines;
  try {
    const ojson& w = m.at("wake_late_us");
    const ojson load = m.value("load_average", ojson::object());
    lines << "The machine around real Redis's block (from " << m.value("start_utc", "")
          << "; JSON context.redis_machine):\n";
    for (const char* when : {"start", "end"})
      lines << "  " << (std::string(when) == "start" ? "before" : "after") << ": "
            << WakeText(w.value(when, ojson::array())) << "; load " << load.value(when, "") << "\n";
  } catch (const ojson::exception&) {
    return;
  }
  out << lines.str() << "\n";
}

}  // namespace

std::string StudyTable(const StudyResult& r, const StudyOptions& o) {
  std::ostringstream out;
  out << "locklab study: every algorithm x fault preset, " << o.clients << " clients, " << o.requests
      << " requests per run,\ncounter workload, hold 20 ms, ttl 1000 ms\n\n";
  for (const std::string& b : o.backends) {
    const int seeds = b == "sim" ? o.sim_seeds : o.redis_seeds;
    Block(r, b, seeds, false, out);
    Block(r, b, seeds, true, out);
  }
  if (std::find(o.backends.begin(), o.backends.end(), "redis") != o.backends.end()) {
    Disagreements(r, o, out);
    MachineLines(r, out);
  }
  out << "Rates pool the seeds (events / acquisitions); the interval is cluster-robust over seeds (Student t,\n"
         "seeds - 1 df; all-zero cells: the Wilson upper bound of 0 in all acquisitions). * = a run did not\n"
         "complete (see the JSON). Presets:\n";
  for (const SuitePreset& p : SuitePresets()) out << "  " << p.name << ": " << p.summary << "\n";
  return out.str();
}

ojson StudyJson(const StudyResult& r, const StudyOptions& o) {
  ojson j;
  j["schema"] = kStudySchema;
  j["context"] = ojson{{"version", ToolVersion()},
                       {"sha", GitSha()},
                       {"command", o.command},
                       {"profile", o.profile},
                       {"clients", o.clients},
                       {"requests", o.requests},
                       {"seeds", ojson{{"sim", o.sim_seeds}, {"redis", o.redis_seeds}}},
                       {"redis_from", o.redis_from.empty() ? ojson(nullptr) : ojson(o.redis_from)},
                       {"all_completed", r.all_completed}};
  if (!r.redis_machine.is_null()) j["context"]["redis_machine"] = r.redis_machine;
  ojson presets = ojson::array();
  for (const SuitePreset& p : SuitePresets()) presets.push_back(ojson{{"name", p.name}, {"summary", p.summary}});
  j["presets"] = presets;
  const auto sim = CellsOf(r, "sim");
  ojson cells = ojson::array();
  for (const StudyCell& c : r.cells) {
    ojson x{{"backend", c.backend},
            {"preset", c.preset},
            {"algorithm", c.algorithm},
            {"runs", c.runs},
            {"completed", c.completed},
            {"acquisitions_total", c.acquisitions_total},
            {"violations_total", c.violations_total},
            {"damage_total", c.damage_total},
            {"violations_per_acquisition", IntervalJson(c.violations_per_acq)},
            {"damage_per_acquisition", IntervalJson(c.damage_per_acq)},
            {"acquisitions", IntervalJson(c.acquisitions)},
            {"p99_acquire_ms", IntervalJson(c.p99_acquire_ms)},
            {"replay", c.replay},
            {"replay_note", "seed 1; the other seeds: the same command with --seed 2.." +
                                std::to_string(c.backend == "sim" ? o.sim_seeds : o.redis_seeds)}};
    if (!c.first_error.empty()) x["error"] = c.first_error;
    if (ojson gap = KnownGapJson(c); !gap.is_null()) x["known_gap"] = std::move(gap);
    if (c.violations_pred.valid || c.damage_pred.valid) x["prediction"] = PredictionJson(c);
    if (auto it = sim.find({c.preset, c.algorithm});
        c.backend == "redis" && c.completed > 0 && it != sim.end() && it->second->violations_pred.valid)
      x["within_prediction"] = ojson{
          {"violations_per_acquisition", WithinPrediction(it->second->violations_pred, c.violations_per_acq.estimate)},
          {"damage_per_acquisition", WithinPrediction(it->second->damage_pred, c.damage_per_acq.estimate)}};
    cells.push_back(std::move(x));
  }
  j["cells"] = std::move(cells);
  return j;
}

}  // namespace locklab
