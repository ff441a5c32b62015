// bench-peers pieces: a driver's event log becomes a History the checkers judge, commandstats
// deltas, redis-benchmark's output, a driver's time limit, and (when the peers are installed)
// one tiny real run of each peer driver; a small whole run of locklab's own rows.
#include "harness/bench/bench_peers.h"
#include "harness/bench/redis_benchmark.h"
#include "harness/real/redis_server.h"
#include "harness/testing/cli_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

namespace locklab {
namespace {

// Two clients on one key: 1 holds [1000, 5000] µs, 2 enters at 3000 while 1 still holds. Both read
// 0 and write 1: one increment is lost. Times are raw monotonic µs (the bench shifts them).
const char* kOverlapLog = R"({"t_us":1000000,"client":1,"ev":"acquire_start","key":"k"}
{"t_us":1000100,"client":1,"ev":"acquire_ok"}
{"t_us":1000100,"client":1,"ev":"enter","read":0}
{"t_us":1002000,"client":2,"ev":"acquire_start","key":"k"}
{"t_us":1003000,"client":2,"ev":"acquire_ok"}
{"t_us":1003000,"client":2,"ev":"enter","read":0}
{"t_us":1004000,"client":2,"ev":"exit","wrote":1}
{"t_us":1004100,"client":2,"ev":"release_ok"}
{"t_us":1005000,"client":1,"ev":"exit","wrote":1}
{"t_us":1005200,"client":1,"ev":"release_fail"}
)";

// The same two clients, one after the other (the second enters at the instant the first leaves:
// a handoff, not an overlap), and a third that gives up after 500 ms.
const char* kCleanLog = R"({"t_us":1000000,"client":1,"ev":"acquire_start","key":"k"}
{"t_us":1000100,"client":1,"ev":"acquire_ok"}
{"t_us":1000100,"client":1,"ev":"enter","read":0}
{"t_us":1002000,"client":2,"ev":"acquire_start","key":"k"}
{"t_us":1002000,"client":3,"ev":"acquire_start","key":"k"}
{"t_us":1005000,"client":1,"ev":"exit","wrote":1}
{"t_us":1005000,"client":2,"ev":"acquire_ok"}
{"t_us":1005000,"client":2,"ev":"enter","read":1}
{"t_us":1005100,"client":1,"ev":"release_ok"}

{"t_us":1006000,"client":2,"ev":"exit","wrote":2}
{"t_us":1006100,"client":2,"ev":"release_ok"}
{"t_us":1502000,"client":3,"ev":"acquire_fail"}
)";

RowCheck Judge(const std::string& text, int64_t counter_final, bool per_key = false) {
  PeerLog log;
  const Status parsed = ParsePeerEventLog(text, &log);
  EXPECT_TRUE(parsed.ok()) << parsed.message();
  std::vector<Event> events = log.events;
  ShiftToEarliest(&events);
  JudgeInput in;
  if (per_key) in.key_of_client = log.key_of_client;
  in.counter_known = !per_key;
  in.counter_final = counter_final;
  return JudgeEvents(events, in);
}

TEST(PeerEventLog, AnOverlapIsFlagged) {
  const RowCheck r = Judge(kOverlapLog, 1);
  EXPECT_EQ(r.check.safety.violations, 1);
  EXPECT_EQ(r.check.safety.max_concurrent_holders, 2);
  ASSERT_EQ(r.check.safety.overlapping_pairs.size(), 1u);
  EXPECT_EQ(r.check.safety.overlapping_pairs[0], std::make_pair(1, 2));
  EXPECT_NEAR(r.check.safety.overlap_ms_total, 1.0, 1e-9);  // [3000, 4000] µs
  EXPECT_TRUE(r.counter_judged);
  EXPECT_EQ(r.lost_updates, 1);
  EXPECT_EQ(r.acquired, 2);
  EXPECT_EQ(r.releases_failed, 1);
}

TEST(PeerEventLog, NoOverlapIsNotFlagged) {
  const RowCheck r = Judge(kCleanLog, 2);
  EXPECT_EQ(r.check.safety.violations, 0);
  EXPECT_EQ(r.check.safety.max_concurrent_holders, 1);
  EXPECT_TRUE(r.check.safety.overlapping_pairs.empty());
  EXPECT_EQ(r.lost_updates, 0);
  EXPECT_EQ(r.acquired, 2);
  EXPECT_EQ(r.failed, 1);
  // acquire: successful ones only (0.1 ms and 3 ms); wait: every request, the failure's 500 ms too.
  EXPECT_EQ(r.acquire.count, 2);
  EXPECT_NEAR(r.acquire.max, 3.0, 1e-9);
  EXPECT_EQ(r.wait.count, 3);
  EXPECT_NEAR(r.wait.max, 500.0, 1e-9);
  // 2 acquisitions over 0.502 s, from the first acquire_start to the last event.
  EXPECT_NEAR(r.span_s, 0.502, 1e-9);
  EXPECT_NEAR(r.rate_per_s, 2 / 0.502, 1e-6);
}

TEST(PeerEventLog, TimesAreShiftedToTheEarliestEventAndSorted) {
  PeerLog log;
  const Status parsed = ParsePeerEventLog("{\"t_us\":500,\"client\":1,\"ev\":\"acquire_start\"}\n"
                                          "{\"t_us\":200,\"client\":0,\"ev\":\"acquire_start\"}\n"
                                          "{\"t_us\":700,\"client\":0,\"ev\":\"enter\",\"read\":4}\n",
                                          &log);
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  std::vector<Event> ev = log.events;
  EXPECT_EQ(ShiftToEarliest(&ev), 200);
  ASSERT_EQ(ev.size(), 4u);  // enter -> kEnter + kRead
  EXPECT_EQ(ev[0].t_us, 0);
  EXPECT_EQ(ev[0].client, 0);
  EXPECT_EQ(ev[1].t_us, 300);
  EXPECT_EQ(ev[2].type, Ev::kEnter);
  EXPECT_EQ(ev[3].type, Ev::kRead);
  EXPECT_EQ(ev[3].value, 4);
}

TEST(PeerEventLog, OverlapsOnDifferentKeysAreNotViolations) {
  std::string two_keys = kOverlapLog;
  // Client 2 locks another key.
  const std::string from = "\"client\":2,\"ev\":\"acquire_start\",\"key\":\"k\"";
  two_keys.replace(two_keys.find(from), from.size(), "\"client\":2,\"ev\":\"acquire_start\",\"key\":\"k2\"");
  const RowCheck r = Judge(two_keys, 1, /*per_key=*/true);
  EXPECT_EQ(r.check.safety.violations, 0);
  EXPECT_FALSE(r.counter_judged);
  // The same log judged as one key still flags it.
  EXPECT_EQ(Judge(two_keys, 1, /*per_key=*/false).check.safety.violations, 1);
}

TEST(PeerEventLog, BadLinesAreErrorsNamingTheLine) {
  PeerLog log;
  Status st = ParsePeerEventLog("{\"t_us\":1,\"client\":0,\"ev\":\"acquire_start\"}\n{\"t_us\":2,\"client\":0,\"ev\":\"grab\"}\n",
                                &log);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("line 2"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("grab"), std::string::npos) << st.message();
  st = ParsePeerEventLog("{\"client\":0,\"ev\":\"enter\"}\n", &log);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("t_us"), std::string::npos) << st.message();
  EXPECT_FALSE(ParsePeerEventLog("not json\n", &log).ok());
  EXPECT_FALSE(ParsePeerEventLog("{\"t_us\":1,\"client\":0,\"ev\":\"enter\",\"read\":\"x\"}\n", &log).ok());
}

TEST(PeerEventLog, CrashEndsTheHold) {
  // A crash (redis-semaphore's onLockLost kills the process) ends a hold like an exit.
  const RowCheck r = Judge(R"({"t_us":0,"client":0,"ev":"acquire_start"}
{"t_us":10,"client":0,"ev":"acquire_ok"}
{"t_us":10,"client":0,"ev":"enter","read":0}
{"t_us":100,"client":0,"ev":"crash","error":"Lost mutex"}
{"t_us":200,"client":1,"ev":"acquire_start"}
{"t_us":300,"client":1,"ev":"acquire_ok"}
{"t_us":300,"client":1,"ev":"enter","read":0}
{"t_us":400,"client":1,"ev":"exit","wrote":1}
)",
                           1);
  EXPECT_EQ(r.check.safety.violations, 0);
  EXPECT_EQ(r.lost_updates, 0);
}

TEST(CommandStats, ParseAndDelta) {
  const std::string info =
      "# Commandstats\r\n"
      "cmdstat_set:calls=10,usec=40,usec_per_call=4.00,rejected_calls=0,failed_calls=0\r\n"
      "cmdstat_evalsha:calls=7,usec=70,usec_per_call=10.00,rejected_calls=0,failed_calls=0\r\n"
      "cmdstat_info:calls=3,usec=9,usec_per_call=3.00,rejected_calls=0,failed_calls=0\r\n"
      "cmdstat_script|load:calls=1,usec=9,usec_per_call=9.00,rejected_calls=0,failed_calls=0\r\n";
  const auto m = ParseCommandStats(info);
  EXPECT_EQ(m.at("SET"), 10);
  EXPECT_EQ(m.at("EVALSHA"), 7);
  EXPECT_EQ(m.at("INFO"), 3);
  EXPECT_EQ(m.at("SCRIPT|LOAD"), 1);

  // Two servers. Server 0: SET +5, EVALSHA +5, GET new (+5), INFO left out. Server 1: DEL +2.
  std::vector<std::map<std::string, int64_t>> before = {{{"SET", 10}, {"EVALSHA", 7}, {"INFO", 3}},
                                                        {{"DEL", 1}, {"INFO", 1}}};
  std::vector<std::map<std::string, int64_t>> after = {{{"SET", 15}, {"EVALSHA", 12}, {"GET", 5}, {"INFO", 9}},
                                                       {{"DEL", 3}, {"INFO", 2}}};
  CommandDelta d = CommandStatsDelta(before, after, {"INFO"});
  EXPECT_EQ(d.total, 17);
  EXPECT_EQ(d.by_name.at("SET"), 5);
  EXPECT_EQ(d.by_name.at("EVALSHA"), 5);
  EXPECT_EQ(d.by_name.at("GET"), 5);
  EXPECT_EQ(d.by_name.at("DEL"), 2);
  EXPECT_EQ(d.by_name.count("INFO"), 0u);
  EXPECT_FALSE(d.counter_went_back);
  // Unchanged commands are not listed; nothing excluded counts INFO too.
  EXPECT_EQ(CommandStatsDelta(before, before, {}).total, 0);
  EXPECT_EQ(CommandStatsDelta(before, after, {}).total, 17 + 6 + 1);
  // A server whose counters started again (restart): its after-value counts, and it is said.
  CommandDelta back = CommandStatsDelta({{{"SET", 100}}}, {{{"SET", 4}}}, {});
  EXPECT_TRUE(back.counter_went_back);
  EXPECT_EQ(back.total, 4);
  // A server missing from `before` counts from zero.
  EXPECT_EQ(CommandStatsDelta({}, {{{"SET", 4}}}, {}).total, 4);
}

TEST(RedisBenchmark, RateFromQuietOutput) {
  EXPECT_DOUBLE_EQ(ParseRedisBenchmarkRps("SET bench:__rand_int__ tok NX PX 10000: rps=12000.0 (overall: 11000.0) "
                                          "avg_msec=0.050 (overall: 0.051)\r"
                                          "SET bench:__rand_int__ tok NX PX 10000: 15760.01 requests per second, "
                                          "p50=0.055 msec\n"),
                   15760.01);
  EXPECT_LT(ParseRedisBenchmarkRps("Could not connect to Redis at 127.0.0.1:1: Connection refused\n"), 0);
  EXPECT_LT(ParseRedisBenchmarkRps(""), 0);
}

TEST(PeerDriver, ATimeLimitKillsTheDriver) {
  const std::string dir = testing::TempDir();
  DriverCall call;
  call.argv = {"sleep", "30"};
  call.events_path = dir + "/never.jsonl";
  call.timeout_ms = 200;
  const auto start = std::chrono::steady_clock::now();
  DriverResult r = RunDriver(call);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("did not finish"), std::string::npos) << r.error;
  DriverCall missing;
  missing.argv = {"/nonexistent/locklab-peer"};
  missing.events_path = dir + "/never.jsonl";
  missing.timeout_ms = 5000;
  DriverResult m = RunDriver(missing);
  EXPECT_FALSE(m.ok);
  EXPECT_NE(m.error.find("could not start"), std::string::npos) << m.error;
}

// --- One tiny real run per peer, when it is installed. ---

// Failed saying why when the node peers cannot run here.
Status NodePeersInstalled() {
  const std::string nm = DefaultPeerModulesDir() + "/node_modules";
  for (const char* pkg : {"redlock", "redis-semaphore", "ioredis", "@sesamecare-oss/redlock", "redlock-universal"})
    if (!std::filesystem::exists(nm + "/" + pkg + "/package.json"))
      return Status::Failed(std::string("node peers not installed (") + nm + "/" + pkg +
                            " missing; `make test` and `make bench-peers` install them from the npm registry)");
  if (std::system("node --version >/dev/null 2>&1") != 0) return Status::Failed("node is not on PATH");
  return Status::Ok();
}

Status PythonPeerInstalled() {
  if (std::system("/usr/bin/python3 -c 'import redis' >/dev/null 2>&1") != 0)
    return Status::Failed(
        "redis-py not importable by /usr/bin/python3 (Debian package python3-redis; `make test` and `make bench-peers` install it)");
  return Status::Ok();
}

// The history the driver wrote itself (--history-out, the format of `locklab check`), judged by
// `locklab check`: the verdicts of the bench's own judgement of its event log (the history's holds
// start at the acquire's ok, the log's at the enter a moment later: no verdict here depends on it).
void CheckDriverHistory(const std::string& history, const JudgeInput& in, const RowCheck& c, const std::string& name) {
  const std::string report = testing::TempDir() + "/tiny-" + name + "-check.json";
  ::testing::internal::CaptureStdout();
  const int code = Cli({"check", history, "--out", report, "--quiet"});
  ::testing::internal::GetCapturedStdout();
  ASSERT_EQ(code, 0);
  const nlohmann::json run = nlohmann::json::parse(ReadAll(report))["runs"][0];
  EXPECT_EQ(run["safety"]["violations"].get<int64_t>(), c.check.safety.violations);
  EXPECT_EQ(run["safety"]["resource"]["lost_updates"].get<int64_t>(), c.lost_updates);
  EXPECT_EQ(run["safety"]["resource"]["writes_accepted"].get<int64_t>(), c.acquired);
  EXPECT_EQ(run["safety"]["resource"]["counter_final"].get<int64_t>(), in.counter_final);
  EXPECT_EQ(run["liveness"]["acquired"].get<int64_t>(), c.acquired);
  EXPECT_EQ(run["liveness"]["failed"].get<int64_t>() + run["liveness"]["unknown"].get<int64_t>(), c.failed);
  EXPECT_EQ(run["liveness"]["releases_failed"].get<int64_t>(), c.check.liveness.releases_failed);
  EXPECT_EQ(run["fairness"]["clients"].get<int64_t>(), 3);
  std::filesystem::remove(history);
  std::filesystem::remove(report);
}

void TinyRealRun(const std::vector<std::string>& program, const std::string& name) {
  std::string error;
  RedisServerOptions so;
  Result<std::unique_ptr<RedisServers>> started = RedisServers::Start(so);
  ASSERT_TRUE(started.ok()) << started.status().message();
  std::unique_ptr<RedisServers> servers = std::move(started).value();
  DriverCall call;
  call.argv = program;
  call.events_path = testing::TempDir() + "/tiny-" + name + ".jsonl";
  call.extra_env = {"NODE_PATH=" + DefaultPeerModulesDir() + "/node_modules", "PYTHONDONTWRITEBYTECODE=1"};
  call.timeout_ms = 30'000;
  for (const std::string& a : {std::string("--ports"), std::to_string(servers->port(0)), std::string("--events"),
                               call.events_path, std::string("--clients"), std::string("3"), std::string("--count"),
                               std::string("30"), std::string("--key"), std::string("tiny"),
                               std::string("--deadline-ms"), std::string("20000"), std::string("--history-out"),
                               testing::TempDir() + "/tiny-" + name + "-history.jsonl"})
    call.argv.push_back(a);
  DriverResult r = RunDriver(call);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.summary["acquired"].get<int64_t>(), 30);
  std::vector<Event> events = r.log.events;
  ShiftToEarliest(&events);
  JudgeInput in;
  in.key_of_client = r.log.key_of_client;
  in.counter_known = true;
  in.counter_final = r.summary["counter_final"].get<int64_t>();
  const RowCheck c = JudgeEvents(events, in);
  EXPECT_EQ(c.acquired, 30);
  EXPECT_EQ(c.failed, 0);
  EXPECT_EQ(c.check.safety.violations, 0);
  EXPECT_EQ(c.lost_updates, 0);
  EXPECT_EQ(in.counter_final, 30);
  EXPECT_GT(c.rate_per_s, 0);
  std::filesystem::remove(call.events_path);
  CheckDriverHistory(testing::TempDir() + "/tiny-" + name + "-history.jsonl", in, c, name);
}

// A peer that is not installed skips its test, except on CI (CI=true), where `make test` has
// installed every peer and a missing one is a failure.
bool OnCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}
#define REQUIRE_PEER(check)                                                                        \
  if (const Status peer_status = (check); !peer_status.ok()) {                                    \
    if (OnCi()) FAIL() << peer_status.message() << " (CI=true: make test installs the peers)";  \
    GTEST_SKIP() << peer_status.message();                                                         \
  }

TEST(PeerDriver, TinyNodeRedlockRun) {
  REQUIRE_PEER(NodePeersInstalled());
  TinyRealRun({"node", DefaultPeerDriversDir() + "/node_peer.js", "--lib", "redlock"}, "redlock");
}

TEST(PeerDriver, TinyRedisSemaphoreRun) {
  REQUIRE_PEER(NodePeersInstalled());
  TinyRealRun({"node", DefaultPeerDriversDir() + "/node_peer.js", "--lib", "semaphore-mutex"}, "semaphore");
}

TEST(PeerDriver, TinySesameRedlockRun) {
  REQUIRE_PEER(NodePeersInstalled());
  TinyRealRun({"node", DefaultPeerDriversDir() + "/node_peer.js", "--lib", "sesame-redlock"}, "sesame-redlock");
}

TEST(PeerDriver, TinyRedlockUniversalRun) {
  REQUIRE_PEER(NodePeersInstalled());
  TinyRealRun({"node", DefaultPeerDriversDir() + "/node_peer.js", "--lib", "universal-redlock"}, "universal");
}

TEST(PeerDriver, TinyRedisPyRun) {
  REQUIRE_PEER(PythonPeerInstalled());
  TinyRealRun({"/usr/bin/python3", DefaultPeerDriversDir() + "/py_peer.py"}, "redis-py");
}

// --- A small whole run of locklab's rows (no peers needed). ---

TEST(BenchPeersRun, LocklabRowsWithDefaultsAndTheLimitInRounds) {
  BenchPeersOptions o;
  o.out = testing::TempDir() + "/bench-peers-small.json";
  o.only = {"locklab-token", "locklab-fifo"};
  o.clients = 5;
  o.duration_ms = 200;
  o.count = 100;
  o.rounds = 2;
  o.pause = false;
  o.pin = false;        // leave this test process's CPUs alone
  o.idle_poll = false;  // and the machine's idle states
  o.progress = false;
  std::ostringstream table;
  const Status ran = RunBenchPeers(o, table);
  ASSERT_TRUE(ran.ok()) << ran.message() << table.str();
  std::ifstream in(o.out);
  const nlohmann::json r = nlohmann::json::parse(in);
  std::filesystem::remove(o.out);

  // The limit: one figure per round for each client count, the median shown.
  ASSERT_EQ(r["limit"].size(), 2u);
  for (const auto& l : r["limit"]) {
    ASSERT_EQ(l["round_pairs_per_s"].size(), 2u) << l.dump();
    EXPECT_GT(l["pairs_per_s"].get<double>(), 0);
  }
  std::set<std::string> seen;
  for (const auto& row : r["rows"]) {
    const std::string id = row["workload"].get<std::string>() + " " + row["implementation"].get<std::string>() +
                           " " + row["setting"].get<std::string>();
    seen.insert(id);
    ASSERT_TRUE(row["ran"].get<bool>()) << row.dump();
    EXPECT_EQ(row["safety"]["violations"].get<int64_t>(), 0) << id;
    EXPECT_EQ(row["failed"].get<int64_t>(), 0) << id;
    const std::string retry = row["options"]["retry"].get<std::string>();
    if (row["setting"] == "default" || row["implementation"] == "locklab-fifo")
      EXPECT_EQ(retry, "auto") << id;  // `locklab run`'s policy; fifo waits in its own queue
    else
      EXPECT_EQ(retry, "queue") << id;
    if (row["workload"] != "contended" && row["implementation"] == "locklab-token") {
      // The target row: measured in rounds; its figure is one of them (the median).
      ASSERT_EQ(row["round_acquisitions_per_s"].size(), 2u) << id;
      const double rate = row["acquisitions_per_s"].get<double>();
      bool one_of_them = false;
      for (const auto& x : row["round_acquisitions_per_s"]) one_of_them |= std::abs(x.get<double>() - rate) < 0.01;
      EXPECT_TRUE(one_of_them) << row.dump();
      // Two commands per acquisition, as in the limit: no wake-up policy's extra command.
      EXPECT_EQ(row["commands"]["sent_per_acquisition"].get<double>(), 2.0) << id;
    }
    if (row["workload"] == "contended") {
      EXPECT_EQ(row["counter"]["lost_updates"].get<int64_t>(), 0) << id;
      EXPECT_EQ(row["acquisitions"].get<int64_t>(), 100) << id;
    }
  }
  for (const char* want : {"uncontended-1 locklab-token default", "uncontended-keys locklab-token default",
                           "contended locklab-token default", "contended locklab-token retry=queue",
                           "contended locklab-fifo own queue"})
    EXPECT_TRUE(seen.count(want)) << want;
  EXPECT_FALSE(seen.count("uncontended-1 locklab-token retry=queue"));  // the policy is idle there
  EXPECT_NE(table.str().find("rounds:"), std::string::npos) << table.str();
}

TEST(BenchPeersRun, BadRoundsIsAnOptionError) {
  BenchPeersOptions o;
  o.rounds = 0;
  std::ostringstream table;
  const Status s = RunBenchPeers(o, table);
  EXPECT_TRUE(s.invalid());  // exit status 2
  EXPECT_NE(s.message().find("--rounds"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace locklab
