// The scorecard's cells and what is printed and written of them (internal to harness/bench):
// a cell is one implementation under one fault, its trials' outcomes and their summary.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/bench/scorecard_judge.h"
#include "harness/bench/scorecard_plan.h"
#include "harness/report/stats.h"

namespace locklab::scorecard {

struct Cell {
  std::string impl, fault;
  std::string not_applicable;  // why not ("" = applies)
  std::vector<TrialOutcome> trials;
};

struct CellSummary {
  int64_t n = 0, errors = 0;           // trials that ran, that could not
  Interval two_holders;                // trials with two holders at once, k of n (Wilson)
  int64_t two_holders_k = 0;
  double overlap_ms_median = 0, overlap_ms_max = 0;  // over the trials with an overlap
  int64_t lost_updates = 0, lost_update_trials = 0;
  Interval learned;                    // trials where A heard it had lost the lock (Wilson)
  int64_t learned_k = 0;
  double learned_ms_median = -1;       // after the fault began
  std::string learned_how;             // the commonest way
  int64_t b_acquired = 0;
  bool b_after_known = false;
  double b_after_a_release_ms_median = 0;  // B's acquisition minus the end of A's release
};
CellSummary Summarize(const Cell& c);

// The matrix (faults x implementations: "k/n" of two holders) and one line per cell.
std::string ScorecardTables(const std::vector<Cell>& cells, const std::vector<ScImpl>& impls,
                            const std::vector<FaultInfo>& faults);

nlohmann::json CellJson(const Cell& c);

}  // namespace locklab::scorecard
