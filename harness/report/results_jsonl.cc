#include "harness/report/results_jsonl.h"

#include <nlohmann/json.hpp>

#include "harness/report/report.h"
#include "harness/report/report_text.h"
#include "harness/run/sweep_shard.h"

namespace locklab {

bool FoundViolation(const RunResult& r) {
  const SafetyResult& s = r.check.safety;
  const ResourceResult& res = r.check.resource;
  return s.violations > 0 || res.lost_updates > 0 || res.oversold > 0 || res.stale_writes_accepted > 0 ||
         res.stale_reads > 0;
}

std::string FullReportName(size_t run) { return "run-" + std::to_string(run) + ".json"; }

std::string ResultLine(const RunResult& r, const RunPlace& place, bool with_full) {
  // The report's own figures (RunJson), rounded the same way, without building the whole run.
  const CheckResult& c = r.check;
  nlohmann::ordered_json j;
  j["schema"] = kResultsSchema;
  j["run"] = place.run;
  j["runs"] = place.runs_total;
  j["sweep"] = place.sweep_hash;
  j["config"] = place.config_hash.empty() ? ConfigHash(r.spec) : place.config_hash;
  j["algorithm"] = AlgorithmLabel(r.spec);  // the table's: options that are not the defaults
  j["seed"] = r.spec.seed;
  j["completed"] = r.completed;
  j["error"] = r.error;
  j["violations"] = c.safety.violations;
  j["overlap_ms_total"] = Round3(c.safety.overlap_ms_total);
  j["lost_updates"] = c.resource.lost_updates;
  j["oversold"] = c.resource.oversold;
  j["stale_writes_accepted"] = c.resource.stale_writes_accepted;
  j["acquired"] = c.liveness.acquired;
  j["failed"] = c.liveness.failed;
  j["unknown"] = c.liveness.unknown;
  j["acquire_p50_ms"] = Round3(c.latency.acquire.p50);
  j["acquire_p99_ms"] = Round3(c.latency.acquire.p99);
  j["commands_per_acquire"] = Round3(CommandsPerAcquire(r));
  j["throughput_per_s"] = Round3(ThroughputPerS(r));
  j["full_report"] = with_full ? nlohmann::ordered_json(FullReportName(place.run)) : nlohmann::ordered_json();
  j["replay"] = r.replay.empty() ? ReplayCommand(r.spec) : r.replay;
  return j.dump();
}

}  // namespace locklab
