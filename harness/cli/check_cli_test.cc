// `locklab check` end to end, in process: a run's history written with --history-out and judged
// again gives the run's verdicts; bad files exit 2 with the line, before writing anything.
#include "harness/cli/check_cli.h"

#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "harness/testing/cli_test_util.h"
#include "harness/testing/temp_dir_test.h"

namespace locklab {
namespace {

class CheckCliTest : public TempDirTest {
 protected:
  CheckCliTest() : TempDirTest("locklab_check_cli_test") {}
};

nlohmann::json RunOf(const std::string& report_path) {
  nlohmann::json run = nlohmann::json::parse(ReadAll(report_path))["runs"][0];
  for (auto& ex : run["safety"]["examples"]) ex.erase("replay");  // `locklab run ...` vs `locklab check ...`
  return run;
}

TEST_F(CheckCliTest, ARunsHistoryGetsTheRunsVerdicts) {
  const std::vector<std::vector<std::string>> runs = {
      {"--algorithm", "token", "--gc-pause-ms", "1500", "--gc-pause-rate", "0.5", "--hold-ms", "100"},
      {"--algorithm", "fencing", "--gc-pause-ms", "1500", "--gc-pause-rate", "0.5", "--hold-ms", "100"},
      {"--algorithm", "redlock:fence=on", "--clients", "4", "--requests", "40", "--fault",
       "crash_node:at_ms=200,target=1", "--fault", "pause_client:at_ms=100,target=0,duration_ms=1500"},
      {"--algorithm", "token", "--net-loss", "0.05", "--command-timeout-ms", "50", "--fault",
       "crash_client:at_ms=300,target=2"},
      {"--algorithm", "none", "--workload", "seckill", "--stock", "30"},
  };
  int with_violation = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string n = std::to_string(i);
    std::vector<std::string> args = {"run", "--no-progress", "--quiet", "--out", Path("run" + n + ".json"),
                                     "--history-out", Path("h" + n + ".jsonl")};
    args.insert(args.end(), runs[i].begin(), runs[i].end());
    ASSERT_EQ(Cli(args), kExitOk) << n;
    ::testing::internal::CaptureStdout();
    ASSERT_EQ(Cli({"check", Path("h" + n + ".jsonl"), "--out", Path("check" + n + ".json")}), kExitOk);
    const std::string out = ::testing::internal::GetCapturedStdout();
    const nlohmann::json run = RunOf(Path("run" + n + ".json")), check = RunOf(Path("check" + n + ".json"));
    // Not "redis": a run counts the commands its clients sent, a history the ones that executed.
    for (const char* key : {"safety", "liveness", "latency_ms", "fairness", "duration_ms"})
      EXPECT_EQ(run[key], check[key]) << "run " << n << ": " << key;
    EXPECT_NE(out.find("replay: locklab check " + Path("h" + n + ".jsonl")), std::string::npos) << out;
    if (run["safety"]["violations"].get<int>() > 0) {
      ++with_violation;
      EXPECT_NE(out.find("first violation"), std::string::npos) << out;
    }
  }
  EXPECT_GE(with_violation, 3);
}

// Readers keep their mode through the file ("mode": "read"), and a semaphore's permits come from
// --holders-allowed: the history gets the run's verdicts (readers and 3 permits share the lock).
TEST_F(CheckCliTest, ReadersAndPermitsKeepTheRunsVerdicts) {
  struct Case {
    std::vector<std::string> run;
    std::vector<std::string> check;
  };
  const std::vector<Case> cases = {
      {{"--algorithm", "rwlock", "--read-ratio", "0.5", "--gc-pause-ms", "1500", "--gc-pause-rate", "0.5"}, {}},
      {{"--algorithm", "semaphore:permits=3", "--gc-pause-ms", "1500", "--gc-pause-rate", "0.5"},
       {"--holders-allowed", "3"}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string n = "m" + std::to_string(i);
    std::vector<std::string> args = {"run", "--no-progress", "--quiet", "--out", Path("run" + n + ".json"),
                                     "--history-out", Path("h" + n + ".jsonl")};
    args.insert(args.end(), cases[i].run.begin(), cases[i].run.end());
    ASSERT_EQ(Cli(args), kExitOk) << n;
    std::vector<std::string> check = {"check", Path("h" + n + ".jsonl"), "--quiet", "--out", Path("check" + n + ".json")};
    check.insert(check.end(), cases[i].check.begin(), cases[i].check.end());
    ::testing::internal::CaptureStdout();
    ASSERT_EQ(Cli(check), kExitOk);
    ::testing::internal::GetCapturedStdout();
    const nlohmann::json run = RunOf(Path("run" + n + ".json")), judged = RunOf(Path("check" + n + ".json"));
    EXPECT_EQ(run["safety"], judged["safety"]) << n;
    EXPECT_GT(run["safety"]["max_concurrent_holders"].get<int>(), 1) << n;  // sharing happened
  }
}

TEST_F(CheckCliTest, BadHistoriesExit2WithTheLineAndWriteNothing) {
  std::filesystem::create_directories(dir_);
  {
    std::ofstream f(Path("bad.jsonl"));
    f << "{\"time\": 0, \"process\": 0, \"type\": \"invoke\", \"f\": \"acquire\"}\n"
         "{\"time\": 10, \"process\": 0, \"type\": \"ok\", \"f\": \"acquire\"}\n"
         "{\"time\": 5, \"process\": 0, \"type\": \"invoke\", \"f\": \"release\"}\n";
  }
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(Cli({"check", Path("bad.jsonl"), "--out", Path("r.json")}), kExitBadInput);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "locklab: " + Path("bad.jsonl") + " line 3: time goes backwards (5 < 10)\n");
  EXPECT_FALSE(std::filesystem::exists(Path("r.json")));
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(Cli({"check", Path("missing.jsonl"), "--out", Path("r.json")}), kExitBadInput);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "locklab: " + Path("missing.jsonl") + ": no such file\n");
  std::ofstream(Path("empty.jsonl")).close();
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(Cli({"check", Path("empty.jsonl"), "--out", Path("r.json")}), kExitBadInput);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "locklab: " + Path("empty.jsonl") + ": empty (no operation to check)\n");
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(Cli({"check", dir_.string(), "--out", Path("r.json")}), kExitBadInput);  // a directory
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "locklab: " + dir_.string() + ": a directory, not a file\n");
  EXPECT_EQ(Cli({"check"}), kExitBadInput);
}

TEST_F(CheckCliTest, HistoryOutIsForOneRun) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(Cli({"run", "--algorithm", "token", "--shard", "1/2", "--history-out", Path("h.jsonl")}), kExitBadInput);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("--history-out: one run only"), std::string::npos) << err;
  EXPECT_FALSE(std::filesystem::exists(dir_));
}

}  // namespace
}  // namespace locklab

namespace locklab {
namespace {

// `locklab proxy` refuses what it cannot do before it listens (its faults: resp_proxy_test.cc).
TEST(ProxyCli, BadInputExits2WithOneLine) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"proxy", "--upstream", "127.0.0.1:6379", "--fault", "crash_node:at_ms=5,target=0"},
       "locklab: fault crash_node: the proxy applies delay_message, pause_client, partition and crash_client\n"},
      {{"proxy", "--upstream", "nowhere"}, "locklab: --upstream nowhere: give HOST:PORT\n"},
      {{"proxy", "--upstream", "127.0.0.1:x"}, "locklab: --upstream 127.0.0.1:x: the port is not a number\n"},
      {{"proxy", "--upstream", "10.1.2.3:6379"},
       "locklab: --upstream 10.1.2.3: a loopback IPv4 address (127.x.x.x or localhost)\n"},
      {{"proxy", "--upstream", "127.0.0.1:6379", "--fault", "delay_message:target=0,duration_ms=5"},
       "locklab: fault delay_message needs command=NAME and occurrence >= 1\n"},
  };
  for (const auto& [args, line] : cases) {
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(Cli(args), kExitBadInput);
    EXPECT_EQ(::testing::internal::GetCapturedStderr(), line);
  }
}

}  // namespace
}  // namespace locklab
