// bench-peers' rows (internal to harness/bench): one implementation x workload x node count x
// setting each, run on the bench's servers and judged by the checkers; and the physical limit,
// redis-benchmark's rate for SET NX PX + the release script.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "harness/bench/bench_env.h"
#include "harness/bench/redis_benchmark.h"
#include "harness/bench/row_check.h"

namespace locklab::bench_peers {

struct Row {
  std::string workload, workload_label, impl, name, version, setting;
  Kind kind = Kind::kLocklab;
  int nodes = 1, clients = 1;
  bool per_key = false;
  json options = json::object();
  bool ran = false;
  std::string error;
  std::vector<std::string> notes;
  RowCheck check;
  CommandDelta server;
  int64_t sent_total = -1;
  std::map<std::string, int64_t> sent_by_name;
  int64_t counter_final = 0;
  std::vector<double> round_rates;  // measured in rounds with the limit: each round's rate
};

struct Limit : PairLimit {
  std::vector<double> round_pair_rps;  // measured in rounds with a locklab row: each round's figure
};

// Every selected implementation on every workload and node count, in the table's order, with a
// progress line each; the limits measured on the way (with as many clients as the timed rows).
std::vector<Row> RunRows(BenchEnv& env, std::vector<Limit>* limits);

// The middle value (the lower of the two middle ones for an even count); -1 when empty.
double Median(std::vector<double> v);
// " (rounds: a, b, c)" when there was more than one.
std::string RoundsText(const std::vector<double>& v);

}  // namespace locklab::bench_peers
