// `locklab study`: bad flags before any run, a small study's JSON (every cell, its intervals),
// the same bytes for any --jobs, and rates that separate a broken cell from a safe one.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <fstream>
#include <sstream>

#include "algorithms/lock.h"
#include "harness/cli/study.h"
#include "harness/cli/suite.h"
#include "harness/real/wake_probe.h"
#include "harness/report/known_gaps.h"
#include "harness/run/build_info.h"
#include "harness/testing/cli_test_util.h"
#include "harness/testing/temp_dir_test.h"
#include "harness/testing/test_specs.h"

namespace locklab {
namespace {

class StudyCli : public TempDirTest {
 protected:
  StudyCli() : TempDirTest("locklab_study_test") {}
  // A small simulator study: 3 clients, 30 requests, `seeds` seeds.
  // Under the profile the seeds were chosen with (RatesSeparateABrokenCellFromASafeOne needs the
  // paused cell's 20 small seeds to show enough violations for an interval clear of 0).
  int Small(const std::string& out, int seeds, int jobs) {
    return Cli({"study", "--backend", "sim", "--seeds", std::to_string(seeds), "--clients", "3", "--requests", "30",
                "--jobs", std::to_string(jobs), "--profile", SeedsChosenProfile(), "--out", out, "--quiet",
                "--no-progress"});
  }
};

TEST_F(StudyCli, BadFlagsAreOneLineBeforeAnyRun) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"study", "--backend", "mars"}, {"study", "--seeds", "0"}, {"study", "--redis-jobs", "99"},
        {"study", "--backend", "sim", "--out", "/proc/locklab/no/such.json"},
        {"study", "--backend", "sim", "--profile", "/no/such/profile.json", "--out", Path("x.json")}}) {
    testing::internal::CaptureStderr();
    EXPECT_EQ(Cli(args), kExitBadInput) << args.back();
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
  EXPECT_FALSE(std::filesystem::exists(Path("x.json")));
}

TEST_F(StudyCli, EveryCellWithItsIntervalsAndTheSameBytesForAnyJobs) {
  ASSERT_EQ(Small(Path("one.json"), 6, 1), kExitOk);
  ASSERT_EQ(Small(Path("three.json"), 6, 3), kExitOk);
  nlohmann::json one = nlohmann::json::parse(ReadAll(Path("one.json")));
  nlohmann::json three = nlohmann::json::parse(ReadAll(Path("three.json")));
  one["context"].erase("command");
  three["context"].erase("command");
  EXPECT_EQ(one.dump(), three.dump());
  EXPECT_EQ(one["schema"], kStudySchema);
  ASSERT_EQ(one["cells"].size(), 4 * Algorithms().size());  // 4 presets x every algorithm
  for (const auto& c : one["cells"]) {
    EXPECT_EQ(c["runs"], 6);
    EXPECT_EQ(c["completed"], 6);
    for (const char* k : {"violations_per_acquisition", "damage_per_acquisition"}) {
      const auto& i = c[k];
      EXPECT_LE(i["low"].get<double>(), i["estimate"].get<double>()) << c["algorithm"] << " " << k;
      EXPECT_LE(i["estimate"].get<double>(), i["high"].get<double>()) << c["algorithm"] << " " << k;
      EXPECT_EQ(i["n"], 6);
      EXPECT_FALSE(i["method"].get<std::string>().empty());
    }
    EXPECT_NE(c["replay"].get<std::string>().find("--seed"), std::string::npos);
  }
}

TEST_F(StudyCli, TheTableFitsIn120Columns) {
  testing::internal::CaptureStdout();
  ASSERT_EQ(Cli({"study", "--backend", "sim", "--seeds", "2", "--clients", "3", "--requests", "10", "--out",
                 Path("t.json"), "--no-progress"}),
            kExitOk);
  const std::string table = testing::internal::GetCapturedStdout();
  std::istringstream lines(table);
  int n = 0;
  for (std::string line; std::getline(lines, line); ++n) EXPECT_LE(line.size(), 120u) << line;
  EXPECT_GT(n, 2 * static_cast<int>(Algorithms().size()));  // two blocks, a line per algorithm
  EXPECT_NE(table.find("gc-pause"), std::string::npos);
}

TEST_F(StudyCli, RatesSeparateABrokenCellFromASafeOne) {
  ASSERT_EQ(Small(Path("s.json"), 20, 2), kExitOk);
  const nlohmann::json j = nlohmann::json::parse(ReadAll(Path("s.json")));
  auto cell = [&](const std::string& preset, const std::string& alg) {
    for (const auto& c : j["cells"])
      if (c["preset"] == preset && c["algorithm"] == alg) return c;
    return nlohmann::json();
  };
  // Pauses longer than the TTL let a second holder in with the token lock; nothing does so
  // without faults. The intervals do not overlap: the study tells the two apart.
  const auto paused = cell("gc-pause", "token")["violations_per_acquisition"];
  const auto calm = cell("none", "token")["violations_per_acquisition"];
  EXPECT_GT(paused["low"].get<double>(), calm["high"].get<double>());
  EXPECT_EQ(calm["estimate"].get<double>(), 0.0);
  EXPECT_GT(calm["high"].get<double>(), 0.0);  // 0 events still has an upper bound
  // Fencing: pauses still overlap holders, but the resource is not damaged.
  EXPECT_EQ(cell("gc-pause", "fencing")["damage_total"], 0);
}

// --redis-from: the committed study's real-Redis cells come back as they were recorded, next to a
// new simulator block, without a real run; a file that does not match is refused before any run.
TEST_F(StudyCli, RedisFromReusesTheRecordedRealCells) {
  const std::string committed = std::string(SourceDir()) + "/results/study/study.json";
  const nlohmann::json before = nlohmann::json::parse(ReadAll(committed));
  const int seeds = before["context"]["seeds"]["redis"].get<int>();
  const auto reuse = [&](std::vector<std::string> extra, int redis_seeds) {
    std::vector<std::string> args = {"study", "--seeds", "1", "--redis-seeds", std::to_string(redis_seeds), "--redis-from",
                                     committed, "--out", Path("r.json"), "--quiet", "--no-progress", "--jobs", "2"};
    args.insert(args.end(), extra.begin(), extra.end());
    return Cli(args);
  };
  ASSERT_EQ(reuse({}, seeds), kExitOk) << "the committed study no longer matches the cells' configurations: make it again";
  const nlohmann::json after = nlohmann::json::parse(ReadAll(Path("r.json")));
  size_t real = 0;
  // A real cell's "within_prediction" is a verdict against the new simulator block, and its
  // "known_gap" this build's list (known_gaps.h): neither is a record.
  const auto recorded = [](nlohmann::json c) {
    c.erase("within_prediction");
    c.erase("known_gap");
    return c.dump();
  };
  for (const auto& c : before["cells"]) {
    if (c["backend"] != "redis") continue;
    ++real;
    bool found = false;
    for (const auto& d : after["cells"])
      if (d["backend"] == "redis" && d["preset"] == c["preset"] && d["algorithm"] == c["algorithm"]) {
        EXPECT_EQ(recorded(d), recorded(c)) << c["preset"] << "/" << c["algorithm"];
        found = true;
      }
    EXPECT_TRUE(found) << c["preset"] << "/" << c["algorithm"];
  }
  EXPECT_EQ(real, 4 * Algorithms().size());
  EXPECT_EQ(after["context"]["redis_from"], committed);
  EXPECT_EQ(after["context"].contains("redis_machine"), before["context"].contains("redis_machine"));
  std::filesystem::remove(Path("r.json"));
  // What --redis-from is for: another profile's simulator block. A real cell's replay names no
  // profile (a real run does not use one), so the recorded cells still match.
  EXPECT_EQ(reuse({"--profile", "legacy"}, seeds), kExitOk);
  std::filesystem::remove(Path("r.json"));
  // The machine's state recorded around a real block travels with its cells.
  nlohmann::json with_machine = before;
  with_machine["context"]["redis_machine"] = {{"start_utc", "2026-11-28T21:00:00Z"}, {"wake_late_us", {{"start", 1}}}};
  std::ofstream(Path("m.json")) << with_machine.dump();
  ASSERT_EQ(Cli({"study", "--seeds", "1", "--redis-seeds", std::to_string(seeds), "--redis-from", Path("m.json"),
                 "--out", Path("r.json"), "--quiet", "--no-progress", "--jobs", "2"}),
            kExitOk);
  EXPECT_EQ(nlohmann::json::parse(ReadAll(Path("r.json")))["context"]["redis_machine"],
            with_machine["context"]["redis_machine"]);
  std::filesystem::remove(Path("r.json"));
  const std::vector<std::pair<std::vector<std::string>, int>> bad_inputs = {
      {{}, seeds + 1},                 // other real seeds
      {{"--clients", "3"}, seeds},     // another configuration
      {{"--backend", "sim"}, seeds}};  // nothing to reuse
  for (const auto& [bad, redis_seeds] : bad_inputs) {
    testing::internal::CaptureStderr();
    EXPECT_EQ(reuse(bad, redis_seeds), kExitBadInput) << redis_seeds;
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_NE(err.find("--redis-from"), std::string::npos) << err;
  }
  EXPECT_FALSE(std::filesystem::exists(Path("r.json")));
}

// A completed cell of `backend` (500 simulator seeds, 4 real) whose violation rate is the middle
// of [low, high], its cluster-t interval.
StudyCell Cell(const std::string& backend, const std::string& preset, const std::string& algorithm, double low,
               double high) {
  StudyCell c;
  c.backend = backend;
  c.preset = preset;
  c.algorithm = algorithm;
  c.runs = c.completed = backend == "sim" ? 500 : 4;
  c.violations_per_acq = Interval{(low + high) / 2, low, high, c.runs, "cluster-t"};
  return c;
}

// With both backends the table ends by naming the rates where real Redis falls outside the
// simulator's prediction for its seed count, whatever the two intervals say.
TEST(StudyTable, NamesTheRatesOutsideTheSimulatorsPrediction) {
  StudyOptions o;
  o.backends = {"sim", "redis"};
  o.redis_seeds = 4;
  o.sim_seeds = 500;
  StudyResult r;
  auto add = [&r](const std::string& backend, const std::string& alg, double low, double high) {
    StudyCell c = Cell(backend, "gc-pause", alg, low, high);
    c.damage_per_acq = Interval{0, 0, 0.001, c.runs, "wilson"};
    if (backend == "sim") {
      c.violations_pred = Prediction{4, 500, 10000, 0.004, 0.1, 0.04, 0.8, "resampled runs", true};
      c.damage_pred = Prediction{4, 500, 10000, 0, 0, 0, 1, "resampled runs", true};
    }
    r.cells.push_back(c);
  };
  add("sim", "token", 0.035, 0.043);
  add("sim", "watchdog", 0.035, 0.043);
  add("redis", "token", 0.004, 0.006);     // intervals apart, inside the prediction [0.004, 0.1]
  add("redis", "watchdog", 0.11, 0.15);    // outside the prediction
  const std::string table = StudyTable(r, o);
  EXPECT_NE(table.find("Where real Redis falls outside the simulator's prediction for 4 seeds"), std::string::npos)
      << table;
  EXPECT_NE(table.find("of the 4 comparisons where the two should agree\n(cells x violations, damage): 1\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("  gc-pause/watchdog violations: real 0.13 [0.11,0.15]; simulated 0.039, range for 4 seeds "
                       "[0.004,0.1]\n"),
            std::string::npos)
      << table;
  EXPECT_EQ(table.find("  gc-pause/token violations:"), std::string::npos) << table;
  // Two violation rates at 0.04 by chance each, the all-zero damage never.
  EXPECT_NE(table.find("about 0.1 would fall outside"), std::string::npos) << table;
  EXPECT_NE(table.find("intervals miss each other in 2;"), std::string::npos) << table;
  EXPECT_NE(table.find("as few as 80% of the simulator's draws (gc-pause/token violations)"), std::string::npos) << table;
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 120u) << line;
  r.cells[3].violations_per_acq.estimate = 0.1;  // on the bound: inside
  EXPECT_NE(StudyTable(r, o).find("(cells x violations, damage): none"), std::string::npos);
  // The machine's state around the real block, when recorded: two lines, in 120 columns.
  EXPECT_EQ(StudyTable(r, o).find("The machine around"), std::string::npos);
  const nlohmann::ordered_json rows = WakeLatenessJson({{1000, 20, 58.4, 71}, {5000, 20, 60, 80}});
  r.redis_machine = {{"start_utc", "2026-11-28T21:00:00Z"},
                     {"load_average", {{"start", "0.50 0.40 0.30"}, {"end", "1.50 0.60 0.35"}}},
                     {"wake_late_us", {{"start", rows}, {"end", rows}}}};
  const std::string with = StudyTable(r, o);
  EXPECT_NE(with.find("  before: 1 ms sleeps woke 58 µs late (median; p90 71), 5 ms 60 (p90 80); load 0.50 0.40 0.30\n"),
            std::string::npos)
      << with;
  EXPECT_NE(with.find("  after: 1 ms sleeps"), std::string::npos) << with;
  std::istringstream with_lines(with);
  for (std::string line; std::getline(with_lines, line);) EXPECT_LE(line.size(), 120u) << line;
  EXPECT_EQ(StudyJson(r, o)["context"]["redis_machine"]["start_utc"], "2026-11-28T21:00:00Z");
  r.redis_machine["wake_late_us"]["start"] = 1;  // a record of another shape (an edited file): no lines, no crash
  EXPECT_EQ(StudyTable(r, o).find("The machine around"), std::string::npos);
  o.backends = {"sim"};
  EXPECT_EQ(StudyTable(r, o).find("Where real Redis falls outside"), std::string::npos);
  EXPECT_EQ(StudyTable(r, o).find("The machine around"), std::string::npos);
}

// A rate outside the prediction in one of the simulator's known gaps is listed apart, with its
// cause, and counts neither as a disagreement nor in the chance sum; the JSON names the gap.
TEST(StudyTable, ListsAKnownGapApartWithItsCause) {
  StudyOptions o;
  o.backends = {"sim", "redis"};
  StudyResult r;
  for (const std::string backend : {"sim", "redis"}) {
    const double v = backend == "sim" ? 0.068 : 0.026;  // real below the range, as measured
    StudyCell c = Cell(backend, "clock-skew", "timestamp", v - 0.005, v + 0.005);
    c.damage_per_acq = c.violations_per_acq;
    if (backend == "sim") c.violations_pred = c.damage_pred = Prediction{4, 500, 10000, 0.039, 0.105, 0.05, 0.9, "resampled runs", true};
    r.cells.push_back(c);
  }
  const std::string table = StudyTable(r, o);
  EXPECT_NE(table.find("of the 0 comparisons where the two should agree\n(cells x violations, damage): none\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("about 0.0 would fall outside"), std::string::npos) << table;
  EXPECT_NE(table.find("In the 2 comparisons of the simulator's known gaps"), std::string::npos) << table;
  EXPECT_NE(table.find("): 2 outside\n  clock-skew/timestamp violations: real 0.026"), std::string::npos) << table;
  EXPECT_NE(table.find("    (the simulator hands the lock over more often"), std::string::npos) << table;
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 120u) << line;
  const nlohmann::ordered_json j = StudyJson(r, o);
  for (const auto& c : j["cells"]) {
    EXPECT_EQ(c["known_gap"]["rates"].size(), 2u);
    EXPECT_NE(c["known_gap"]["why"].get<std::string>().find("hands the lock over"), std::string::npos);
  }
  r.cells[0].preset = r.cells[1].preset = "gc-pause";  // no gap there: a disagreement like any other
  EXPECT_NE(StudyTable(r, o).find("(cells x violations, damage): 2\n"), std::string::npos);
  EXPECT_FALSE(StudyJson(r, o)["cells"][0].contains("known_gap"));
}

// Every known gap names a suite preset and an algorithm the study runs, and a cause.
TEST(KnownGaps, NameCellsOfTheStudy) {
  for (const KnownGap& g : KnownGaps()) {
    const auto& presets = SuitePresets();
    EXPECT_TRUE(std::any_of(presets.begin(), presets.end(), [&g](const SuitePreset& p) { return p.name == g.preset; }))
        << g.preset;
    EXPECT_TRUE(FindAlgorithm(std::string(g.algorithm)) != nullptr) << g.algorithm;
    EXPECT_TRUE(g.violations || g.damage) << g.preset << "/" << g.algorithm;
    EXPECT_FALSE(g.why.empty());
    EXPECT_LE(g.why.size(), 114u);  // one table line with its indent and brackets
  }
}

// The JSON carries each simulator cell's prediction and each real cell's verdict.
TEST(StudyJson, CarriesThePredictionAndTheVerdict) {
  StudyOptions o;
  o.backends = {"sim", "redis"};
  StudyResult r;
  StudyCell sim, real;
  sim.backend = "sim";
  real.backend = "redis";
  sim.preset = real.preset = "gc-pause";
  sim.algorithm = real.algorithm = "token";
  sim.runs = sim.completed = 500;
  real.runs = real.completed = 4;
  sim.violations_pred = Prediction{4, 500, 10000, 0.1, 0.3, 0.05, 0.9, "resampled runs", true};
  sim.damage_pred = Prediction{4, 500, 10000, 0.005, 0.1, 0.05, 0.8, "resampled runs", true};
  real.violations_per_acq.estimate = 0.2;
  real.damage_per_acq.estimate = 0.004;
  r.cells = {sim, real};
  const nlohmann::ordered_json j = StudyJson(r, o);
  const auto& p = j["cells"][0]["prediction"];
  EXPECT_EQ(p["block_runs"], 4);
  EXPECT_EQ(p["method"], "resampled runs");
  EXPECT_EQ(p["damage_per_acquisition"]["cluster_t_coverage"], 0.8);
  EXPECT_FALSE(j["cells"][0].contains("within_prediction"));
  EXPECT_EQ(j["cells"][1]["within_prediction"]["violations_per_acquisition"], true);
  EXPECT_EQ(j["cells"][1]["within_prediction"]["damage_per_acquisition"], false);
  EXPECT_FALSE(j["cells"][1].contains("prediction"));
}

}  // namespace
}  // namespace locklab
