// `locklab map`: bad input before any run, the same bytes for any --jobs, and the adaptive
// stopping rule stopping where it should (not before, not after).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "harness/cli/map.h"
#include "harness/testing/cli_test_util.h"
#include "harness/testing/temp_dir_test.h"

namespace locklab {
namespace {

class MapCli : public TempDirTest {
 protected:
  MapCli() : TempDirTest("locklab_map_test") {}
  int Map(std::vector<std::string> args) {
    args.insert(args.begin(), "map");
    for (const char* a : {"--quiet", "--no-progress"}) args.push_back(a);
    return Cli(args);
  }
  nlohmann::json Read(const std::string& file) { return nlohmann::json::parse(ReadAll(Path(file))); }
};

TEST_F(MapCli, BadInputIsOneLineBeforeAnyRun) {
  const std::string out = Path("x.json");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"map"},
        {"map", "no-such-map", "--out", out},
        {"map", "pause-ttl", "--batch", "0", "--out", out},
        {"map", "pause-ttl", "--max-seeds", "-3", "--out", out},
        {"map", "pause-ttl", "--precision", "0", "--out", out},
        {"map", "pause-ttl", "--precision", "nan", "--out", out},
        {"map", "pause-ttl", "--floor", "1.5", "--out", out},
        {"map", "pause-ttl", "--x", "0.5,abc", "--out", out},
        {"map", "pause-ttl", "--x", "-1", "--out", out},
        {"map", "pause-ttl", "--curve", "no such curve", "--out", out},
        {"map", "pause-ttl", "--backend", "mars", "--out", out},
        {"map", "pause-ttl", "--jobs", "0", "--out", out},
        {"map", "pause-ttl", "--requests", "0", "--out", out},
        {"map", "pause-ttl", "--profile", "/no/such/profile.json", "--out", out},
        {"map", "pause-ttl", "--out", "/proc/locklab/no/such.json"}}) {
    testing::internal::CaptureStderr();
    EXPECT_EQ(Cli(args), kExitBadInput) << args.back();
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_EQ(err.rfind("locklab: ", 0), 0u) << err;
  }
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST_F(MapCli, ListNamesEveryMap) {
  testing::internal::CaptureStdout();
  EXPECT_EQ(Cli({"map", "--list"}), kExitOk);
  const std::string text = testing::internal::GetCapturedStdout();
  for (const MapDef& m : Maps()) {
    EXPECT_NE(text.find(m.name + ": "), std::string::npos) << m.name;
    EXPECT_FALSE(m.xs.empty());
    EXPECT_FALSE(m.curves.empty());
  }
}

TEST_F(MapCli, TheSameBytesForAnyJobs) {
  // One per-acquisition map and one per-fault map, tiny.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"pause-ttl", "--curve", "token", "--curve", "fencing (damage)", "--x", "0.5,1.5",
                                 "--batch", "2", "--max-seeds", "4"},
        {"release-delay", "--x", "0.5,1.5", "--batch", "3", "--max-seeds", "6"}}) {
    std::vector<std::string> one = args, two = args;
    for (const char* a : {"--jobs", "1", "--out"}) one.push_back(a);
    one.push_back(Path("one.json"));
    for (const char* a : {"--jobs", "2", "--out"}) two.push_back(a);
    two.push_back(Path("two.json"));
    ASSERT_EQ(Map(one), kExitOk);
    ASSERT_EQ(Map(two), kExitOk);
    nlohmann::json a = Read("one.json"), b = Read("two.json");
    EXPECT_NE(a["context"]["command"], b["context"]["command"]);
    a["context"].erase("command");
    b["context"].erase("command");
    EXPECT_EQ(a.dump(), b.dump()) << args[0];
    EXPECT_EQ(a["schema"], kMapSchema);
    ASSERT_EQ(a["points"].size(), 4u);  // 2 curves x 2 magnitudes
    for (const auto& p : a["points"]) {
      for (const char* k : {"x", "curve", "algorithm", "seeds", "acquisitions", "events", "rate", "replay", "stop"})
        EXPECT_TRUE(p.contains(k)) << k;
      EXPECT_LE(p["rate"]["low"].get<double>(), p["rate"]["estimate"].get<double>());
      EXPECT_LE(p["rate"]["estimate"].get<double>(), p["rate"]["high"].get<double>());
      EXPECT_FALSE(p["rate"]["method"].get<std::string>().empty());
      EXPECT_NE(p["replay"].get<std::string>().find("--seed 1"), std::string::npos) << p["replay"];
      if (a["map"]["unit"] == "fault")  // a run whose fault never came is no trial
        EXPECT_EQ(p["rate"]["n"].get<int>(), p["completed"].get<int>() - p.value("fault_not_fired", 0)) << p;
    }
  }
}

TEST_F(MapCli, AProfileChangesTheSimulatorsPointsAndItsReplays) {
  const std::vector<std::string> args{"pause-ttl", "--curve", "token", "--x", "1.5", "--batch", "2", "--max-seeds", "2"};
  std::vector<std::string> def = args, legacy = args;
  for (const char* a : {"--out"}) def.push_back(a);
  def.push_back(Path("default.json"));
  for (const char* a : {"--profile", "legacy", "--out"}) legacy.push_back(a);
  legacy.push_back(Path("legacy.json"));
  ASSERT_EQ(Map(def), kExitOk);
  ASSERT_EQ(Map(legacy), kExitOk);
  const nlohmann::json a = Read("default.json")["points"][0], b = Read("legacy.json")["points"][0];
  EXPECT_EQ(a["replay"].get<std::string>().find("--profile"), std::string::npos) << a["replay"];
  EXPECT_NE(b["replay"].get<std::string>().find("--profile legacy"), std::string::npos) << b["replay"];
  EXPECT_NE(a["events"], b["events"]);  // other costs, other timing
}

TEST(MapStopRule, EachReason) {
  Interval zero{0, 0, 5e-5, 10, "cluster-t"};
  EXPECT_EQ(StopRule(zero, 10, 200, 0.2, 1e-4), MapStop::kBelowFloor);
  EXPECT_EQ(StopRule(zero, 10, 200, 0.2, 1e-5), MapStop::kGoOn);  // a zero estimate is never "precise"
  EXPECT_EQ(StopRule(zero, 200, 200, 0.2, 1e-5), MapStop::kCap);
  Interval wide{0.01, 0.005, 0.015, 10, "cluster-t"};  // upper half-width 50% of the estimate
  EXPECT_EQ(StopRule(wide, 10, 200, 0.2, 1e-4), MapStop::kGoOn);
  EXPECT_EQ(StopRule(wide, 10, 200, 0.5, 1e-4), MapStop::kPrecise);  // bounds inclusive
  EXPECT_EQ(StopRule(wide, 210, 200, 0.2, 1e-4), MapStop::kCap);
  Interval one_seed{0, 0, 0, 1, "none (n < 2)"};  // no interval yet: never "below floor"
  EXPECT_EQ(StopRule(one_seed, 1, 200, 0.2, 1e-4), MapStop::kGoOn);
  Interval no_trials{0, 0, 0, 5, "none (no trials)"};
  EXPECT_EQ(StopRule(no_trials, 5, 200, 0.2, 1e-4), MapStop::kGoOn);
  // Per acquisition a zero point needs 40 seeds before it may stop below the floor.
  EXPECT_EQ(StopRule(zero, 30, 200, 0.2, 1e-4, kMinFloorSeedsPerAcquisition), MapStop::kGoOn);
  EXPECT_EQ(StopRule(zero, 40, 200, 0.2, 1e-4, kMinFloorSeedsPerAcquisition), MapStop::kBelowFloor);
  EXPECT_EQ(StopRule(zero, 3, 3, 0.2, 1e-4, kMinFloorSeedsPerAcquisition), MapStop::kCap);
}

// A point stops at the first batch where the rule holds: rerun with the cap one batch earlier and
// it must run to that cap (the rule did not hold there); a zero point stops after one batch when
// its acquisitions already push the bound below the floor, and runs to the cap when they cannot.
TEST_F(MapCli, StopsWhereTheRuleSays) {
  const std::vector<std::string> token = {"pause-ttl", "--curve", "token", "--jobs", "2"};
  auto with = [&](std::vector<std::string> extra, const std::string& file) {
    std::vector<std::string> a = token;
    a.insert(a.end(), extra.begin(), extra.end());
    a.push_back("--out");
    a.push_back(Path(file));
    return Map(a);
  };
  // x = 1.5: violations in every seed; a 10% interval needs several batches of 2 seeds.
  ASSERT_EQ(with({"--x", "1.5", "--batch", "2", "--max-seeds", "60", "--precision", "0.1"}, "p.json"), kExitOk);
  const nlohmann::json p = Read("p.json")["points"][0];
  ASSERT_EQ(p["stop"], "precise");
  const int n = p["seeds"];
  EXPECT_EQ(n % 2, 0);
  EXPECT_GT(n, 2);
  const double est = p["rate"]["estimate"], high = p["rate"]["high"];
  EXPECT_LE(high - est, 0.1 * est);
  ASSERT_EQ(with({"--x", "1.5", "--batch", "2", "--max-seeds", std::to_string(n - 2), "--precision", "0.1"}, "q.json"),
            kExitOk);
  const nlohmann::json q = Read("q.json")["points"][0];
  EXPECT_EQ(q["stop"], "cap");
  EXPECT_EQ(q["seeds"], n - 2);
  EXPECT_GT(q["rate"]["high"].get<double>() - q["rate"]["estimate"].get<double>(),
            0.1 * q["rate"]["estimate"].get<double>());

  // x = 0.5: no violation can happen. 10 seeds x 5000 acquisitions put the Wilson bound at
  // 7.7e-5 already, but a per-acquisition point stops below the floor only from 40 seeds.
  ASSERT_EQ(with({"--x", "0.5", "--batch", "20", "--max-seeds", "60"}, "z.json"), kExitOk);
  const nlohmann::json z = Read("z.json")["points"][0];
  EXPECT_EQ(z["stop"], "below floor");
  EXPECT_EQ(z["seeds"], 40);
  EXPECT_EQ(z["events"], 0);
  EXPECT_LT(z["rate"]["high"].get<double>(), 2e-5);
  EXPECT_GE(z["acquisitions"].get<int64_t>(), 190'000);
  // A floor no cap can reach: the point runs to the cap, one batch at a time.
  ASSERT_EQ(with({"--x", "0.5", "--batch", "4", "--max-seeds", "10", "--floor", "1e-7"}, "c.json"), kExitOk);
  const nlohmann::json c = Read("c.json")["points"][0];
  EXPECT_EQ(c["stop"], "cap");
  EXPECT_EQ(c["seeds"], 10);  // 4 + 4 + 2: the last batch is cut at the cap
}

}  // namespace
}  // namespace locklab
