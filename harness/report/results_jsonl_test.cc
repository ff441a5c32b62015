#include "harness/report/results_jsonl.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "harness/report/report.h"
#include "harness/report/report_text.h"
#include "harness/run/sweep_shard.h"

namespace locklab {
namespace {

// The line as the library prints it: the object built member by member, then dumped.
std::string LibraryLine(const RunResult& r, const RunPlace& place, bool with_full) {
  const CheckResult& c = r.check;
  nlohmann::ordered_json j;
  j["schema"] = kResultsSchema;
  j["run"] = place.run;
  j["runs"] = place.runs_total;
  j["sweep"] = place.sweep_hash;
  j["config"] = place.config_hash.empty() ? ConfigHash(r.spec) : place.config_hash;
  j["algorithm"] = AlgorithmLabel(r.spec);
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

TEST(ResultsJsonl, ALineHasTheBytesOfTheLibrarysDump) {
  RunResult r;
  r.spec.algorithm = "redlock";
  r.spec.algorithm_options.Set("fence", "on");
  r.spec.seed = std::numeric_limits<uint64_t>::max();
  RunPlace place{3, 2000, "bf4f3023eb2d215d", "4ad9a390b11f0bf5"};
  EXPECT_EQ(ResultLine(r, place, false), LibraryLine(r, place, false));
  r.completed = true;
  r.error = "stopped: \"time\" limit \\ reached\n";
  r.check.safety.violations = 7;
  r.check.safety.overlap_ms_total = 12.3456;
  r.check.resource.lost_updates = -1;
  r.check.liveness.acquired = 20;
  r.check.latency.acquire.p50 = 7.5764;
  r.check.latency.acquire.p99 = std::numeric_limits<double>::quiet_NaN();
  r.duration_us = 1'234'567;
  r.commands.total = 281;
  r.replay = "locklab run --seed 'caf\xc3\xa9'";
  place.config_hash.clear();  // computed from the spec
  EXPECT_EQ(ResultLine(r, place, true), LibraryLine(r, place, true));
  EXPECT_EQ(ResultLine(r, place, false), LibraryLine(r, place, false));
}

}  // namespace
}  // namespace locklab
