#include "harness/cli/failover_compare.h"

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <vector>

#include "harness/cli/cli.h"
#include "harness/report/stats.h"
#include "harness/run/write_file.h"

namespace locklab {

namespace {

constexpr int kMaxReps = 200;
constexpr char kScriptKill[] = "node 0's master crashes; its replica is promoted in its place";
constexpr char kSentinelPromoted[] = "Redis Sentinel promoted";

struct ModeRuns {
  std::string mode;
  std::vector<FailoverOutcome> runs;
};

struct Spread {
  double median = 0, min = 0, max = 0;
  int64_t n = 0;
};

Spread SpreadOf(const std::vector<double>& v) {
  Spread s;
  s.n = static_cast<int64_t>(v.size());
  if (v.empty()) return s;
  s.median = Quantile(v, 0.5);
  s.min = Quantile(v, 0.0);
  s.max = Quantile(v, 1.0);
  return s;
}

nlohmann::json SpreadJson(const Spread& s) {
  return {{"n", s.n}, {"median", s.median}, {"min", s.min}, {"max", s.max}};
}

std::string SpreadText(const Spread& s) {
  if (s.n == 0) return "-";
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.0f [%.0f, %.0f] (n=%lld)", s.median, s.min, s.max, static_cast<long long>(s.n));
  return buf;
}

// The overlaps of the runs that had one, and the promotion delays seen.
struct Collected {
  int64_t k = 0;  // runs with two holders
  std::vector<double> overlaps, promoted, replicaof;
};

Collected Collect(const ModeRuns& m) {
  Collected c;
  for (const FailoverOutcome& o : m.runs) {
    if (o.two_holders) {
      ++c.k;
      c.overlaps.push_back(o.overlap_ms);
    }
    if (o.promoted_after_ms >= 0) c.promoted.push_back(o.promoted_after_ms);
    if (o.replicaof_after_ms >= 0) c.replicaof.push_back(o.replicaof_after_ms);
  }
  return c;
}

nlohmann::json ModeJson(const ModeRuns& m) {
  const Collected c = Collect(m);
  const Interval w = WilsonInterval(c.k, static_cast<int64_t>(m.runs.size()));
  nlohmann::json per_run = nlohmann::json::array();
  for (size_t i = 0; i < m.runs.size(); ++i) {
    const FailoverOutcome& o = m.runs[i];
    per_run.push_back({{"seed", i + 1}, {"two_holders", o.two_holders}, {"overlap_ms", o.overlap_ms},
                       {"promoted_after_ms", o.promoted_after_ms},
                       {"replicaof_no_one_after_ms", o.replicaof_after_ms}});
  }
  return {{"failover_by", m.mode},
          {"runs", m.runs.size()},
          {"two_holders", {{"k", c.k}, {"n", w.n}, {"estimate", w.estimate}, {"low", w.low}, {"high", w.high},
                           {"method", w.method}}},
          {"overlap_ms_when_two_held", SpreadJson(SpreadOf(c.overlaps))},
          {"replicaof_no_one_after_master_death_ms", SpreadJson(SpreadOf(c.replicaof))},
          {"switch_after_master_death_ms", SpreadJson(SpreadOf(c.promoted))},
          {"per_run", per_run}};
}

void PrintTable(const std::vector<ModeRuns>& modes, int64_t hold_ms) {
  std::printf("failover of node 0, token lock unreplicated: A and B each hold %lld ms; the master dies at 200 ms\n",
              static_cast<long long>(hold_ms));
  std::printf("ms after the master died: REPLICAOF NO ONE = the replica is master; switch = clients are told\n");
  std::printf("%-11s %-32s %-28s %-28s %s\n", "failover by", "two holders (Wilson 95%)", "overlap ms med [min, max]",
              "REPLICAOF NO ONE ms", "switch ms med [min, max]");
  for (const ModeRuns& m : modes) {
    const Collected c = Collect(m);
    const Interval w = WilsonInterval(c.k, static_cast<int64_t>(m.runs.size()));
    char rate[64];
    std::snprintf(rate, sizeof rate, "%lld of %lld = %.2f [%.2f, %.2f]", static_cast<long long>(c.k),
                  static_cast<long long>(w.n), w.estimate, w.low, w.high);
    std::printf("%-11s %-32s %-28s %-28s %s\n", m.mode.c_str(), rate, SpreadText(SpreadOf(c.overlaps)).c_str(),
                SpreadText(SpreadOf(c.replicaof)).c_str(), SpreadText(SpreadOf(c.promoted)).c_str());
  }
}

Result<std::vector<std::string>> ParseModes(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  for (int i = 0; i < 10 && pos <= text.size(); ++i) {
    size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    const std::string m = text.substr(pos, end - pos);
    if (m != "script" && m != "sentinel") return Status::Invalid("--modes: unknown mode '" + m + "' (script, sentinel)");
    out.push_back(m);
    pos = end + 1;
  }
  return out;
}

// One mode's runs; false (with *error) when a run did not complete.
bool RunMode(const std::string& mode, const FailoverCompareFlags& f, ModeRuns* out, std::string* error) {
  out->mode = mode;
  for (int rep = 1; rep <= f.reps; ++rep) {
    RunSpec spec = FailoverRaceSpec(mode, f.hold_ms, static_cast<uint64_t>(rep));
    if (Status s = ResolveSpec(&spec); !s.ok()) {
      *error = s.message();
      return false;
    }
    const RunResult r = RunOne(spec, false, /*keep_events=*/true);
    if (!r.completed) {
      *error = mode + " run " + std::to_string(rep) + ": " + r.error;
      return false;
    }
    out->runs.push_back(OutcomeOf(r));
    const FailoverOutcome& o = out->runs.back();
    std::fprintf(stderr,
                 "failover-compare: %s %d/%d: %s, overlap %.0f ms; after the master died: REPLICAOF NO ONE %.0f ms, "
                 "switch %.0f ms\n",
                 mode.c_str(), rep, f.reps, o.two_holders ? "two holders" : "one holder", o.overlap_ms,
                 o.replicaof_after_ms, o.promoted_after_ms);
  }
  return true;
}

}  // namespace

RunSpec FailoverRaceSpec(const std::string& failover_by, int64_t hold_ms, uint64_t seed) {
  RunSpec s;
  s.backend = "redis";
  s.failover_by = failover_by;
  s.algorithm = "token";
  s.retry = "fixed";
  s.retry_options.Set("sleep-ms", "50");
  s.replica = true;
  s.clients = 2;
  s.requests = 2;
  s.ttl_ms = 10'000;
  s.seed = seed;
  s.max_duration_ms = 60'000;
  // B works as long as A: the overlap is the whole window from B's entry to A's exit.
  s.client_plans = {ClientPlan{50, 1, hold_ms, -1, false}, ClientPlan{100, 1, hold_ms, 15'000, false}};
  FaultAction f;
  f.kind = FaultAction::Kind::kFailover;
  f.at_us = 0;
  f.target = 0;
  f.duration_us = 200'000;
  s.faults.plan.push_back(f);
  return s;
}

FailoverOutcome OutcomeOf(const RunResult& r) {
  FailoverOutcome o;
  o.two_holders = r.check.safety.max_concurrent_holders >= 2;
  o.overlap_ms = r.check.safety.overlap_ms_total;
  for (const Event& e : r.events) {
    if (e.type != Ev::kFault) continue;
    if (e.detail.rfind(kScriptKill, 0) == 0) o.promoted_after_ms = 0;  // locklab promotes as it kills
    if (e.detail.rfind(kSentinelPromoted, 0) == 0) o.promoted_after_ms = static_cast<double>(e.value) / 1000.0;
  }
  // The runtime's note on a Sentinel failover names each step's time after the master's death.
  const std::string step = "REPLICAOF NO ONE sent after ";
  for (const std::string& n : r.notes) {
    const size_t at = n.find(step);
    if (at != std::string::npos && n.compare(at + step.size(), 3, "not") != 0)
      o.replicaof_after_ms = std::strtod(n.c_str() + at + step.size(), nullptr);
  }
  if (o.promoted_after_ms == 0) o.replicaof_after_ms = 0;  // scripted: at the kill
  return o;
}

FailoverCompareCli::FailoverCompareCli(CLI::App& app)
    : sub_(app.add_subcommand("failover-compare",
                              "real Redis: two holders after a failover promoted by Redis Sentinel vs the scripted one")) {
  sub_->add_option("--reps", flags_.reps, "runs per mode (seeds 1..N, fresh servers each)")->capture_default_str();
  sub_->add_option("--hold-ms", flags_.hold_ms, "how long A works holding the lock it took after the cut, ms")
      ->capture_default_str();
  sub_->add_option("--modes", flags_.modes, "who promotes: script, sentinel or both, comma-separated")
      ->capture_default_str();
  sub_->add_option("--out", flags_.out, "JSON with every run (written whole or not at all)")->type_name("FILE");
  sub_->footer(
      "\nExample:\n  locklab failover-compare --reps 10 --hold-ms 2000 --out results/failover/sentinel-vs-script.json\n"
      "Needs Debian's redis-server and redis-sentinel (make deps). A sentinel run takes 2-4 s.\n"
      "Exit status: 0 done, 1 a run did not complete, 2 bad input.");
}

int FailoverCompareCli::Run(const std::string& command_line) const {
  const FailoverCompareFlags& f = flags_;
  if (f.reps < 1 || f.reps > kMaxReps) return BadInput("--reps must be in [1, " + std::to_string(kMaxReps) + "]");
  if (f.hold_ms < 100 || f.hold_ms > 30'000) return BadInput("--hold-ms must be in [100, 30000]");
  Result<std::vector<std::string>> modes = ParseModes(f.modes);
  if (!modes.ok()) return BadInput(modes.status().message());
  std::vector<ModeRuns> results;
  for (const std::string& mode : *modes) {
    results.emplace_back();
    std::string error;
    if (!RunMode(mode, f, &results.back(), &error)) {
      std::fprintf(stderr, "locklab: failover-compare: %s\n", OneLine(error).c_str());
      return kExitInternal;
    }
  }
  PrintTable(results, f.hold_ms);
  std::printf("replay: %s\n", command_line.c_str());
  if (f.out.empty()) return kExitOk;
  nlohmann::json j = {{"command", command_line}, {"hold_ms", f.hold_ms}, {"reps", f.reps},
                      {"modes", nlohmann::json::array()}};
  for (const ModeRuns& m : results) j["modes"].push_back(ModeJson(m));
  if (Status s = WriteFileAtomic(f.out, j.dump(2) + "\n"); !s.ok()) {
    std::fprintf(stderr, "locklab: %s\n", OneLine(s.message()).c_str());
    return kExitInternal;
  }
  std::printf("wrote %s\n", f.out.c_str());
  return kExitOk;
}

}  // namespace locklab
