// The command line end to end, in process: exit codes, reports on disk, determinism.
#include "harness/cli/cli.h"
#include "harness/testing/cli_test_util.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "harness/cli/suite.h"

namespace locklab {
namespace {


class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("locklab_cli_test_" + std::to_string(getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

TEST_F(CliTest, ExitCodes) {
  EXPECT_EQ(Cli({"--help"}), kExitOk);
  EXPECT_EQ(Cli({"run", "--help"}), kExitOk);
  EXPECT_EQ(Cli({"suite", "--help"}), kExitOk);
  EXPECT_EQ(Cli({"list"}), kExitOk);
  EXPECT_EQ(Cli({}), kExitBadInput);
  EXPECT_EQ(Cli({"frobnicate"}), kExitBadInput);
  EXPECT_EQ(Cli({"run", "--algorithm", "nope"}), kExitBadInput);
  EXPECT_EQ(Cli({"run", "--algorithm", "token:relase=del"}), kExitBadInput);
  EXPECT_EQ(Cli({"run", "--clients", "ten"}), kExitBadInput);
  EXPECT_EQ(Cli({"run", "--config", Path("missing.json")}), kExitBadInput);
  EXPECT_EQ(Cli({"suite", "--backend", "cloud"}), kExitBadInput);
  EXPECT_FALSE(std::filesystem::exists(dir_));  // bad input runs nothing, writes nothing
}

TEST_F(CliTest, RunWritesTheSameReportTwice) {
  const std::vector<std::string> args = {
      "run",           "--algorithm",   "token", "--clients",       "3",   "--requests", "20", "--quiet",
      "--no-progress", "--gc-pause-ms", "1500",  "--gc-pause-rate", "0.5", "--out"};
  std::vector<std::string> a = args, b = args, c = args;
  a.push_back(Path("a.json"));
  b.push_back(Path("b.json"));
  c.push_back(Path("c.json"));
  c.insert(c.end() - 2, {"--seed", "2"});
  ASSERT_EQ(Cli(a), kExitOk);
  ASSERT_EQ(Cli(b), kExitOk);
  ASSERT_EQ(Cli(c), kExitOk);
  const std::string ra = ReadAll(Path("a.json")), rb = ReadAll(Path("b.json")), rc = ReadAll(Path("c.json"));
  EXPECT_FALSE(ra.empty());
  EXPECT_EQ(ra, rb);  // same seed, same build: same bytes
  EXPECT_NE(ra, rc);
  EXPECT_FALSE(std::filesystem::exists(Path("a.json.tmp")));
}

TEST_F(CliTest, SuiteWritesOneReportPerPreset) {
  SuiteOptions o;
  o.out_dir = dir_.string();
  o.clients = 3;
  o.requests = 20;
  o.progress = false;
  std::ostringstream out;
  std::string error;
  ASSERT_EQ(RunSuite(o, out, &error), kExitOk) << error;
  for (const SuitePreset& p : SuitePresets())
    EXPECT_TRUE(std::filesystem::exists(SuiteReportPath(o, "sim", p))) << p.name;
  const std::string table = out.str();
  for (const char* s : {"none", "gc-pause", "net-delay", "clock-skew", "token", "redlock", "viol", "p99 ms"})
    EXPECT_NE(table.find(s), std::string::npos) << s << "\n" << table;
}

}  // namespace
}  // namespace locklab
