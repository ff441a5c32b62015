// `locklab study`, the main job (`make run`): every algorithm under every suite fault preset
// (harness/cli/suite.h), many seeds per cell on the simulator and as many as fit on real Redis,
// and per cell the rates a reader can compare: violations and damage (lost updates + oversold)
// per acquisition, each with its n and a 95% interval (cluster-robust over seeds: violations
// come in bursts around one pause, so the seeds are the independent units), plus acquisitions
// and p99 acquire latency as means over seeds with Student t intervals.
//
// Output: a table that fits in 120 columns (one block per backend and rate), and a JSON file
// (schema locklab.study/1, written via a temporary file and a rename) that
// notebooks/study.ipynb draws as heatmaps (results/plots/study_heatmap.png).
//
// Real Redis runs are latency-bound (the lock serialises 20 ms critical sections; pauses sleep),
// so several may run at once, each with its own redis-servers (--redis-jobs); simulator runs use
// --jobs threads. Both leave the results in the same order and bytes: the simulator's part of
// the JSON is byte-identical for any --jobs.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "algorithms/status.h"
#include "harness/report/prediction.h"
#include "harness/report/stats.h"
#include "harness/run/run_spec.h"

namespace locklab {

inline constexpr char kStudySchema[] = "locklab.study/1";

struct StudyOptions {
  std::vector<std::string> backends = {"sim", "redis"};
  int sim_seeds = 100;      // seeds 1..N per cell on the simulator
  int redis_seeds = 4;      // seeds 1..N per cell on real Redis
  int clients = 10;
  int64_t requests = 200;
  std::string profile = "default";
  int jobs = 1;             // simulator runs at the same time
  int redis_jobs = 4;       // real-Redis runs at the same time (each with its own servers)
  std::string redis_from;   // non-empty: the real-Redis cells of this earlier study file, not run
  std::string out = "results/study/study.json";
  bool progress = true;
  std::string command;      // the command line, for the JSON's context
};

// One cell: a backend x preset x algorithm over its seeds.
struct StudyCell {
  std::string backend, preset, algorithm;
  int runs = 0, completed = 0;
  Interval violations_per_acq;  // cluster-t over completed runs
  Interval damage_per_acq;      // (lost updates + oversold) per acquisition, cluster-t
  Interval acquisitions;        // per run, t
  Interval p99_acquire_ms;      // per run, t
  int64_t acquisitions_total = 0, violations_total = 0, damage_total = 0;
  // Simulator cells of a study with both backends: what a block of real Redis's seed count
  // should show, from this cell's runs (harness/report/prediction.h). Real Redis agrees with
  // the simulator on a rate when its pooled rate lies within the prediction.
  Prediction violations_pred, damage_pred;
  std::string replay;           // the first seed's replay command; the others differ in --seed only
  std::string first_error;      // of a run that did not complete
};

struct StudyResult {
  std::vector<StudyCell> cells;  // backend-major, then preset, then algorithm
  bool all_completed = true;
  // The machine around the real-Redis block ({"start_utc", "load_average": {start, end},
  // "wake_late_us": {start, end}}, harness/real/wake_probe.h); from the --redis-from file when
  // reused (null when that file has none), null without a real block.
  nlohmann::ordered_json redis_machine;
};

// Checks every cell's spec first (kInvalid naming the problem, before any run), then runs them.
Result<StudyResult> RunStudy(const StudyOptions& o);

// --redis-from: fills the result's real-Redis cells from o.redis_from, an earlier study's JSON
// with the same real seeds per cell and, cell by cell, the same seed-1 replay command (so the
// same configuration); kInvalid naming the file and the cell otherwise. Real runs do not depend
// on the simulator's profile: a new profile's simulator block can sit next to them.
Status ReuseRedisCells(const StudyOptions& o, StudyResult* out);

// The 120-column table.
std::string StudyTable(const StudyResult& r, const StudyOptions& o);
// The JSON document (schema locklab.study/1).
nlohmann::ordered_json StudyJson(const StudyResult& r, const StudyOptions& o);

}  // namespace locklab
