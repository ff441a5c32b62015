// The scorecard's cells: see scorecard_report.h.
#include "harness/bench/scorecard_report.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "harness/report/text_table.h"

namespace locklab::scorecard {
namespace {

double R3(double v) { return std::round(v * 1000.0) / 1000.0; }

std::string Pct(double v) { return Fixed(100.0 * v, 0) + "%"; }

std::string RateText(int64_t k, const Interval& i) {
  return std::to_string(k) + "/" + std::to_string(i.n) + " " + Pct(i.estimate) + " [" + Pct(i.low) + ", " +
         Pct(i.high) + "]";
}

nlohmann::json IntervalJson(int64_t k, const Interval& i) {
  return {{"k", k}, {"n", i.n}, {"rate", R3(i.estimate)}, {"low", R3(i.low)}, {"high", R3(i.high)}, {"method", i.method}};
}

const Cell* Find(const std::vector<Cell>& cells, const std::string& impl, const std::string& fault) {
  for (const Cell& c : cells)
    if (c.impl == impl && c.fault == fault) return &c;
  return nullptr;
}

}  // namespace

CellSummary Summarize(const Cell& c) {
  CellSummary s;
  std::vector<double> overlaps, learned_ms, b_after;
  std::map<std::string, int> hows;
  for (const TrialOutcome& t : c.trials) {
    if (!t.ran) {
      ++s.errors;
      continue;
    }
    ++s.n;
    if (t.violations > 0) {
      ++s.two_holders_k;
      overlaps.push_back(t.overlap_ms);
    }
    s.lost_updates += t.lost_updates;
    s.lost_update_trials += t.lost_updates > 0 ? 1 : 0;
    if (t.learned) {
      ++s.learned_k;
      learned_ms.push_back(t.learned_ms);
      ++hows[t.learned_how.substr(0, t.learned_how.find(':'))];
    }
    s.b_acquired += t.b_acquired ? 1 : 0;
    if (t.b_after_known) b_after.push_back(t.b_after_a_release_ms);
  }
  s.two_holders = WilsonInterval(s.two_holders_k, s.n);
  s.learned = WilsonInterval(s.learned_k, s.n);
  if (!overlaps.empty()) {
    s.overlap_ms_median = Quantile(overlaps, 0.5);
    s.overlap_ms_max = *std::max_element(overlaps.begin(), overlaps.end());
  }
  if (!learned_ms.empty()) s.learned_ms_median = Quantile(learned_ms, 0.5);
  s.b_after_known = !b_after.empty();
  if (s.b_after_known) s.b_after_a_release_ms_median = Quantile(b_after, 0.5);
  int best = 0;
  for (const auto& [how, k] : hows)
    if (k > best) {
      best = k;
      s.learned_how = how;
    }
  return s;
}

std::string ScorecardTables(const std::vector<Cell>& cells, const std::vector<ScImpl>& impls,
                            const std::vector<FaultInfo>& faults) {
  std::vector<std::string> header = {"two holders (k/n)"};
  for (const ScImpl& i : impls) header.push_back(i.id);
  TextTable matrix(header);
  for (const FaultInfo& f : faults) {
    std::vector<std::string> row = {f.id};
    for (const ScImpl& i : impls) {
      const Cell* c = Find(cells, i.id, f.id);
      if (c == nullptr) row.push_back("-");
      else if (!c->not_applicable.empty()) row.push_back("n/a");
      else {
        const CellSummary s = Summarize(*c);
        row.push_back(std::to_string(s.two_holders_k) + "/" + std::to_string(s.n) + (s.errors ? "!" : ""));
      }
    }
    matrix.AddRow(row);
  }
  TextTable lines({"fault", "implementation", "two holders k/n (95% Wilson)", "overlap ms p50", "max", "lost upd",
                   "learned k/n", "learned ms p50", "how", "B acq", "B-A rel ms", "errors"});
  for (const FaultInfo& f : faults)
    for (const ScImpl& i : impls) {
      const Cell* c = Find(cells, i.id, f.id);
      if (c == nullptr) continue;
      if (!c->not_applicable.empty()) {
        lines.AddRow({f.id, i.id, "n/a"});
        continue;
      }
      const CellSummary s = Summarize(*c);
      lines.AddRow({f.id, i.id, RateText(s.two_holders_k, s.two_holders), Fixed(s.overlap_ms_median, 0),
                    Fixed(s.overlap_ms_max, 0), std::to_string(s.lost_updates),
                    std::to_string(s.learned_k) + "/" + std::to_string(s.n),
                    s.learned_ms_median < 0 ? "-" : Fixed(s.learned_ms_median, 0), s.learned_how.empty() ? "-" : s.learned_how,
                    std::to_string(s.b_acquired),
                    !s.b_after_known ? "-" : Fixed(s.b_after_a_release_ms_median, 0),
                    std::to_string(s.errors)});
    }
  return matrix.ToString() + "\n" + lines.ToString();
}

nlohmann::json CellJson(const Cell& c) {
  nlohmann::json j = {{"implementation", c.impl}, {"fault", c.fault}, {"applies", c.not_applicable.empty()}};
  if (!c.not_applicable.empty()) {
    j["not_applicable"] = c.not_applicable;
    return j;
  }
  const CellSummary s = Summarize(c);
  j["n"] = s.n;
  j["errors"] = s.errors;
  j["two_holders"] = IntervalJson(s.two_holders_k, s.two_holders);
  j["overlap_ms"] = {{"median", R3(s.overlap_ms_median)}, {"max", R3(s.overlap_ms_max)}};
  j["lost_updates"] = {{"total", s.lost_updates}, {"trials", s.lost_update_trials}};
  j["learned"] = IntervalJson(s.learned_k, s.learned);
  j["learned"]["median_ms_after_fault"] = R3(s.learned_ms_median);
  j["learned"]["how"] = s.learned_how;
  std::vector<double> asked, measured;
  for (const TrialOutcome& t : c.trials)
    for (const auto& [a, m] : t.proxy_ms) {
      asked.push_back(a);
      measured.push_back(m);
    }
  if (!measured.empty())  // the proxy's faults: what was asked, what it measured
    j["proxy_faults_ms"] = {{"count", measured.size()},
                            {"asked", R3(Quantile(asked, 0.5))},
                            {"measured_median", R3(Quantile(measured, 0.5))},
                            {"measured_min", R3(*std::min_element(measured.begin(), measured.end()))},
                            {"measured_max", R3(*std::max_element(measured.begin(), measured.end()))}};
  j["b_acquired"] = s.b_acquired;
  if (s.b_after_known) j["b_after_a_release_ms_median"] = R3(s.b_after_a_release_ms_median);
  nlohmann::json trials = nlohmann::json::array();
  for (const TrialOutcome& t : c.trials) {
    nlohmann::json x = {{"ran", t.ran}};
    if (!t.ran) x["error"] = t.error;
    else
      x.update({{"violations", t.violations}, {"overlap_ms", R3(t.overlap_ms)}, {"lost_updates", t.lost_updates},
                {"stale_writes_accepted", t.stale_writes_accepted}, {"a_release", t.a_release},
                {"learned", t.learned}, {"learned_ms", R3(t.learned_ms)}, {"learned_how", t.learned_how},
                {"b_acquired", t.b_acquired}});
    if (t.ran && t.b_after_known) x["b_after_a_release_ms"] = R3(t.b_after_a_release_ms);
    if (!t.fault_note.empty()) x["fault_note"] = t.fault_note.substr(0, 400);
    if (!t.retried_after.empty()) x["retried_after"] = t.retried_after;
    trials.push_back(x);
  }
  j["trials"] = trials;
  return j;
}

}  // namespace locklab::scorecard
