#include "harness/testing/temp_dir_test.h"
#include "harness/report/report.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "harness/cli/cli.h"
#include "harness/run/config.h"
#include "harness/report/report_text.h"
#include "harness/testing/test_specs.h"

namespace locklab {
namespace {

using nlohmann::json;

// A result as RunOne would return it, built by hand: two clients overlapping for 250 ms.
RunResult FakeResult(const std::string& algorithm, uint64_t seed) {
  RunResult r;
  r.spec.algorithm = algorithm;
  r.spec.seed = seed;
  r.spec.faults.gc_pause_ms = 1500;
  r.spec.faults.gc_pause_rate = 0.5;
  std::string error;
  EXPECT_TRUE(ResolveSpec(&r.spec).ok(&error)) << error;
  r.completed = true;
  r.duration_us = 2'000'000;
  r.commands.total = 30;
  r.commands.by_name = {{"SET", 20}, {"compare_and_delete", 10}};
  r.check.liveness.acquired = 9;
  r.check.liveness.stuck_ms_max = 1.0 / 3.0;
  r.check.latency.acquire = {9, 1.0, 2.0, 1.23456, 4.0, 1.5, {}};
  r.check.safety.violations = 1;
  r.check.safety.overlap_ms_total = 250;
  r.check.safety.max_concurrent_holders = 2;
  r.check.safety.overlapping_pairs = {{0, 1}};
  r.check.resource.lost_updates = 1;
  Violation v;
  v.start_us = 1'000'000;
  v.end_us = 1'250'000;
  v.clients = {0, 1};
  v.timeline = {{0, 0, Ev::kAcquireStart, 0, ""},
                {100, 0, Ev::kEnter, -1, ""},
                {100'000, 0, Ev::kPauseStart, 1'500'000, ""},
                {1'000'000, 1, Ev::kCommand, 0, "SET locklab:lock b NX PX 1000 -> OK"},
                {1'000'000, 1, Ev::kEnter, -1, ""},
                {1'100'000, -1, Ev::kFault, 0, "node 0 clock jump"},
                {1'250'000, 1, Ev::kExit, 0, ""}};
  r.check.safety.examples.push_back(v);
  return r;
}

TEST(Report, HasTheRequiredFields) {
  const std::vector<RunResult> runs = {FakeResult("token", 7)};
  const json rep = BuildReport(runs, MakeReportContext(runs));
  EXPECT_EQ(rep["schema"], "locklab.report/1");
  const json& ctx = rep["context"];
  for (const char* k : {"tool_version", "git_sha", "backend", "seed"}) EXPECT_TRUE(ctx.contains(k)) << k;
  EXPECT_EQ(ctx["backend"], "sim");
  EXPECT_EQ(ctx["seed"], 7);
  EXPECT_FALSE(ctx.contains("started_at"));  // sim reports carry no wall time
  EXPECT_FALSE(ctx.contains("host"));
  EXPECT_EQ(rep["config"], ToJson(runs[0].spec));

  const json& run = rep["runs"][0];
  for (const char* k :
       {"algorithm", "algorithm_options", "retry", "retry_options", "workload", "faults", "config", "completed",
        "error", "safety", "liveness", "latency_ms", "redis", "throughput_per_s", "duration_ms", "notes", "replay"})
    EXPECT_TRUE(run.contains(k)) << k;
  EXPECT_EQ(run["safety"]["violations"], 1);
  EXPECT_EQ(run["safety"]["overlapping_pairs"], json::parse("[[0, 1]]"));
  for (const char* k :
       {"writes_accepted", "lost_updates", "orders", "oversold", "stale_writes_accepted", "stale_writes_rejected"})
    EXPECT_TRUE(run["safety"]["resource"].contains(k)) << k;
  for (const char* k : {"acquired", "failed", "unknown", "releases_failed", "releases_unknown", "stuck_ms_max"})
    EXPECT_TRUE(run["liveness"].contains(k)) << k;
  for (const char* l : {"acquire", "hold", "release", "request"})
    for (const char* k : {"count", "p50", "p90", "p99", "max", "mean"})
      EXPECT_TRUE(run["latency_ms"][l].contains(k)) << l << "." << k;
  EXPECT_EQ(run["liveness"]["acquired"], 9);
  EXPECT_DOUBLE_EQ(run["latency_ms"]["acquire"]["p99"].get<double>(), 1.235);  // rounded to 3 decimals
  EXPECT_DOUBLE_EQ(run["liveness"]["stuck_ms_max"].get<double>(), 0.333);
  EXPECT_DOUBLE_EQ(run["redis"]["commands_per_acquire"].get<double>(), 3.333);
  EXPECT_EQ(run["redis"]["by_name"]["SET"], 20);
  EXPECT_DOUBLE_EQ(run["throughput_per_s"].get<double>(), 4.5);
  EXPECT_EQ(run["replay"], ReplayCommand(runs[0].spec));

  const json& ex = run["safety"]["examples"][0];
  EXPECT_DOUBLE_EQ(ex["start_ms"].get<double>(), 1000.0);
  EXPECT_EQ(ex["clients"], json({0, 1}));
  EXPECT_EQ(ex["replay"], run["replay"]);  // every violation says how to replay it
  const json& ev = ex["timeline"][1];
  for (const char* k : {"t_ms", "client", "event", "detail"}) EXPECT_TRUE(ev.contains(k)) << k;
  EXPECT_DOUBLE_EQ(ev["t_ms"].get<double>(), 0.1);
  EXPECT_EQ(ev["event"], "enter");
}

TEST(Report, SameInputSameBytes) {
  const std::vector<RunResult> runs = {FakeResult("token", 1), FakeResult("fencing", 1)};
  const std::string a = ReportText(BuildReport(runs, MakeReportContext(runs)));
  const std::string b = ReportText(BuildReport(runs, MakeReportContext(runs)));
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.back(), '\n');
}

TEST(Report, RedisContextHasHostAndStartTime) {
  std::vector<RunResult> runs = {FakeResult("token", 1)};
  runs[0].spec.backend = "redis";
  const ReportContext c = MakeReportContext(runs);
  EXPECT_EQ(c.backend, "redis");
  EXPECT_FALSE(c.host.empty());
  EXPECT_EQ(c.started_at.size(), 20u) << c.started_at;  // 2024-05-01T12:00:00Z
  const json rep = BuildReport(runs, c);
  EXPECT_TRUE(rep["context"].contains("started_at"));
  EXPECT_TRUE(rep["context"].contains("host"));
}

TEST(Report, SweepConfigLoadsBackAsTheSameRuns) {
  ConfigFile cfg;
  std::string error;
  ASSERT_TRUE(ConfigFromJson(json::parse(R"({"algorithms": ["token:release=del", "fencing"], "seeds": [3, 4],
                                              "clients": 4})"),
                             &cfg)
                  .ok(&error));
  std::vector<RunResult> runs;
  for (RunSpec s : ExpandSweep(cfg)) {
    ASSERT_TRUE(ResolveSpec(&s).ok(&error)) << error;
    runs.push_back(RunResult{});
    runs.back().spec = s;
  }
  const json config = BuildReport(runs, MakeReportContext(runs))["config"];
  EXPECT_TRUE(config.contains("algorithms"));
  EXPECT_TRUE(config.contains("seeds"));
  ConfigFile back;
  ASSERT_TRUE(ConfigFromJson(config, &back).ok(&error)) << error;
  const std::vector<RunSpec> again = ExpandSweep(back);
  ASSERT_EQ(again.size(), runs.size());
  for (size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(ToJson(again[i]), ToJson(runs[i].spec)) << i;
}

// Splits a command line as a POSIX shell would for what ShellQuote produces.
std::vector<std::string> ShellSplit(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool in_word = false, quoted = false, escaped = false;
  for (char c : line) {
    if (escaped) {
      cur += c;
      escaped = false;
    } else if (quoted) {
      if (c == '\'')
        quoted = false;
      else
        cur += c;
    } else if (c == '\'') {
      quoted = in_word = true;
    } else if (c == '\\') {
      escaped = in_word = true;
    } else if (c == ' ') {
      if (in_word) out.push_back(cur);
      cur.clear();
      in_word = false;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (in_word) out.push_back(cur);
  return out;
}

void ExpectReplayRoundTrip(RunSpec spec) {
  std::string error;
  ASSERT_TRUE(ResolveSpec(&spec).ok(&error)) << error;
  const std::string cmd = ReplayCommand(spec);
  std::vector<std::string> words = ShellSplit(cmd);
  ASSERT_GE(words.size(), 2u);
  EXPECT_EQ(words[0], "locklab");
  EXPECT_EQ(words[1], "run");
  Result<RunRequest> parsed = ParseRunArgs(std::vector<std::string>(words.begin() + 2, words.end()));
  ASSERT_TRUE(parsed.ok(&error)) << cmd << ": " << error;
  const RunRequest& req = *parsed;
  ASSERT_EQ(req.specs.size(), 1u);
  RunSpec back = req.specs[0];
  ASSERT_TRUE(ResolveSpec(&back).ok(&error)) << error;
  EXPECT_EQ(ToJson(back).dump(), ToJson(spec).dump()) << cmd;
}

TEST(Replay, DefaultSpecIsShort) {
  RunSpec s;
  std::string error;
  ASSERT_TRUE(ResolveSpec(&s).ok(&error));
  EXPECT_EQ(ReplayCommand(s), "locklab run --backend sim --algorithm token --seed 1");
  ExpectReplayRoundTrip(s);
}

TEST(Replay, EveryFieldRoundTrips) {
  RunSpec s = FullSpec();
  ExpectReplayRoundTrip(s);
  // The default retry policy with a non-default option still replays it.
  RunSpec r;
  r.retry_options.Set("sleep-ms", "3");
  ExpectReplayRoundTrip(r);
  EXPECT_NE(ReplayCommand(r).find("--retry-opt sleep-ms=3"), std::string::npos) << ReplayCommand(r);
}

TEST(Replay, RedisBackendWithServers) {
  RunSpec s;
  s.backend = "redis";
  s.algorithm = "redlock";
  s.redis = {"127.0.0.1:7001", "127.0.0.1:7002", "127.0.0.1:7003", "127.0.0.1:7004", "127.0.0.1:7005"};  // 5 nodes
  ExpectReplayRoundTrip(s);
}

TEST(Replay, QuotesWhatTheShellWouldSplit) {
  EXPECT_EQ(ShellQuote("token"), "token");
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellSplit("x " + ShellQuote("it's a b")), (std::vector<std::string>{"x", "it's a b"}));
}

class AtomicWrite : public TempDirTest {
 protected:
  AtomicWrite() : TempDirTest("locklab_report_test") {}
};

std::string ReadAll(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST_F(AtomicWrite, CreatesDirectoriesAndLeavesNoTmp) {
  const std::filesystem::path path = dir_ / "a" / "b" / "report.json";
  std::string error;
  ASSERT_TRUE(WriteFileAtomic(path.string(), "{}\n").ok(&error)) << error;
  EXPECT_EQ(ReadAll(path), "{}\n");
  ASSERT_TRUE(WriteFileAtomic(path.string(), "{\"x\": 1}\n").ok(&error)) << error;  // replaces
  EXPECT_EQ(ReadAll(path), "{\"x\": 1}\n");
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(path.parent_path())) {
    ++files;
    EXPECT_NE(e.path().extension(), ".tmp") << e.path();
  }
  EXPECT_EQ(files, 1);
}

TEST_F(AtomicWrite, FailureIsOneClearLine) {
  std::filesystem::create_directories(dir_);
  std::ofstream(dir_ / "file") << "x";
  std::string error;
  EXPECT_FALSE(WriteFileAtomic((dir_ / "file" / "report.json").string(), "{}").ok(&error));  // parent is a file
  EXPECT_FALSE(error.empty());
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

TEST(ReportText, RunsTableHasOneRowPerRun) {
  const std::vector<RunResult> runs = {FakeResult("token", 1), FakeResult("fencing", 2)};
  const std::string t = RunsTable(runs);
  std::istringstream in(t);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 3u) << t;
  EXPECT_NE(lines[0].find("viol"), std::string::npos);
  EXPECT_NE(lines[0].find("seed"), std::string::npos);  // the runs differ in seed
  EXPECT_NE(lines[1].find("token"), std::string::npos);
  EXPECT_NE(lines[1].find("gc 1500ms x0.5/s"), std::string::npos);
  EXPECT_NE(lines[2].find("fencing"), std::string::npos);
}

TEST(ReportText, TimelineMarksTheOverlap) {
  const Violation v = FakeResult("token", 1).check.safety.examples[0];
  const std::string t = TimelineTable(v);
  std::istringstream in(t);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 1 + v.timeline.size()) << t;
  EXPECT_NE(lines[0].find("client 0"), std::string::npos) << t;
  EXPECT_NE(lines[0].find("client 1"), std::string::npos) << t;
  EXPECT_NE(lines[0].find("other"), std::string::npos) << t;   // the node fault
  EXPECT_EQ(lines[1].rfind("!!", 0), std::string::npos) << t;  // before the overlap
  EXPECT_EQ(lines[4].rfind("!!", 0), 0u) << t;                 // the second enter
  EXPECT_EQ(lines.back().rfind("!!", 0), 0u) << t;
  EXPECT_NE(t.find("[n0] SET locklab:lock b NX PX 1000 -> OK"), std::string::npos) << t;
  EXPECT_NE(t.find("pause_start 1500ms"), std::string::npos) << t;
}

}  // namespace
}  // namespace locklab
