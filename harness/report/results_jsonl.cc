#include "harness/report/results_jsonl.h"

#include <nlohmann/json.hpp>

#include "harness/report/report.h"
#include "harness/report/report_text.h"
#include "harness/run/sweep_shard.h"

namespace locklab {

bool FoundViolation(const RunResult& r) {
  const SafetyResult& s = r.check.safety;
  const ResourceResult& res = r.check.resource;
  return s.violations > 0 || res.lost_updates > 0 || res.oversold > 0 || res.stale_writes_accepted > 0;
}

std::string FullReportName(size_t run) { return "run-" + std::to_string(run) + ".json"; }

std::string ResultLine(const RunResult& r, const RunPlace& place, bool with_full) {
  // The report's own figures, so that the rounding and the definitions are the same.
  const nlohmann::json full = RunJson(r);
  const nlohmann::json& safety = full["safety"];
  const nlohmann::json& res = safety["resource"];
  const nlohmann::json& live = full["liveness"];
  const nlohmann::json& acquire = full["latency_ms"]["acquire"];
  nlohmann::ordered_json j;
  j["schema"] = kResultsSchema;
  j["run"] = place.run;
  j["runs"] = place.runs_total;
  j["sweep"] = place.sweep_hash;
  j["config"] = ConfigHash(r.spec);
  j["algorithm"] = AlgorithmLabel(r.spec);  // the table's: options that are not the defaults
  j["seed"] = r.spec.seed;
  j["completed"] = r.completed;
  j["error"] = r.error;
  j["violations"] = safety["violations"];
  j["overlap_ms_total"] = safety["overlap_ms_total"];
  j["lost_updates"] = res["lost_updates"];
  j["oversold"] = res["oversold"];
  j["stale_writes_accepted"] = res["stale_writes_accepted"];
  j["acquired"] = live["acquired"];
  j["failed"] = live["failed"];
  j["unknown"] = live["unknown"];
  j["acquire_p50_ms"] = acquire["p50"];
  j["acquire_p99_ms"] = acquire["p99"];
  j["commands_per_acquire"] = full["redis"]["commands_per_acquire"];
  j["throughput_per_s"] = full["throughput_per_s"];
  j["full_report"] = with_full ? nlohmann::ordered_json(FullReportName(place.run)) : nlohmann::ordered_json();
  j["replay"] = full["replay"];
  return j.dump();
}

}  // namespace locklab
