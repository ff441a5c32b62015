// `locklab explore` in process: bad input, a quick find-and-shrink whose file replays through
// `locklab scenario FILE` with the same timeline, and a budget that ends without a finding.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "harness/cli/cli.h"
#include "harness/testing/cli_test_util.h"
#include "harness/testing/temp_dir_test.h"

namespace locklab {
namespace {

class ExploreCliTest : public TempDirTest {
 protected:
  ExploreCliTest() : TempDirTest("locklab_explore_cli_test") {}
};

struct Output {
  int code = 0;
  std::string out, err;
};

Output Locklab(const std::vector<std::string>& args) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  Output o;
  o.code = Cli(args);
  o.out = ::testing::internal::GetCapturedStdout();
  o.err = ::testing::internal::GetCapturedStderr();
  return o;
}

// The text between the line starting with `from` and the next line starting with `to`.
std::string Between(const std::string& text, const std::string& from, const std::string& to) {
  const size_t a = text.find(from);
  if (a == std::string::npos) return "";
  const size_t start = text.find('\n', a) + 1;
  const size_t end = text.find("\n" + to, start);
  return end == std::string::npos ? "" : text.substr(start, end + 1 - start);
}

TEST_F(ExploreCliTest, BadInputIsOneLineAndRunsNothing) {
  const std::vector<std::vector<std::string>> bad = {
      {"explore", "--faults", "pause_client,nope"},
      {"explore", "--range", "pause=3-1ttl"},
      {"explore", "--range", "nope=1-2ms"},
      {"explore", "--range", "pause=1-2"},
      {"explore", "--find", "overlaps"},
      {"explore", "--strategy", "random"},
      {"explore", "--algorithm", "nope"},
      {"explore", "--algorithm", "token:relase=del"},
      {"explore", "--faults", "failover"},
      {"explore", "--budget-runs", "0"},
      {"explore", "--budget-s", "-1"},
      {"explore", "--clients", "0"},
      {"explore", "--max-faults", "0"},
      {"explore", "--only", "gc-pause"},
      {"explore", "--findability", "--only", "nope", "--out", Path("f.json")},
      {"explore", "--retry", "nope"},
  };
  for (const auto& args : bad) {
    const Output o = Locklab(args);
    EXPECT_EQ(o.code, kExitBadInput) << args[1] << " " << (args.size() > 2 ? args[2] : "");
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_));
}

TEST_F(ExploreCliTest, FindsShrinksAndTheFileReplaysThroughTheScenarioCommand) {
  const std::string file = Path("found.json");
  const Output e = Locklab({"explore", "--algorithm", "token:release=del", "--faults", "pause_client", "--find",
                        "overlap-unexplained", "--budget-runs", "20000", "--jobs", "2", "--out", file, "--no-progress"});
  ASSERT_EQ(e.code, kExitOk) << e.err;
  EXPECT_NE(e.out.find("found: overlap-unexplained"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("the file replays the explorer's run: identical timeline"), std::string::npos) << e.out;
  const std::string table = Between(e.out, "== found:", "expected:");
  ASSERT_FALSE(table.empty()) << e.out;

  const Output s1 = Locklab({"scenario", file, "--no-progress", "--out", Path("r1.json")});
  const Output s2 = Locklab({"scenario", file, "--no-progress", "--out", Path("r2.json")});
  ASSERT_EQ(s1.code, kExitOk) << s1.out << s1.err;  // the verdict the file expects
  EXPECT_NE(s1.out.find(table), std::string::npos) << s1.out;
  EXPECT_EQ(s1.out.substr(0, s1.out.find("report:")), s2.out.substr(0, s2.out.find("report:")));
  EXPECT_EQ(ReadAll(Path("r1.json")), ReadAll(Path("r2.json")));
}

TEST_F(ExploreCliTest, ABudgetWithoutFindingSaysWhatWasSearched) {
  const Output e = Locklab({"explore", "--algorithm", "fencing", "--faults", "pause_client", "--find", "damage",
                        "--budget-runs", "300", "--jobs", "1", "--out", Path("none.json"), "--no-progress"});
  ASSERT_EQ(e.code, kExitOk) << e.err;
  EXPECT_NE(e.out.find("nothing found: the budget of 300 runs ended (300 runs"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("space searched: fencing, 3 clients x 2 requests"), std::string::npos) << e.out;
  EXPECT_FALSE(std::filesystem::exists(Path("none.json")));
}

}  // namespace
}  // namespace locklab
