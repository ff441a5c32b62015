// The command line end to end, in process: exit codes, reports on disk, determinism.
#include "harness/cli/cli.h"
#include "harness/testing/cli_test_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "harness/cli/suite.h"
#include "harness/run/run_spec.h"

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

// What `locklab ARGS...` printed on stderr, and its exit code.
std::pair<int, std::string> CliStderr(const std::vector<std::string>& args) {
  ::testing::internal::CaptureStderr();
  const int code = Cli(args);
  return {code, ::testing::internal::GetCapturedStderr()};
}

// Bad input as a new user types it: exit 2 before anything runs, one line on stderr naming the flag
// or the field.
struct BadInput {
  std::vector<std::string> args;
  std::string names;  // what the line must mention
};

void ExpectRefused(const std::vector<BadInput>& cases) {
  for (const BadInput& c : cases) {
    std::string shown;
    for (const auto& a : c.args) shown += a + " ";
    const auto [code, err] = CliStderr(c.args);
    EXPECT_EQ(code, kExitBadInput) << shown << "\n" << err;
    EXPECT_EQ(err.rfind("locklab: ", 0), 0u) << shown << "\n" << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << shown << "\n" << err;
    EXPECT_NE(err.find(c.names), std::string::npos) << shown << "\n" << err;
  }
}

TEST_F(CliTest, NonFiniteNumbersAreRefused) {
  const std::string out = Path("r.json");
  std::vector<BadInput> cases;
  for (const char* v : {"nan", "inf", "-inf", "NaN", "infinity"})
    cases.push_back({{"run", "--gc-pause-rate", v, "--out", out}, "--gc-pause-rate"});
  for (const char* flag : {"--net-delay-ms", "--net-loss", "--clock-drift-ppm"})
    for (const char* v : {"nan", "inf", "-inf"}) cases.push_back({{"run", flag, v, "--out", out}, flag});
  cases.push_back({{"run", "--algorithm", "redlock", "--opt", "retry-delay-ms=nan", "--out", out}, "retry-delay-ms"});
  cases.push_back({{"run", "--retry", "backoff", "--retry-opt", "cap-ms=inf", "--out", out}, "cap-ms"});
  cases.push_back({{"run", "--fault", "pause_client:at_ms=nan,target=0", "--out", out}, "at_ms"});
  cases.push_back({{"scenario", "pause-misdelete", "--param", "ttl_ms=nan", "--out", out}, "--param ttl_ms=nan"});
  cases.push_back({{"scenario", "pause-misdelete", "--param", "pause_ms=-inf", "--out", out}, "--param"});
  cases.push_back({{"scenario", "pause-misdelete", "--ttl-ms", "inf", "--out", out}, "--ttl-ms"});
  cases.push_back({{"scenario", "pause-misdelete", "--delay-ms", "nan", "--out", out}, "--delay-ms"});
  std::filesystem::create_directories(dir_);
  std::ofstream(Path("inf.json")) << R"({"faults": {"net_delay_ms": 1e999}})";
  std::ofstream(Path("sweep.json")) << R"({"sweep": {"faults.gc_pause_rate": [0.5, 1e999]}})";
  std::ofstream(Path("opt.json")) << R"({"algorithm": "redlock", "algorithm_options": {"retry-delay-ms": "inf"}})";
  std::ofstream(Path("retry.json")) << R"({"sweep": {"retry": ["fixed:sleep-ms=nan"]}})";
  cases.push_back({{"run", "--config", Path("inf.json"), "--out", out}, "inf.json"});
  cases.push_back({{"run", "--config", Path("sweep.json"), "--out", out}, "sweep.json"});
  cases.push_back({{"run", "--config", Path("opt.json"), "--out", out}, "retry-delay-ms"});
  cases.push_back({{"run", "--config", Path("retry.json"), "--out", out}, "sleep-ms"});
  ExpectRefused(cases);
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST_F(CliTest, BadRedisAddressesAreRefusedBeforeAnyServerStarts) {
  const std::string out = Path("r.json");
  std::vector<BadInput> cases;
  for (const char* a : {"notahost", "127.0.0.1:99999", "host:", ":6379", "127.0.0.1:0", "127.0.0.1:65536",
                        "127.0.0.1:abc", "127.0.0.1:-1", "[::1]:6379", "no-such-host.invalid:6379", ","})
    cases.push_back({{"run", "--backend", "redis", "--redis", a, "--out", out}, "--redis"});
  cases.push_back({{"suite", "--backend", "redis", "--redis", "notahost", "--out-dir", dir_.string()}, "--redis"});
  // One server per node, and a replica only on locklab's own servers (the runtime found both only
  // after the run had started).
  cases.push_back({{"run", "--backend", "redis", "--algorithm", "redlock", "--redis", "127.0.0.1:6379", "--out", out},
                   "--redis: 1 server(s) given for 5 nodes"});
  cases.push_back({{"run", "--backend", "redis", "--replica", "--redis", "127.0.0.1:6379", "--out", out}, "--redis"});
  ExpectRefused(cases);
  EXPECT_FALSE(std::filesystem::exists(dir_));
  // What is accepted: IPv4 and IPv6 literals, localhost, names that resolve.
  for (const char* a : {"127.0.0.1:6379", "::1:6379", "localhost:1", "10.0.0.1:65535"})
    EXPECT_TRUE(CheckRedisAddress(a).ok()) << a << ": " << CheckRedisAddress(a).message();
}

TEST_F(CliTest, OtherBadInputIsRefused) {
  const std::string out = Path("r.json");
  ExpectRefused({
      {{"run", "--hold-ms", "99999999999999999999", "--out", out}, "--hold-ms"},
      {{"run", "--hold-ms", "9223372036854775807", "--out", out}, "hold_ms"},
      {{"run", "--gc-pause-ms", "9223372036854775807", "--gc-pause-rate", "1", "--out", out}, "gc_pause_ms"},
      {{"run", "--clients", "99999999999", "--out", out}, "--clients"},
      {{"run", "--retry", "fixed", "--retry-opt", "sleep-ms=-5", "--out", out}, "sleep-ms"},
      {{"run", "--algorithm", "watchdog", "--opt", "renew-every-ms=-1", "--out", out}, "renew-every-ms"},
      {{"run", "--out", ""}, "--out"},
      {{"run", "--config", ""}, "--config"},
      {{"suite", "--out-dir", ""}, "--out-dir"},
      {{"suite", "--clients", "99999999999"}, "--clients"},
      {{"scenario", "pause-misdelete", "--out-dir", ""}, "--out-dir"},
      {{"scenario", "pause-misdelete", "--algorithm", ""}, "--algorithm"},
      {{"scenario", "pause-misdelete", "--seed", "-1"}, "--seed"},
      {{"scenario", "pause-misdelete", "--seed", "18446744073709551616"}, "--seed"},
      {{"run", "--seed", "18446744073709551616", "--out", out}, "--seed"},
      {{"suite", "--seed", "18446744073709551616"}, "--seed"},
      {{"run", "--profile", Path("no-profile.json"), "--out", out}, "--profile"},
      {{"suite", "--profile", Path("no-profile.json")}, "--profile"},
      {{"scenario", "pause-misdelete", "--profile", Path("no-profile.json")}, "--profile"},
      {{"validate", "--quick", "--only", "retry", "--profile", Path("no-profile.json")}, "--profile"},
      {{"run", "--backend", "redis", "--cpu-placement", "fast", "--out", out}, "--cpu-placement"},
      {{"calibrate", "--cpu-placement", "pinned"}, "--cpu-placement"},
  });
  EXPECT_FALSE(std::filesystem::exists(dir_));
}

// Where a real run's processes ran, as its report's notes say (harness/real/cpu_placement.h).
std::string CpuNote(const std::string& report_path) {
  std::ifstream in(report_path);
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("runs")) return "no report";
  for (const auto& n : j["runs"][0].value("notes", nlohmann::json::array()))
    if (n.is_string() && n.get<std::string>().rfind("CPUs: ", 0) == 0) return n.get<std::string>();
  return "no CPUs note";
}

TEST_F(CliTest, RealRunsSayWhereTheirProcessesRan) {
  const std::vector<std::string> run = {"run", "--backend", "redis", "--clients", "2", "--requests", "3", "--quiet"};
  auto with = [&](std::vector<std::string> extra, const std::string& out) {
    std::vector<std::string> args = run;
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--out", out});
    EXPECT_EQ(Cli(args), kExitOk);
    return CpuNote(out);
  };
  EXPECT_EQ(with({"--cpu-placement", "os"}, Path("os.json")), "CPUs: the scheduler's (--cpu-placement os)");
  // A real run's report records the machine's state right after the runs (a simulator's never:
  // its report must not change between runs, RunWritesTheSameReportTwice).
  const nlohmann::json report = nlohmann::json::parse(ReadAll(Path("os.json")));
  const auto& machine = report["context"]["machine_after"];
  ASSERT_EQ(machine["wake_late_us"].size(), 2u) << report["context"];
  EXPECT_EQ(machine["wake_late_us"][0]["sleep_us"], 1000);
  EXPECT_FALSE(machine["load_average"].get<std::string>().empty());
  const std::string split = with({}, Path("split.json"));  // the default
  if (sysconf(_SC_NPROCESSORS_ONLN) >= 2 && split != "CPUs: the scheduler's (1 CPU)") {
    EXPECT_NE(split.find("event loop on CPU "), std::string::npos) << split;
    EXPECT_NE(split.find("(split)"), std::string::npos) << split;
  }
}

// Each of a real suite's reports records the machine right after its runs, as `locklab run`'s.
TEST_F(CliTest, RealSuiteReportsRecordTheMachine) {
  ASSERT_EQ(Cli({"suite", "--backend", "redis", "--clients", "2", "--requests", "3", "--out-dir", dir_.string(),
                 "--quiet", "--no-progress"}),
            kExitOk);
  for (const char* preset : {"none", "gc-pause", "net-delay", "clock-skew"}) {
    const nlohmann::json report = nlohmann::json::parse(ReadAll(Path(std::string("suite-redis/") + preset + ".json")));
    const auto& machine = report["context"]["machine_after"];
    ASSERT_EQ(machine["wake_late_us"].size(), 2u) << preset;
    EXPECT_FALSE(machine["load_average"].get<std::string>().empty()) << preset;
  }
}

// LOCKLAB_SIM_LOOP_LOG: the simulated client loop's steps in the real runtime's LOCKLAB_LOOP_LOG
// format ("PASS KIND CLIENT T_US", then WHAT for some kinds), without changing the run.
TEST_F(CliTest, SimLoopLogLeavesTheRunAsItWas) {
  const std::vector<std::string> args = {"run", "--clients", "20", "--requests", "60", "--net-delay-ms", "0.05",
                                         "--net-dist", "uniform", "--retry", "no4", "--retry-opt", "sleep-ms=5",
                                         "--quiet", "--no-progress", "--out"};
  std::vector<std::string> plain = args, logged = args;
  plain.push_back(Path("plain.json"));
  logged.push_back(Path("logged.json"));
  ASSERT_EQ(Cli(plain), kExitOk);
  ASSERT_EQ(setenv("LOCKLAB_SIM_LOOP_LOG", Path("loop.log").c_str(), 1), 0);
  const int code = Cli(logged);
  unsetenv("LOCKLAB_SIM_LOOP_LOG");
  ASSERT_EQ(code, kExitOk);
  EXPECT_EQ(ReadAll(Path("plain.json")), ReadAll(Path("logged.json")));
  std::istringstream lines(ReadAll(Path("loop.log")));
  std::map<char, int> kinds;
  long long pass = 0, last_pass = 0, t_us = 0, last_t_us = 0;
  int client = 0, n = 0;
  char kind = 0;
  for (std::string line; std::getline(lines, line) && n < 1000000; ++n) {
    ASSERT_EQ(std::sscanf(line.c_str(), "%lld %c %d %lld", &pass, &kind, &client, &t_us), 4) << line;
    EXPECT_GE(pass, last_pass) << line;
    EXPECT_GE(t_us, last_t_us) << line;  // one client process: its steps in time order
    EXPECT_TRUE(kind == 'E' ? client == -1 : client >= 0 && client < 20) << line;
    ++kinds[kind];
    last_pass = pass;
    last_t_us = t_us;
  }
  for (char k : {'T', 'W', 'R', 'E'}) EXPECT_GT(kinds[k], 0) << k;
  EXPECT_EQ(kinds['W'], kinds['R']);  // every held command written, and its reply read, once
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
  EXPECT_FALSE(nlohmann::json::parse(ra)["context"].contains("machine_after"));
  EXPECT_NE(ra, rc);
  EXPECT_FALSE(std::filesystem::exists(Path("a.json.tmp")));
}

TEST_F(CliTest, ALegacyRunReplaysFromItsReport) {
  const std::vector<std::string> args = {"run",     "--algorithm", "token",         "--clients", "3",
                                         "--requests", "20",       "--quiet",       "--no-progress"};
  std::vector<std::string> a = args, d = args;
  a.insert(a.end(), {"--profile", "legacy", "--out", Path("a.json")});
  d.insert(d.end(), {"--out", Path("d.json")});
  ASSERT_EQ(Cli(a), kExitOk);
  ASSERT_EQ(Cli(d), kExitOk);
  const nlohmann::json ra = nlohmann::json::parse(ReadAll(Path("a.json")));
  EXPECT_EQ(ra["config"]["profile"], "legacy");
  EXPECT_EQ(ra["config"]["profile_name"], "builtin-legacy");
  EXPECT_NE(ra["runs"][0]["replay"].get<std::string>().find("--profile legacy"), std::string::npos);
  const nlohmann::json rd = nlohmann::json::parse(ReadAll(Path("d.json")));
  EXPECT_EQ(rd["config"]["profile"], "default");
  EXPECT_EQ(rd["runs"][0]["replay"].get<std::string>().find("--profile"), std::string::npos);
  EXPECT_NE(ra["runs"][0]["duration_ms"], rd["runs"][0]["duration_ms"]);  // the costs differ
  // The report's config runs the same run again.
  ASSERT_EQ(Cli({"run", "--config", Path("a.json"), "--quiet", "--no-progress", "--out", Path("b.json")}), kExitOk);
  EXPECT_EQ(ReadAll(Path("a.json")), ReadAll(Path("b.json")));
}

TEST_F(CliTest, SuiteWritesOneReportPerPreset) {
  SuiteOptions o;
  o.out_dir = dir_.string();
  o.clients = 3;
  o.requests = 20;
  o.progress = false;
  std::ostringstream out;
  const Status st = RunSuite(o, out);
  ASSERT_TRUE(st.ok()) << st.message();
  for (const SuitePreset& p : SuitePresets())
    EXPECT_TRUE(std::filesystem::exists(SuiteReportPath(o, "sim", p))) << p.name;
  const std::string table = out.str();
  for (const char* s : {"none", "gc-pause", "net-delay", "clock-skew", "token", "redlock", "viol", "p99 ms"})
    EXPECT_NE(table.find(s), std::string::npos) << s << "\n" << table;
}

}  // namespace
}  // namespace locklab
