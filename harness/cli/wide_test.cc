// `locklab run --jobs/--shard/--results` and `locklab merge`: the outputs do not depend on how
// the sweep was spread over threads or processes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "harness/cli/cli.h"
#include "harness/testing/cli_test_util.h"

namespace locklab {
namespace {

class WideTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("locklab_wide_test_" + std::to_string(getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    // 40 seeds of a Redlock run that sometimes finds a violation (GC pauses longer than the TTL).
    std::string seeds;
    for (int s = 1; s <= 40; ++s) {
      if (s > 1) seeds += ",";
      seeds += std::to_string(s);
    }
    std::ofstream(Path("sweep.json"))
        << R"({"algorithm": "redlock", "clients": 3, "requests": 20, "ttl_ms": 200,
              "faults": {"gc_pause_ms": 300, "gc_pause_rate": 1, "net_delay_ms": 2, "net_dist": "long-tail",
                         "clock_drift_ppm": 200}, "seeds": [)"
        << seeds << "]}\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  int Run(std::vector<std::string> extra) {
    std::vector<std::string> args = {"run", "--config", Path("sweep.json"), "--quiet", "--no-progress"};
    args.insert(args.end(), extra.begin(), extra.end());
    return Cli(args);
  }
  std::filesystem::path dir_;
};

TEST_F(WideTest, JobsDoNotChangeTheReport) {
  ASSERT_EQ(Run({"--jobs", "1", "--out", Path("j1.json")}), kExitOk);
  ASSERT_EQ(Run({"--jobs", "4", "--out", Path("j4.json")}), kExitOk);
  const std::string one = ReadAll(Path("j1.json"));
  EXPECT_GT(one.size(), 10000u);
  EXPECT_EQ(one, ReadAll(Path("j4.json")));
  ASSERT_EQ(Run({"--jobs", "1", "--results", Path("j1.jsonl")}), kExitOk);
  ASSERT_EQ(Run({"--jobs", "3", "--results", Path("j3.jsonl")}), kExitOk);
  EXPECT_EQ(ReadAll(Path("j1.jsonl")), ReadAll(Path("j3.jsonl")));
}

TEST_F(WideTest, ThreeShardsMergeIntoTheUnshardedSweep) {
  ASSERT_EQ(Run({"--out", Path("all.json"), "--results", Path("all.jsonl")}), kExitOk);
  std::vector<std::string> reports = {"merge", Path("merged.json")}, lines = {"merge", Path("merged.jsonl")};
  for (int i = 3; i >= 1; --i) {  // in any order
    const std::string n = std::to_string(i);
    ASSERT_EQ(Run({"--shard", n + "/3", "--jobs", "2", "--out", Path("p" + n + ".json"), "--results",
                   Path("p" + n + ".jsonl")}),
              kExitOk);
    reports.push_back(Path("p" + n + ".json"));
    lines.push_back(Path("p" + n + ".jsonl"));
  }
  ASSERT_EQ(Cli(reports), kExitOk);
  ASSERT_EQ(Cli(lines), kExitOk);
  EXPECT_EQ(ReadAll(Path("merged.json")), ReadAll(Path("all.json")));
  EXPECT_EQ(ReadAll(Path("merged.jsonl")), ReadAll(Path("all.jsonl")));
  // Refused: a missing shard, a shard twice, an unsharded report, reports with lines.
  EXPECT_EQ(Cli({"merge", Path("x.json"), Path("p1.json"), Path("p2.json")}), kExitBadInput);
  EXPECT_EQ(Cli({"merge", Path("x.json"), Path("p1.json"), Path("p2.json"), Path("p2.json"), Path("p3.json")}),
            kExitBadInput);
  EXPECT_EQ(Cli({"merge", Path("x.json"), Path("all.json")}), kExitBadInput);
  EXPECT_EQ(Cli({"merge", Path("x.json"), Path("p1.json"), Path("p2.jsonl"), Path("p3.json")}), kExitBadInput);
  EXPECT_EQ(Cli({"merge", Path("x.jsonl"), Path("p1.jsonl"), Path("p3.jsonl")}), kExitBadInput);
  EXPECT_EQ(Cli({"merge", Path("x.jsonl"), Path("p1.jsonl"), Path("p1.jsonl"), Path("p2.jsonl"), Path("p3.jsonl")}),
            kExitBadInput);
  EXPECT_FALSE(std::filesystem::exists(Path("x.json")));
  EXPECT_FALSE(std::filesystem::exists(Path("x.jsonl")));
}

TEST_F(WideTest, ShardsOfDifferentSweepsAreRefused) {
  ASSERT_EQ(Run({"--shard", "1/2", "--results", Path("a1.jsonl"), "--out", Path("a1.json")}), kExitOk);
  ASSERT_EQ(Run({"--shard", "2/2", "--clients", "4", "--results", Path("b2.jsonl"), "--out", Path("b2.json")}),
            kExitOk);
  EXPECT_EQ(Cli({"merge", Path("x.json"), Path("a1.json"), Path("b2.json")}), kExitBadInput);
  EXPECT_EQ(Cli({"merge", Path("x.jsonl"), Path("a1.jsonl"), Path("b2.jsonl")}), kExitBadInput);
}

TEST_F(WideTest, ResultsKeepFullReportsOfViolatingRunsOnly) {
  ASSERT_EQ(Run({"--results", Path("r.jsonl")}), kExitOk);
  EXPECT_FALSE(std::filesystem::exists(Path("r.jsonl.tmp")));
  std::ifstream in(Path("r.jsonl"));
  int lines = 0, full = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    const nlohmann::json j = nlohmann::json::parse(line);
    EXPECT_EQ(j["run"], lines + 1);
    EXPECT_EQ(j["seed"], lines + 1);
    const bool found = j["violations"] > 0 || j["lost_updates"] > 0;
    EXPECT_EQ(!j["full_report"].is_null(), found) << line;
    if (!found) continue;
    ++full;
    // The file is the report its replay command writes.
    const std::string report = ReadAll(dir_ / "r-full" / j["full_report"].get<std::string>());
    ASSERT_FALSE(report.empty());
    const nlohmann::json r = nlohmann::json::parse(report);
    EXPECT_EQ(r["runs"][0]["replay"], j["replay"]);
    EXPECT_EQ(r["runs"][0]["safety"]["violations"], j["violations"]);
  }
  EXPECT_EQ(lines, 40);
  EXPECT_GT(full, 0);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_ / "r-full"), {}), full);
}

// The suite and `scenario all`: reports, table and progress lines do not depend on --jobs.
TEST_F(WideTest, SuiteAndScenariosGiveTheSameOutputWithJobs) {
  for (const char* cmd : {"suite", "scenario"}) {
    std::string out[2], err[2];
    for (int k = 0; k < 2; ++k) {
      const std::string dir = Path(std::string(cmd) + "-j" + std::to_string(k));
      std::vector<std::string> args = {cmd, "--jobs", k == 0 ? "1" : "3", "--out-dir", dir};
      if (std::string(cmd) == "scenario") args.insert(args.begin() + 1, "all");
      ::testing::internal::CaptureStdout();
      ::testing::internal::CaptureStderr();
      EXPECT_EQ(Cli(args), kExitOk) << cmd;
      out[k] = ::testing::internal::GetCapturedStdout();
      err[k] = ::testing::internal::GetCapturedStderr();
      for (std::string* s : {&out[k], &err[k]})
        for (size_t p; (p = s->find(dir)) != std::string::npos;) s->replace(p, dir.size(), "DIR");
    }
    EXPECT_EQ(out[0], out[1]) << cmd;
    EXPECT_EQ(err[0], err[1]) << cmd;
    size_t files = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(Path(std::string(cmd) + "-j0"))) {
      if (!e.is_regular_file()) continue;
      ++files;
      const auto rel = std::filesystem::relative(e.path(), Path(std::string(cmd) + "-j0"));
      EXPECT_EQ(ReadAll(e.path()), ReadAll(Path(std::string(cmd) + "-j1") / rel)) << rel;
    }
    EXPECT_GT(files, 3u) << cmd;
  }
}

TEST_F(WideTest, BadValuesExit2BeforeAnythingRuns) {
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--jobs", "0"}, {"--jobs", "257"}, {"--jobs", "x"}, {"--shard", "0/3"},
        {"--shard", "4/3"}, {"--shard", "1"}, {"--shard", ""}, {"--shard", "1/0"}, {"--full-dir", Path("f")}}) {
    std::vector<std::string> args = bad;
    args.insert(args.end(), {"--out", Path("never.json")});
    EXPECT_EQ(Run(args), kExitBadInput) << bad[0] << " " << bad[1];
  }
  EXPECT_FALSE(std::filesystem::exists(Path("never.json")));
  EXPECT_EQ(Cli({"merge", Path("x.json")}), kExitBadInput);
  EXPECT_EQ(Cli({"suite", "--jobs", "0"}), kExitBadInput);
  EXPECT_EQ(Cli({"scenario", "all", "--jobs", "300"}), kExitBadInput);
  EXPECT_EQ(Cli({"merge", Path("x.json"), Path("missing.json")}), kExitBadInput);
}

}  // namespace
}  // namespace locklab
