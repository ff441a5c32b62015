// `locklab validate`: the agreement rule on hand-made numbers, the JSON's shape, bad flags, and
// the quick version end to end on both backends (structure only: the backends need not agree).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "harness/testing/temp_dir_test.h"
#include "harness/cli/validate.h"
#include "harness/testing/cli_test_util.h"

namespace locklab {
namespace {

SeedSample Means(std::vector<double> v) { return MeanSample(v); }

// A rate sample whose interval is given outright (the overlap rule's edges).
SeedSample RateWithInterval(double low, double estimate, double high) {
  SeedSample s = RateSample({1, 1}, {10, 10});
  s.interval.low = low;
  s.interval.estimate = estimate;
  s.interval.high = high;
  return s;
}

std::string VerdictOf(MetricKind kind, const SeedSample& sim, const SeedSample& real, int64_t requests = 2000) {
  return Judge(kind, sim, real, requests).verdict;
}

TEST(ValidateRule, MeansAgreeWithinTimesOnePointTwoFiveInclusive) {
  const SeedSample real = Means({100, 100, 100});
  EXPECT_EQ(VerdictOf(MetricKind::kMean, Means({125, 125}), real), "agree");
  EXPECT_EQ(VerdictOf(MetricKind::kMean, Means({125.01, 125.01}), real), "disagree");
  EXPECT_EQ(VerdictOf(MetricKind::kMean, Means({80, 80}), real), "agree");  // 100 / 1.25
  EXPECT_EQ(VerdictOf(MetricKind::kMean, Means({79.99, 79.99}), real), "disagree");
  EXPECT_EQ(VerdictOf(MetricKind::kMean, Means({100}), real), "agree");
  // The simulator's own spread does not widen the band: only its mean is judged.
  EXPECT_EQ(VerdictOf(MetricKind::kMean, Means({10, 290}), real), "disagree");
}

TEST(ValidateRule, MeansUseRealRedisSeedRangeWhenItIsWider) {
  const SeedSample real = Means({50, 100, 150});  // band [80, 125], seeds [50, 150]
  EXPECT_EQ(VerdictOf(MetricKind::kMean, Means({150}), real), "agree");
  EXPECT_EQ(VerdictOf(MetricKind::kMean, Means({150.5}), real), "disagree");
  EXPECT_EQ(VerdictOf(MetricKind::kMean, Means({50}), real), "agree");
  EXPECT_EQ(VerdictOf(MetricKind::kMean, Means({49.5}), real), "disagree");
  // Narrow seeds: the x1.25 band is the wider one.
  const SeedSample narrow = Means({99, 100, 101});
  EXPECT_EQ(VerdictOf(MetricKind::kMean, Means({124}), narrow), "agree");
  EXPECT_EQ(VerdictOf(MetricKind::kMean, Means({126}), narrow), "disagree");
  // Zero means: only zero agrees.
  EXPECT_EQ(VerdictOf(MetricKind::kMean, Means({0, 0}), Means({0, 0})), "agree");
  EXPECT_EQ(VerdictOf(MetricKind::kMean, Means({0.1, 0.1}), Means({0, 0})), "disagree");
}

TEST(ValidateRule, FailedRequestsWithinFivePercentOfTheRequests) {
  // 5% of 2000 requests = 100.
  EXPECT_EQ(VerdictOf(MetricKind::kFailed, Means({150, 150}), Means({50, 50})), "agree");
  EXPECT_EQ(VerdictOf(MetricKind::kFailed, Means({150.5, 150.5}), Means({50, 50})), "disagree");
  EXPECT_EQ(VerdictOf(MetricKind::kFailed, Means({0, 0}), Means({100, 100})), "agree");
  EXPECT_EQ(VerdictOf(MetricKind::kFailed, Means({0, 0}), Means({101, 101})), "disagree");
  EXPECT_EQ(VerdictOf(MetricKind::kFailed, Means({0, 0}), Means({101, 101}), 40), "disagree");
  EXPECT_EQ(VerdictOf(MetricKind::kFailed, Means({0, 0}), Means({2, 2}), 40), "agree");
}

TEST(ValidateRule, RatesAgreeWhenTheIntervalsOverlap) {
  EXPECT_EQ(VerdictOf(MetricKind::kRate, RateWithInterval(0, 0.05, 0.1), RateWithInterval(0.1, 0.15, 0.2)), "agree");
  EXPECT_EQ(VerdictOf(MetricKind::kRate, RateWithInterval(0, 0.05, 0.1), RateWithInterval(0.1001, 0.15, 0.2)),
            "disagree");
  EXPECT_EQ(VerdictOf(MetricKind::kRate, RateWithInterval(0.3, 0.4, 0.5), RateWithInterval(0.1, 0.15, 0.2)),
            "disagree");
  EXPECT_EQ(VerdictOf(MetricKind::kRate, RateWithInterval(0, 0.5, 1), RateWithInterval(0.1, 0.15, 0.2)), "agree");
  // From runs: no events anywhere on either side overlaps (both intervals start at 0).
  EXPECT_EQ(VerdictOf(MetricKind::kRate, RateSample({0, 0, 0}, {20, 20, 20}), RateSample({0, 0, 0}, {20, 20, 20})),
            "agree");
  // Every acquisition violated on one side, none on the other, over many trials: apart.
  EXPECT_EQ(VerdictOf(MetricKind::kRate, RateSample({0, 0, 0}, {500, 500, 500}),
                    RateSample({100, 110, 90}, {500, 500, 500})),
            "disagree");
}

TEST(ValidateRule, NotApplicableWhenABackendHasNoData) {
  EXPECT_EQ(VerdictOf(MetricKind::kMean, Means({}), Means({1, 2})), "n/a");
  EXPECT_EQ(VerdictOf(MetricKind::kMean, Means({1, 2}), Means({})), "n/a");
  EXPECT_EQ(VerdictOf(MetricKind::kFailed, Means({}), Means({})), "n/a");
  EXPECT_EQ(VerdictOf(MetricKind::kRate, RateSample({0, 0}, {0, 0}), RateSample({1}, {10})), "n/a");
  EXPECT_FALSE(SimOverReal(MetricKind::kMean, Means({}), Means({1, 2})).estimate.has_value());
}

TEST(ValidateRule, RatioOfMeansWithFiellersInterval) {
  // sim mean 10 (se 0.707), real mean 5 (se 0.354), t(4) = 2.776: Fieller gives [1.508, 2.652].
  const SimRealRatio r =
      SimOverReal(MetricKind::kMean, Means({8, 9, 10, 11, 12}), Means({4, 4.5, 5, 5.5, 6}));
  ASSERT_TRUE(r.estimate && r.low && r.high) << r.method;
  EXPECT_DOUBLE_EQ(*r.estimate, 2);
  EXPECT_NEAR(*r.low, 1.508, 0.005);
  EXPECT_NEAR(*r.high, 2.652, 0.005);
  // Identical seeds: the interval is the point.
  const SimRealRatio same = SimOverReal(MetricKind::kMean, Means({3, 3}), Means({2, 2}));
  ASSERT_TRUE(same.low && same.high);
  EXPECT_DOUBLE_EQ(*same.low, 1.5);
  EXPECT_DOUBLE_EQ(*same.high, 1.5);
  // Real mean not distinguishable from 0: the ratio of means only.
  const SimRealRatio wide = SimOverReal(MetricKind::kMean, Means({1, 1.2}), Means({0.1, 5}));
  ASSERT_TRUE(wide.estimate.has_value());
  EXPECT_FALSE(wide.low.has_value());
  EXPECT_NE(wide.method.find("unbounded"), std::string::npos);
  // One seed: no interval. Real estimate 0: no ratio.
  EXPECT_FALSE(SimOverReal(MetricKind::kMean, Means({1}), Means({2})).low.has_value());
  EXPECT_FALSE(SimOverReal(MetricKind::kMean, Means({1, 1}), Means({0, 0})).estimate.has_value());
  // Rates: the ratio of the estimates, no interval.
  const SimRealRatio rate = SimOverReal(MetricKind::kRate, RateSample({2, 2}, {10, 10}), RateSample({1, 1}, {10, 10}));
  ASSERT_TRUE(rate.estimate.has_value());
  EXPECT_DOUBLE_EQ(*rate.estimate, 2);
  EXPECT_FALSE(rate.low.has_value());
}

TEST(ValidateRule, PooledSittingsGiveAnIntervalOverSittings) {
  // Two sittings of three runs, 1-3 and 10-12: mean 6.5; the sittings' residual sums -13.5 and
  // 13.5, so se = sqrt(2 / 1 * 364.5) / 6 = 4.5 on 1 df (t = 12.71), the low end clamped at 0.
  const SeedSample p = PooledMeanSample({1, 2, 3, 10, 11, 12}, {0, 0, 0, 1, 1, 1});
  EXPECT_DOUBLE_EQ(p.interval.estimate, 6.5);
  EXPECT_DOUBLE_EQ(p.cluster_se, 4.5);
  EXPECT_EQ(p.cluster_df, 1);
  EXPECT_EQ(p.interval.n, 6);
  EXPECT_EQ(p.interval.low, 0);
  EXPECT_NEAR(p.interval.high, 6.5 + 12.706 * 4.5, 0.01);
  EXPECT_EQ(p.interval.method, "cluster-t over 2 sittings");
  EXPECT_GT(p.interval.high, MeanSample({1, 2, 3, 10, 11, 12}).interval.high);  // wider than over runs
  // One sitting: the runs' t interval. The sittings need not be contiguous.
  EXPECT_EQ(PooledMeanSample({1, 2, 4}, {3, 3, 3}).interval.high, MeanSample({1, 2, 4}).interval.high);
  EXPECT_DOUBLE_EQ(PooledMeanSample({1, 10, 2, 11}, {0, 1, 0, 1}).cluster_se, 4.5);
  // A rate: each sitting's events and trials summed, then the cluster ratio over the sittings.
  const SeedSample r = PooledRateSample({1, 0, 3, 3}, {10, 10, 10, 10}, {0, 0, 1, 1});
  const Interval want = ClusterRatioInterval({1, 6}, {20, 20});
  EXPECT_DOUBLE_EQ(r.interval.high, want.high);
  EXPECT_EQ(r.values.size(), 4u);
  // Fieller's ratio with a pooled real side: its sittings' df (1) makes it wider than over runs.
  // Sittings 1-3 and 7-9: over runs t(3) * 1.39 < 5, bounded; over sittings t(1) * 3 > 5, not.
  const SimRealRatio pooled =
      SimOverReal(MetricKind::kMean, MeanSample({6, 7, 8, 9}), PooledMeanSample({1, 2, 3, 7, 8, 9}, {0, 0, 0, 1, 1, 1}));
  const SimRealRatio runs = SimOverReal(MetricKind::kMean, MeanSample({6, 7, 8, 9}), MeanSample({1, 2, 3, 7, 8, 9}));
  EXPECT_FALSE(pooled.low.has_value());  // real's mean within t * se of 0 on 1 df: unbounded
  EXPECT_TRUE(runs.low.has_value());
}

ValidationResult HandMadeResult() {
  ExperimentResult e;
  e.group = "suite";
  e.name = "none/token";
  e.seeds = {1, 2};
  e.runs = {{"sim", 1, true, "", "locklab run --backend sim --seed 1", 0.01},
            {"redis", 1, false, "boom", "locklab run --backend redis --seed 1", 1.5}};
  e.metrics.push_back(JudgeMetric(MetricId::kViolationsPerAcquisition, 200, {Figure{1, 100}, Figure{0, 100}},
                                  {Figure{2, 100}, std::nullopt}));
  e.metrics.push_back(
      JudgeMetric(MetricId::kAcquireP99Ms, 200, {Figure{10, 1}, Figure{12, 1}}, {std::nullopt, std::nullopt}));
  ValidationResult r;
  r.experiments.push_back(e);
  r.all_completed = false;
  return r;
}

TEST(ValidateJson, Shape) {
  ValidateOptions o;
  o.quick = true;
  const nlohmann::json j = ValidationJson(HandMadeResult(), o);
  EXPECT_EQ(j["schema"], "locklab.validation/1");
  for (const char* k : {"version", "sha", "host", "date", "quick", "command"}) EXPECT_TRUE(j["context"].contains(k)) << k;
  EXPECT_EQ(j["rule"]["mean_factor"], 1.25);
  EXPECT_EQ(j["rule"]["failed_fraction_of_requests"], 0.05);
  ASSERT_EQ(j["groups"].size(), 1u);
  const auto& e = j["groups"][0]["experiments"][0];
  EXPECT_EQ(e["name"], "none/token");
  EXPECT_FALSE(e["config"].contains("seed"));
  ASSERT_EQ(e["runs"].size(), 2u);
  EXPECT_EQ(e["runs"][1]["replay"], "locklab run --backend redis --seed 1");
  EXPECT_EQ(e["runs"][1]["completed"], false);
  const auto& viol = e["metrics"][0];
  EXPECT_EQ(viol["name"], "violations_per_acquisition");
  EXPECT_EQ(viol["kind"], "rate");
  for (const char* side : {"sim", "real"})
    for (const char* k : {"estimate", "low", "high", "n", "method", "per_seed"})
      EXPECT_TRUE(viol[side].contains(k)) << side << "." << k;
  EXPECT_EQ(viol["sim"]["n"], 2);
  EXPECT_EQ(viol["real"]["n"], 1);
  EXPECT_EQ(viol["sim"]["per_seed"], nlohmann::json::parse("[0.01, 0.0]"));
  EXPECT_TRUE(viol["real"]["per_seed"][1].is_null());  // the run that gave nothing
  EXPECT_TRUE(viol["ratio"].contains("estimate"));
  EXPECT_TRUE(viol["verdict"] == "agree" || viol["verdict"] == "disagree");
  const auto& p99 = e["metrics"][1];
  EXPECT_EQ(p99["verdict"], "n/a");
  EXPECT_TRUE(p99["real"]["estimate"].is_null());
  EXPECT_EQ(p99["real"]["n"], 0);
  EXPECT_TRUE(p99["ratio"]["estimate"].is_null());
  EXPECT_EQ(j["summary"]["n/a"], 1);
}

TEST(ValidateJson, TableFitsInOneHundredTwentyColumns) {
  const std::string t = ValidationTable(HandMadeResult());
  EXPECT_NE(t.find("none/token"), std::string::npos) << t;
  EXPECT_NE(t.find("n/a"), std::string::npos) << t;
  size_t start = 0;
  for (int line = 0; line < 1000 && start < t.size(); ++line) {
    const size_t end = t.find('\n', start);
    EXPECT_LE((end == std::string::npos ? t.size() : end) - start, 120u) << t;
    if (end == std::string::npos) break;
    start = end + 1;
  }
}

// The canonical set's names are unique per group and every group has experiments.
TEST(ValidateGroups, CanonicalSet) {
  for (bool quick : {false, true}) {
    Result<std::vector<ValidateGroup>> groups = ValidateGroups(quick);
    ASSERT_TRUE(groups.ok()) << groups.status().message();
    ASSERT_EQ(groups->size(), 3u);
    for (const ValidateGroup& g : *groups) {
      std::set<std::string> names;
      for (const ValidateExperiment& e : g.experiments) EXPECT_TRUE(names.insert(e.name).second) << e.name;
      EXPECT_GE(g.experiments.size(), quick ? 2u : 5u) << g.name;
      if (quick) {
        EXPECT_LE(g.experiments.size(), 3u) << g.name;
      }
    }
  }
}

class ValidateCli : public TempDirTest {
 protected:
  ValidateCli() : TempDirTest("locklab_validate_test") {}
};

TEST_F(ValidateCli, BadFlagsExitTwoBeforeAnyRun) {
  const std::string out = (dir_ / "v.json").string();
  EXPECT_EQ(Cli({"validate", "--seeds", "0", "--out", out}), kExitBadInput);
  EXPECT_EQ(Cli({"validate", "--seeds", "many", "--out", out}), kExitBadInput);
  EXPECT_EQ(Cli({"validate", "--only", "nope", "--out", out}), kExitBadInput);
  EXPECT_EQ(Cli({"validate", "--only", "suite,nope", "--out", out}), kExitBadInput);
  EXPECT_EQ(Cli({"validate", "--frobnicate", "--out", out}), kExitBadInput);
  EXPECT_EQ(Cli({"validate", "--out", std::filesystem::temp_directory_path().string()}), kExitBadInput);
  EXPECT_EQ(Cli({"validate", "--real-from", (dir_ / "missing.json").string(), "--out", out}), kExitBadInput);
  EXPECT_FALSE(std::filesystem::exists(dir_));
}

// The redis-server processes this process started and has not reaped (pgrep -P: its children).
std::string OurRedisServers() {
  const std::string cmd = "pgrep -P " + std::to_string(getpid()) + " redis-server";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return "popen failed";
  char buf[256];
  for (int i = 0; i < 1000 && std::fgets(buf, sizeof buf, p) != nullptr; ++i) out += buf;
  pclose(p);
  return out;
}

// A file made before a metric existed (here: the client's CPU taken out of `made`) still serves
// --real-from: that metric has no real figure (n/a), only the simulator's.
void ExpectAMetricTheFileLacksIsNotApplicable(const nlohmann::json& made, const std::filesystem::path& dir) {
  nlohmann::json older = made;
  for (auto& g : older["groups"])
    for (auto& e : g["experiments"]) {
      nlohmann::json kept = nlohmann::json::array();
      for (const auto& m : e["metrics"])
        if (m["name"] != "client_cpu_per_acquisition_us") kept.push_back(m);
      e["metrics"] = kept;
    }
  const std::string older_path = (dir / "older.json").string();
  std::ofstream(older_path) << older.dump();
  const std::string judged = (dir / "judged.json").string();
  ASSERT_EQ(Cli({"validate", "--quick", "--no-progress", "--only", "retry", "--real-from", older_path, "--out", judged}),
            kExitOk);
  const nlohmann::json o = nlohmann::json::parse(ReadAll(judged));
  int client_metrics = 0;
  for (const auto& e : o["groups"][0]["experiments"])
    for (const auto& m : e["metrics"]) {
      if (m["name"] != "client_cpu_per_acquisition_us") continue;
      ++client_metrics;
      EXPECT_EQ(m["verdict"], "n/a") << e["name"];
      EXPECT_GT(m["sim"]["estimate"].get<double>(), 0.0) << e["name"];
    }
  EXPECT_EQ(client_metrics, static_cast<int>(o["groups"][0]["experiments"].size()));
}

// --real-from given twice (here the same file, standing for two sittings), with other seeds
// than it recorded: every recorded real run of each experiment, pooled, and which file each
// came from; the pooled file cannot itself serve as a source.
void ExpectPooledFilesGiveEveryRecordedRun(const nlohmann::json& made, const std::string& made_path,
                                           const std::filesystem::path& dir) {
  const std::string pooled = (dir / "pooled.json").string();
  ASSERT_EQ(Cli({"validate", "--quick", "--no-progress", "--only", "gc-pause", "--seeds", "2", "--real-from", made_path,
                 "--real-from", made_path, "--out", pooled}),
            kExitOk);
  const nlohmann::json p = nlohmann::json::parse(ReadAll(pooled));
  ASSERT_EQ(p["context"]["real_from"].size(), 2u);
  EXPECT_EQ(p["context"]["real_from"][1]["file"], made_path);
  const nlohmann::json* recorded = nullptr;
  for (const auto& g : made["groups"])
    if (g["name"] == "gc-pause") recorded = &g;
  ASSERT_NE(recorded, nullptr);
  for (size_t i = 0; i < p["groups"][0]["experiments"].size(); ++i) {
    const auto& e = p["groups"][0]["experiments"][i];
    const auto& was = (*recorded)["experiments"][i];
    const size_t n = was["seeds"].size();
    EXPECT_EQ(e["seeds"].size(), 2u);
    std::vector<int> sources(n, 0);
    sources.insert(sources.end(), n, 1);
    EXPECT_EQ(e["real_sources"].get<std::vector<int>>(), sources);
    for (size_t m = 0; m < e["metrics"].size(); ++m) {
      const auto& real = e["metrics"][m]["real"];
      auto twice = was["metrics"][m]["real"]["per_seed"];
      for (size_t k = 0; k < n; ++k) twice.push_back(twice[k]);
      EXPECT_EQ(real["per_seed"], twice);
      EXPECT_EQ(e["metrics"][m]["sim"]["per_seed"].size(), 2u);
    }
  }
  EXPECT_EQ(Cli({"validate", "--quick", "--no-progress", "--only", "gc-pause", "--real-from", pooled, "--out",
                 (dir / "from-pooled.json").string()}),
            kExitBadInput);
}

TEST_F(ValidateCli, QuickRunsEveryGroupOnBothBackends) {
  const std::string out = (dir_ / "validation.json").string();
  ASSERT_EQ(Cli({"validate", "--quick", "--no-progress", "--out", out}), kExitOk);
  EXPECT_EQ(OurRedisServers(), "");  // every server it started is stopped
  const nlohmann::json j = nlohmann::json::parse(ReadAll(out));
  EXPECT_EQ(j["schema"], "locklab.validation/1");
  EXPECT_EQ(j["context"]["quick"], true);
  for (const char* when : {"start", "end"}) {  // "1.00 0.50 0.20": three load averages
    const std::string load = j["context"]["load_average"][when].get<std::string>();
    EXPECT_EQ(std::count(load.begin(), load.end(), ' '), 2) << load;
    const auto& wake = j["context"]["wake_late_us"][when];  // real runs were made: the machine's state
    ASSERT_EQ(wake.size(), 2u) << j["context"];
    EXPECT_EQ(wake[0]["sleep_us"], 1000);
    EXPECT_GE(wake[0]["median_us"].get<double>(), 0.0);
  }
  std::set<std::string> groups;
  for (const auto& g : j["groups"]) {
    groups.insert(g["name"].get<std::string>());
    ASSERT_FALSE(g["experiments"].empty());
    for (const auto& e : g["experiments"]) {
      const size_t seeds = e["seeds"].size();
      EXPECT_GE(seeds, 2u);
      EXPECT_EQ(e["runs"].size(), 2 * seeds);
      for (const auto& r : e["runs"]) {
        EXPECT_EQ(r["completed"], true) << r["error"];
        EXPECT_EQ(r["replay"].get<std::string>().rfind("locklab run --backend " + r["backend"].get<std::string>(), 0),
                  0u);
      }
      ASSERT_FALSE(e["metrics"].empty());
      for (const auto& m : e["metrics"]) {
        for (const char* side : {"sim", "real"}) {
          const auto& s = m[side];
          EXPECT_EQ(s["n"], seeds) << e["name"] << " " << m["name"] << " " << side;
          ASSERT_TRUE(s["estimate"].is_number() && s["low"].is_number() && s["high"].is_number())
              << e["name"] << " " << m["name"] << " " << side;
          EXPECT_LE(s["low"].get<double>(), s["estimate"].get<double>() + 1e-9);
          EXPECT_GE(s["high"].get<double>(), s["estimate"].get<double>() - 1e-9);
          EXPECT_FALSE(s["method"].get<std::string>().empty());
          EXPECT_EQ(s["per_seed"].size(), seeds);
        }
        const std::string v = m["verdict"];
        EXPECT_TRUE(v == "agree" || v == "disagree") << v;  // both backends have data in every cell
      }
    }
  }
  EXPECT_EQ(groups, (std::set<std::string>{"retry", "suite", "gc-pause"}));

  // Another profile judged against the real runs just made: none is run again, so the real side
  // is the recorded one to the last digit (runs too), and the context says where it came from.
  const std::string again = (dir_ / "again.json").string();
  ASSERT_EQ(Cli({"validate", "--quick", "--no-progress", "--only", "gc-pause", "--profile", "legacy", "--real-from",
                 out, "--out", again}),
            kExitOk);
  const nlohmann::json k = nlohmann::json::parse(ReadAll(again));
  EXPECT_EQ(k["context"]["real_from"]["file"], out);
  EXPECT_EQ(k["context"]["real_from"]["sha"], j["context"]["sha"]);
  EXPECT_FALSE(k["context"].contains("wake_late_us"));  // no real run made now: no state to record
  const nlohmann::json* first = nullptr;
  for (const auto& g : j["groups"])
    if (g["name"] == "gc-pause") first = &g;
  ASSERT_NE(first, nullptr);
  ASSERT_EQ(k["groups"].size(), 1u);
  const auto& g2 = k["groups"][0];
  ASSERT_EQ(g2["experiments"].size(), (*first)["experiments"].size());
  for (size_t i = 0; i < g2["experiments"].size(); ++i) {
    const auto& a = (*first)["experiments"][i];
    const auto& b = g2["experiments"][i];
    for (size_t m = 0; m < a["metrics"].size(); ++m) EXPECT_EQ(b["metrics"][m]["real"], a["metrics"][m]["real"]);
    std::vector<nlohmann::json> real_a, real_b;
    for (const auto& r : a["runs"])
      if (r["backend"] == "redis") real_a.push_back(r);
    for (const auto& r : b["runs"])
      if (r["backend"] == "redis") real_b.push_back(r);
    EXPECT_EQ(real_b, real_a);
    EXPECT_EQ(b["config"]["profile"], "legacy");
  }

  ExpectAMetricTheFileLacksIsNotApplicable(j, dir_);
  ExpectPooledFilesGiveEveryRecordedRun(j, out, dir_);
}

}  // namespace
}  // namespace locklab
