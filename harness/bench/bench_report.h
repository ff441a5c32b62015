// bench-peers' report (internal to harness/bench): the JSON report (schema locklab.bench-peers/1)
// and the tables printed to the terminal, from the rows, the limits and the pause test.
#pragma once

#include <ostream>
#include <vector>

#include "harness/bench/bench_env.h"
#include "harness/bench/bench_rows.h"
#include "harness/bench/pause_trial.h"

namespace locklab::bench_peers {

struct BenchOutcome {
  std::vector<Row> rows;
  std::vector<Limit> limits;
  std::vector<PauseRow> pauses;
};

json ReportJson(const BenchEnv& env, const BenchOutcome& r);

// The rows, the limit, the ratios, the targets, the pause test and the notes.
void PrintTables(const BenchEnv& env, const BenchOutcome& r, std::ostream& out);

}  // namespace locklab::bench_peers
