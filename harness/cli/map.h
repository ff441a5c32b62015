// `locklab map NAME`: a violation-probability map. One fault's magnitude is swept (in units of the
// TTL where that is its natural scale) for several algorithms on the simulator; every point
// (x, curve) gets seeds 1, 2, ... added in batches of a fixed size until its 95% interval is
// narrow enough, or shows the rate is below a floor, or a cap is reached (MapStop). The seeds a
// point gets depend only on its own results, so the JSON is byte-identical for any --jobs.
//
// A curve's rate is one of two kinds (MapUnit):
//  - per acquisition: the faults are drawn from the seed all through the run (pauses, skew,
//    drift); events / acquisitions pooled over the seeds, cluster-robust interval over seeds
//    (stats.h ClusterRatioInterval; all-zero: the Wilson bound of 0 in all acquisitions);
//  - per fault: each run carries one planned fault (a failover, a delayed release, a clock jump,
//    a slow reply); the proportion of runs with at least one event, Wilson over runs.
// The event is a mutual-exclusion violation or damage (lost updates + oversold), per curve.
//
// The maps themselves (their workloads and the theory each makes visible) are in map_defs.cc;
// `locklab map --list` prints them. The JSON (schema locklab.map/1) is drawn by notebooks/maps.ipynb.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "algorithms/status.h"
#include "harness/report/stats.h"
#include "harness/run/run_spec.h"

namespace locklab {

inline constexpr char kMapSchema[] = "locklab.map/1";

enum class MapMetric { kViolations, kDamage };
enum class MapUnit { kAcquisition, kFault };

const char* MapMetricName(MapMetric m);  // "violations", "damage"
const char* MapUnitName(MapUnit u);      // "acquisition", "fault"

struct MapCurve {
  std::string label;      // as drawn: "token", "redlock (no validity check)"
  std::string algorithm;  // NAME[:opt=v,...]
  MapMetric metric = MapMetric::kViolations;
  double read_ratio = 0;  // RunSpec::read_ratio of every run of the curve (a read-write lock's readers)
};

struct MapDef {
  std::string name;      // `locklab map NAME`, results/maps/<name>.json
  std::string title;     // one line
  std::string x_label;   // "pause / TTL"
  std::string workload;  // what every run does, one line
  std::string theory;    // what theory predicts, i.e. what the map must show
  MapUnit unit = MapUnit::kAcquisition;
  std::vector<double> xs;
  std::vector<MapCurve> curves;
  int max_seeds = 200;   // the default cap per point
  int batch = 10;        // the default seeds per batch
  // The spec of curve `curve` at magnitude x (seed 1), not yet resolved.
  RunSpec (*spec)(double x, size_t curve) = nullptr;
  // Where theory puts a threshold (x), for the reader and the plots (dotted lines).
  std::vector<double> marks;
};

const std::vector<MapDef>& Maps();
const MapDef* FindMap(const std::string& name);
// `locklab map --list`: every map's name and title, its curves, x values and theory.
std::string MapListText();

struct MapOptions {
  std::string name;
  std::vector<double> xs;            // empty: the map's own
  std::vector<std::string> curves;   // labels; empty: all the map's curves
  std::string backend = "sim";       // sim, or redis (real servers: few seeds, one run at a time)
  std::string profile = "default";   // the simulator's cost profile (a real run has none)
  int jobs = 1;                      // simulator runs at the same time; the JSON is the same for any N
  int batch = 0;                     // seeds added to a point at a time; 0: the map's own
  int max_seeds = 0;                 // cap per point; 0: the map's own
  int64_t requests = 0;              // acquisitions attempted per run; 0: the map's own (smaller for real Redis)
  double precision = 0.2;            // stop when the interval's upper half-width <= this x the estimate
  double floor = 1e-4;               // ... or when its upper bound is below this (per unit)
  std::string out;                   // "": results/maps/<name>.json (sim) or <name>-redis.json
  bool progress = true;
  std::string command;               // the command line, for the JSON's context
};

// Why a point stopped taking seeds.
enum class MapStop { kGoOn, kPrecise, kBelowFloor, kCap };
const char* MapStopName(MapStop s);  // "go on", "precise", "below floor", "cap"
// The stopping rule, after `seeds` seeds: below floor (high < floor: a zero estimate's Wilson
// bound, or a tiny rate's whole interval; and at least min_floor_seeds seeds), precise
// (estimate > 0 and the wider half of the interval <= precision x estimate), else the cap
// (seeds >= max_seeds), else go on.
MapStop StopRule(const Interval& rate, int seeds, int max_seeds, double precision, double floor,
                 int min_floor_seeds = 1);
// Per acquisition, a zero point's Wilson bound counts acquisitions as if they were independent,
// but violations come in bursts within a seed: the fifo lock at pause 0.8 TTL had none in its
// first 10 seeds (50,000 acquisitions) and 138 in 200 seeds, in 34 of them. So a
// per-acquisition point stops below the floor only after this many seeds: none of 40 seeds
// with an event bounds the share of seeds that have one at 0.088 (Wilson 95%).
inline constexpr int kMinFloorSeedsPerAcquisition = 40;

struct MapPoint {
  double x = 0;
  size_t curve = 0;
  int seeds = 0, completed = 0;
  int not_fired = 0;  // per-fault maps: completed runs whose planned fault never came (left out of the rate)
  int64_t acquisitions = 0, violations = 0, damage = 0;
  int64_t runs_with_violations = 0, runs_with_damage = 0;
  Interval violation_rate, damage_rate;  // per the map's unit
  MapStop stop = MapStop::kGoOn;
  std::string replay;       // seed 1's command
  std::string first_error;  // of a run that did not complete
  const Interval& rate(MapMetric m) const { return m == MapMetric::kDamage ? damage_rate : violation_rate; }
};

struct MapResult {
  const MapDef* def = nullptr;
  std::vector<size_t> curves;   // indices into def->curves, in order
  std::vector<double> xs;
  std::vector<MapPoint> points; // curve-major, then x
  int max_seeds = 0, batch = 0;
  bool all_completed = true;
};

// Checks the options and every point's spec first (kInvalid naming the problem, before any run),
// then runs the rounds: each round adds one batch of seeds to every point still going on.
Result<MapResult> RunMap(const MapOptions& o);

// The JSON document (schema locklab.map/1).
nlohmann::ordered_json MapJson(const MapResult& r, const MapOptions& o);
// A table for stdout: one row per point.
std::string MapTable(const MapResult& r);

}  // namespace locklab
