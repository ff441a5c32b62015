#include "harness/cli/suite.h"

#include <cstdio>
#include <map>

#include "algorithms/lock.h"
#include "harness/real/wake_probe.h"
#include "harness/report/report.h"
#include "harness/report/text_table.h"
#include "harness/run/parallel_runs.h"

namespace locklab {

const std::vector<SuitePreset>& SuitePresets() {
  // Each preset is sized against ttl_ms = 1000 so that the fault matters: pauses and skew
  // longer than the TTL are what break TTL- and clock-based locks.
  static const std::vector<SuitePreset> all = {
      {"none", "no faults", [](RunSpec*) {}},
      {"gc-pause", "stop-the-world pauses of 1500 ms (> ttl 1000 ms), 0.5 per client per second",
       [](RunSpec* s) {
         s->ttl_ms = 1000;
         s->faults.gc_pause_ms = 1500;
         s->faults.gc_pause_rate = 0.5;
       }},
      {"net-delay", "one-way network delay, mean 5 ms, long-tailed",
       [](RunSpec* s) {
         s->faults.net_delay_ms = 5;
         s->faults.net_dist = "long-tail";
       }},
      {"clock-skew", "client wall clocks offset by up to +-3000 ms (> ttl 1000 ms)",
       [](RunSpec* s) {
         s->ttl_ms = 1000;
         s->faults.clock_skew_ms = 3000;
       }},
  };
  return all;
}

RunSpec SuiteSpec(const SuiteOptions& o, const std::string& backend, const SuitePreset& p,
                  const std::string& algorithm) {
  RunSpec s;
  s.backend = backend;
  s.redis = backend == "redis" ? o.redis : std::vector<std::string>{};
  s.algorithm = algorithm;
  s.workload = "counter";
  s.clients = o.clients;
  s.requests = o.requests;
  s.hold_ms = 20;
  s.ttl_ms = 1000;
  s.seed = o.seed;
  SetSimProfile(&s, o.profile);
  s.trace = o.trace;
  // The lock-free baselines sell stock kept in Redis: the seckill workload, one unit per request.
  if (const AlgorithmInfo* a = FindAlgorithm(algorithm); a != nullptr && a->lock_free) {
    s.workload = "seckill";
    s.stock = o.requests;
  }
  p.apply(&s);
  return s;
}

std::string SuiteReportPath(const SuiteOptions& o, const std::string& backend, const SuitePreset& p) {
  return o.out_dir + "/suite-" + backend + "/" + p.name + ".json";
}

namespace {

using SpecGrid = std::vector<std::vector<std::vector<RunSpec>>>;  // [backend][preset][algorithm]

// Every cell resolved first: bad input is reported before any run starts.
Result<SpecGrid> ResolveSuite(const SuiteOptions& o) {
  SpecGrid specs;
  for (const std::string& b : o.backends) {
    specs.emplace_back();
    for (const SuitePreset& p : SuitePresets()) {
      specs.back().emplace_back();
      for (const AlgorithmInfo& a : Algorithms()) {
        RunSpec s = SuiteSpec(o, b, p, a.name);
        LOCKLAB_RETURN_IF_ERROR(ResolveSpec(&s));
        specs.back().back().push_back(s);
      }
    }
  }
  return specs;
}

// Runs every cell, writes one report per (backend, preset). groups: one per backend x preset, in
// column order. false when a run did not complete or a report could not be written. With
// o.jobs > 1 (simulator only) the cells run on that many threads; progress lines, reports and
// table come in the same order and bytes as with one.
bool RunGroups(const SuiteOptions& o, const SpecGrid& specs, std::vector<std::vector<RunResult>>* groups) {
  const auto& presets = SuitePresets();
  const size_t per_group = Algorithms().size();
  std::vector<const RunSpec*> cells;  // backend-major, then preset, then algorithm
  for (const auto& by_preset : specs)
    for (const auto& group : by_preset)
      for (const RunSpec& s : group) cells.push_back(&s);
  const size_t total = cells.size();
  int jobs = o.jobs;
  for (const std::string& b : o.backends)
    if (b != "sim") jobs = 1;  // real servers: one run at a time
  bool ok = true;
  groups->reserve(o.backends.size() * presets.size());
  auto consume = [&](size_t i, RunResult&& r) {
    const size_t bi = i / (presets.size() * per_group), pi = i / per_group % presets.size();
    const RunSpec& s = *cells[i];
    if (i % per_group == 0) groups->emplace_back();
    std::vector<RunResult>& results = groups->back();
    if (o.progress)
      std::fprintf(stderr, "[%*zu/%zu] %s %-10s %-13s %s: %lld violations, %lld acquired%s\n",
                   static_cast<int>(std::to_string(total).size()), i + 1, total, s.backend.c_str(),
                   presets[pi].name.c_str(), s.algorithm.c_str(), r.completed ? "done" : "FAILED",
                   static_cast<long long>(r.check.safety.violations),
                   static_cast<long long>(r.check.liveness.acquired),
                   r.completed ? "" : (" (" + r.error + ")").c_str());
    if (!r.completed) ok = false;
    results.push_back(std::move(r));
    if (results.size() < per_group) return;
    const std::string path = SuiteReportPath(o, o.backends[bi], presets[pi]);
    // The runs printed as `locklab run` prints a sweep's (RunText: timelines written as text).
    nlohmann::json report = BuildReportHead(results, MakeReportContext(results));
    if (o.backends[bi] == "redis") report["context"]["machine_after"] = MachineNowJson();  // as `locklab run`'s
    if (Status st = WriteFileAtomic(path, ReportTextWithRuns(report, std::span<const RunResult>(results))); !st.ok()) {
      std::fprintf(stderr, "locklab: %s\n", st.message().c_str());
      ok = false;
    } else if (o.progress) {
      std::fprintf(stderr, "report: %s\n", path.c_str());
    }
  };
  RunInOrder(total, jobs, 8 * static_cast<size_t>(std::max(jobs, 1)),
             [&](size_t i) { return RunOne(*cells[i], false); }, consume);
  return ok;
}

void PrintSuiteTable(const SuiteOptions& o, const std::vector<std::vector<RunResult>>& groups, std::ostream& out) {
  const auto& algs = Algorithms();
  const auto& presets = SuitePresets();
  std::vector<std::vector<const RunResult*>> cells(algs.size());  // [algorithm][group]
  for (auto& g : groups)
    for (size_t ai = 0; ai < g.size(); ++ai) cells[ai].push_back(&g[ai]);
  constexpr size_t kCells = 4;  // figures per (backend, preset) group
  std::vector<std::string> header = {"algorithm"};
  const bool many_backends = o.backends.size() > 1;
  for (size_t g = 0; g < groups.size(); ++g)
    for (const char* h : {"viol", "lost", "acq", "p99 ms"}) header.push_back(h);
  TextTable t(header);
  for (size_t bi = 0, g = 0; bi < o.backends.size(); ++bi)
    for (size_t pi = 0; pi < presets.size(); ++pi, ++g)
      t.AddGroup(many_backends ? o.backends[bi] + "/" + presets[pi].name : presets[pi].name, 1 + kCells * g, kCells);
  bool any_incomplete = false;
  for (size_t ai = 0; ai < algs.size(); ++ai) {
    std::vector<std::string> row = {algs[ai].name};
    for (const RunResult* r : cells[ai]) {
      const std::string mark = r->completed ? "" : "*";  // figures of a cut-short run are partial
      any_incomplete = any_incomplete || !r->completed;
      row.push_back(std::to_string(r->check.safety.violations) + mark);
      row.push_back(std::to_string(r->check.resource.LostOrOversold()) + mark);
      row.push_back(std::to_string(r->check.liveness.acquired) + mark);
      row.push_back(Fixed(r->check.latency.acquire.p99, 1) + mark);
    }
    t.AddRow(row);
  }
  out << "locklab suite: " << o.clients << " clients, " << o.requests << " requests, counter workload, hold 20 ms, "
      << "ttl 1000 ms, seed " << o.seed << "\n\n"
      << t.ToString() << "\n";
  out << "viol = mutual-exclusion violations, lost = lost updates (damage to the counter; fencing rejects stale\n"
         "writes instead), acq = acquisitions, p99 ms = 99th percentile acquire latency\n"
         "lockfree-* take no lock: they run the seckill workload with stock = requests (lost = oversold,\n"
         "acq = sales attempted, p99 = one sale)\n";
  for (const SuitePreset& p : presets) out << "  " << p.name << ": " << p.summary << "\n";
  if (any_incomplete) out << "* the run did not complete (see the report's \"error\"); its figures are partial\n";
  out << "reports: ";
  for (size_t bi = 0; bi < o.backends.size(); ++bi)
    out << (bi ? ", " : "") << o.out_dir << "/suite-" << o.backends[bi] << "/";
  out << "\n";
}

}  // namespace

Status RunSuite(const SuiteOptions& o, std::ostream& out) {
  Result<SpecGrid> specs = ResolveSuite(o);
  if (!specs.ok()) return specs.status();
  std::vector<std::vector<RunResult>> groups;
  const bool ok = RunGroups(o, *specs, &groups);
  if (!o.quiet) PrintSuiteTable(o, groups, out);
  return ok ? Status::Ok() : Status::Failed("a run did not complete or a report could not be written (see stderr)");
}

}  // namespace locklab
