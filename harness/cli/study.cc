#include "harness/cli/study.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>

#include "algorithms/lock.h"
#include "harness/cli/suite.h"
#include "harness/real/wake_probe.h"
#include "harness/report/report.h"
#include "harness/run/host_info.h"
#include "harness/run/parallel_runs.h"

namespace locklab {
namespace {

// What the study keeps of one run: five numbers.
struct RunFigures {
  bool completed = false;
  std::string error;
  double violations = 0, damage = 0, acquired = 0, p99_acquire_ms = 0;
};

RunFigures Figures(const RunResult& r) {
  RunFigures f;
  f.completed = r.completed;
  f.error = r.error;
  f.violations = static_cast<double>(r.check.safety.violations);
  f.damage = static_cast<double>(r.check.resource.LostOrOversold());
  f.acquired = static_cast<double>(r.check.liveness.acquired);
  f.p99_acquire_ms = r.check.latency.acquire.p99;
  return f;
}

// The cells' base specs (seed 1), resolved: bad input is reported before any run starts.
Result<std::vector<RunSpec>> CellSpecs(const StudyOptions& o, std::vector<StudyCell>* cells) {
  SuiteOptions so;
  so.clients = o.clients;
  so.requests = o.requests;
  so.profile = o.profile;
  std::vector<RunSpec> specs;
  for (const std::string& b : o.backends) {
    for (const SuitePreset& p : SuitePresets()) {
      for (const AlgorithmInfo& a : Algorithms()) {
        RunSpec s = SuiteSpec(so, b, p, a.name);
        LOCKLAB_RETURN_IF_ERROR(ResolveSpec(&s));
        StudyCell c;
        c.replay = ReplayCommand(s);  // seed 1's, made once per cell
        c.backend = b;
        c.preset = p.name;
        c.algorithm = a.name;
        cells->push_back(c);
        specs.push_back(std::move(s));
      }
    }
  }
  return specs;
}

// Per cell, the completed runs' figures in seed order.
struct CellRuns {
  std::vector<double> violations, damage, acquired, p99_ms;
};

// block_runs > 0: also predict what a block of that many runs should show (the real block).
void Summarise(const CellRuns& runs, int block_runs, StudyCell* c) {
  c->violations_per_acq = ClusterRatioInterval(runs.violations, runs.acquired);
  c->damage_per_acq = ClusterRatioInterval(runs.damage, runs.acquired);
  if (block_runs > 0) {
    c->violations_pred = PredictBlock(runs.violations, runs.acquired, block_runs);
    c->damage_pred = PredictBlock(runs.damage, runs.acquired, block_runs);
  }
  c->acquisitions = MeanInterval(runs.acquired);
  c->p99_acquire_ms = MeanInterval(runs.p99_ms);
  for (size_t i = 0; i < runs.acquired.size(); ++i) {
    c->acquisitions_total += static_cast<int64_t>(runs.acquired[i]);
    c->violations_total += static_cast<int64_t>(runs.violations[i]);
    c->damage_total += static_cast<int64_t>(runs.damage[i]);
  }
}

std::string Eta(double elapsed_s, size_t done, size_t total) {
  if (done == 0) return "?";
  const double left = elapsed_s / static_cast<double>(done) * static_cast<double>(total - done);
  return std::to_string(static_cast<long long>(left + 0.5)) + " s";
}

// Runs one backend's cells x seeds (cell-major, then seed) on `jobs` threads.
void RunBackend(const StudyOptions& o, const std::vector<RunSpec>& specs, size_t first_cell, size_t cells_n,
                int seeds, int jobs, StudyResult* out) {
  const auto per_cell = static_cast<size_t>(seeds);
  const size_t total = cells_n * per_cell;
  std::vector<CellRuns> runs(cells_n);
  // Simulator cells of a study with real Redis too: each predicts what the real block should show.
  const bool with_redis = std::find(o.backends.begin(), o.backends.end(), "redis") != o.backends.end();
  const auto t0 = std::chrono::steady_clock::now();
  auto run = [&](size_t i) {
    RunSpec s = specs[first_cell + i / per_cell];
    s.seed = 1 + i % per_cell;
    return Figures(RunOne(s, false));
  };
  auto consume = [&](size_t i, RunFigures&& f) {
    const size_t ci = i / per_cell;
    StudyCell& c = out->cells[first_cell + ci];
    ++c.runs;
    if (f.completed) {
      ++c.completed;
      runs[ci].violations.push_back(f.violations);
      runs[ci].damage.push_back(f.damage);
      runs[ci].acquired.push_back(f.acquired);
      runs[ci].p99_ms.push_back(f.p99_acquire_ms);
    } else {
      out->all_completed = false;
      if (c.first_error.empty()) c.first_error = "seed " + std::to_string(1 + i % per_cell) + ": " + f.error;
    }
    if ((i + 1) % per_cell != 0) return;  // the cell has seeds still to come
    Summarise(runs[ci], c.backend == "sim" && with_redis ? o.redis_seeds : 0, &c);
    if (o.progress) {
      const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr, "[%zu/%zu] %s %-10s %-13s %d seeds: %lld violations in %lld acquisitions; elapsed %.0f s, ETA %s\n",
                   ci + 1, cells_n, c.backend.c_str(), c.preset.c_str(), c.algorithm.c_str(), seeds,
                   static_cast<long long>(c.violations_total), static_cast<long long>(c.acquisitions_total), el,
                   Eta(el, i + 1, total).c_str());
    }
  };
  RunInOrder<RunFigures>(total, jobs, 8 * static_cast<size_t>(std::max(jobs, 1)), run, consume);
}

// MachineNowJson()'s figures under `when` ("start" or "end") in StudyResult::redis_machine's shape.
void RecordMachine(const char* when, nlohmann::ordered_json* machine) {
  nlohmann::ordered_json now = MachineNowJson();
  (*machine)["load_average"][when] = std::move(now["load_average"]);
  (*machine)["wake_late_us"][when] = std::move(now["wake_late_us"]);
}

}  // namespace

Result<StudyResult> RunStudy(const StudyOptions& o) {
  StudyResult out;
  Result<std::vector<RunSpec>> specs = CellSpecs(o, &out.cells);
  if (!specs.ok()) return specs.status();
  const bool reuse = !o.redis_from.empty();
  if (reuse) LOCKLAB_RETURN_IF_ERROR(ReuseRedisCells(o, &out));  // before any run: bad input first
  const size_t per_backend = SuitePresets().size() * Algorithms().size();
  for (size_t bi = 0; bi < o.backends.size(); ++bi) {
    if (o.backends[bi] == "sim") {
      RunBackend(o, *specs, bi * per_backend, per_backend, o.sim_seeds, o.jobs, &out);
      continue;
    }
    if (reuse) continue;
    nlohmann::ordered_json machine = {{"start_utc", UtcNowText()}};
    RecordMachine("start", &machine);
    RunBackend(o, *specs, bi * per_backend, per_backend, o.redis_seeds, o.redis_jobs, &out);
    RecordMachine("end", &machine);
    out.redis_machine = std::move(machine);
  }
  return out;
}

}  // namespace locklab
