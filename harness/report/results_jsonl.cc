#include "harness/report/results_jsonl.h"

#include "harness/report/json_text.h"
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
  // The report's own figures (RunJson), rounded the same way, without building the whole run,
  // written as the compact object nlohmann's dump() gives in this key order (results_jsonl_test).
  const CheckResult& c = r.check;
  json_text::CompactObject o;
  o.String("schema", kResultsSchema);
  o.Integer("run", place.run);
  o.Integer("runs", place.runs_total);
  o.String("sweep", place.sweep_hash);
  o.String("config", place.config_hash.empty() ? ConfigHash(r.spec) : place.config_hash);
  o.String("algorithm", AlgorithmLabel(r.spec));  // the table's: options that are not the defaults
  o.Integer("seed", r.spec.seed);
  o.Bool("completed", r.completed);
  o.String("error", r.error);
  o.Integer("violations", c.safety.violations);
  o.Double("overlap_ms_total", Round3(c.safety.overlap_ms_total));
  o.Integer("lost_updates", c.resource.lost_updates);
  o.Integer("oversold", c.resource.oversold);
  o.Integer("stale_writes_accepted", c.resource.stale_writes_accepted);
  o.Integer("acquired", c.liveness.acquired);
  o.Integer("failed", c.liveness.failed);
  o.Integer("unknown", c.liveness.unknown);
  o.Double("acquire_p50_ms", Round3(c.latency.acquire.p50));
  o.Double("acquire_p99_ms", Round3(c.latency.acquire.p99));
  o.Double("commands_per_acquire", Round3(CommandsPerAcquire(r)));
  o.Double("throughput_per_s", Round3(ThroughputPerS(r)));
  if (with_full)
    o.String("full_report", FullReportName(place.run));
  else
    o.Null("full_report");
  o.String("replay", r.replay.empty() ? ReplayCommand(r.spec) : r.replay);
  return o.Close();
}

}  // namespace locklab
