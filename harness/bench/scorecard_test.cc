// The scorecard's pieces: the plan (who gets which fault, the timelines), the judge on
// hand-written histories with known answers, the merge of histories, the command's bad input,
// and a few real trials (locklab's token lock always; node-redlock and redis-py when installed).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>
#include <string>

#include "harness/bench/peer_driver.h"
#include "harness/bench/scorecard.h"
#include "harness/bench/scorecard_judge.h"
#include "harness/bench/scorecard_plan.h"
#include "harness/bench/scorecard_report.h"
#include "harness/bench/scorecard_trial.h"
#include "harness/real/redis_server.h"
#include "harness/testing/cli_test_util.h"

namespace locklab::scorecard {
namespace {

TEST(ScorecardPlan, SixImplementationsOrMoreAndSevenFaultsDefinedForEach) {
  std::set<std::string> libraries;
  for (const ScImpl& i : ScImpls()) libraries.insert(i.id);
  EXPECT_GE(libraries.size(), 6u);
  EXPECT_EQ(Faults().size(), 7u);
  for (const ScImpl& i : ScImpls()) {
    EXPECT_EQ(FindScImpl(i.id), &i);
    for (const FaultInfo& f : Faults()) {
      const std::string na = NotApplicable(i, f.fault);
      if (f.fault == Fault::kRestart) EXPECT_EQ(na.empty(), i.nodes >= 5) << i.id;
      else if (f.fault == Fault::kExtendRace) EXPECT_EQ(na.empty(), i.extends) << i.id;
      else if (f.fault == Fault::kSentinel) EXPECT_EQ(na.empty(), i.nodes == 1) << i.id;
      else EXPECT_EQ(na, "") << i.id << " " << f.id;
    }
  }
  EXPECT_EQ(FindScImpl("nope"), nullptr);
  EXPECT_EQ(FindFault("nope"), nullptr);
  EXPECT_EQ(FaultId(Fault::kPartition), "partition");
}

TEST(ScorecardPlan, EachTimelineHitsTheHolderPastItsTtl) {
  for (const int64_t ttl_ms : {300, 400, 1000})
  for (const ScImpl& i : ScImpls())
    for (const FaultInfo& f : Faults()) {
      if (!NotApplicable(i, f.fault).empty()) continue;
      const Timeline t = TimelineFor(i, f.fault, ttl_ms, 0);
      SCOPED_TRACE(i.id + " " + f.id);
      EXPECT_GT(t.b_go_ms, 0);
      EXPECT_GT(t.b_timeout_ms, 0);
      switch (f.fault) {
        case Fault::kPause:  // stopped inside its critical section, longer than the TTL
          EXPECT_LT(t.fault_at_ms, t.a_hold_ms);
          EXPECT_GT(t.fault_ms, t.ttl_ms);
          break;
        case Fault::kReleaseDelay:  // B still holds when A's late release lands
          EXPECT_GT(t.fault_ms, t.ttl_ms);
          EXPECT_GT(t.b_go_ms + t.ttl_ms + t.b_hold_ms, t.a_hold_ms + t.fault_ms);
          break;
        case Fault::kPartition:  // A still works after the partition ends
          EXPECT_GT(t.a_hold_ms, t.fault_at_ms + t.fault_ms);
          break;
        case Fault::kClockJump:
        case Fault::kRestart:  // inside A's hold; Redlock: the crashed client's keys gone before B asks
          EXPECT_LT(t.fault_at_ms, t.a_hold_ms);
          EXPECT_LT(t.a_hold_ms, t.ttl_ms);
          EXPECT_LT(t.b_go_ms + t.b_hold_ms, t.a_hold_ms);
          EXPECT_EQ(t.stale_minority, i.nodes >= 5);
          if (t.stale_minority) { EXPECT_LT(t.stale_px_ms, t.b_go_ms); }
          if (f.fault == Fault::kClockJump) { EXPECT_GT(t.fault_ms, t.ttl_ms); }
          break;
        case Fault::kSentinel:  // A still works when Sentinel switches (about 1.5 s after the death),
                                // long before its TTL would have let B in
          EXPECT_GT(t.a_hold_ms, t.fault_at_ms + 2000);
          EXPECT_GT(t.ttl_ms, t.a_hold_ms);
          EXPECT_LT(t.b_go_ms, t.fault_at_ms);
          break;
        case Fault::kExtendRace: {  // the release lands within 10 ms of the watchdog's first tick
          if (!i.extends) break;
          const double tick = i.extend_at * static_cast<double>(t.ttl_ms);
          for (int trial = 0; trial < 11; ++trial) {
            const Timeline u = TimelineFor(i, f.fault, ttl_ms, trial);
            EXPECT_LE(std::abs(static_cast<double>(u.a_hold_ms) - tick), 10.5);
          }
          break;
        }
      }
    }
}

// A holds [1, 10] ms (its release fails at 12); B holds [5, 7]: two holders for 2 ms, and both
// read 0 and wrote 1 (one lost update). Times in ns.
const char* kOverlap = R"({"time":1000000,"process":0,"type":"invoke","f":"acquire","value":null,"lock":"k"}
{"time":1000000,"process":0,"type":"ok","f":"acquire","value":null}
{"time":1000000,"process":0,"type":"invoke","f":"read","value":null}
{"time":1000000,"process":0,"type":"ok","f":"read","value":0}
{"time":2000000,"process":1,"type":"invoke","f":"acquire","value":null,"lock":"k"}
{"time":5000000,"process":1,"type":"ok","f":"acquire","value":null}
{"time":5000000,"process":1,"type":"invoke","f":"read","value":null}
{"time":5000000,"process":1,"type":"ok","f":"read","value":0}
{"time":7000000,"process":1,"type":"invoke","f":"write","value":1}
{"time":7000000,"process":1,"type":"ok","f":"write","value":1}
{"time":7000000,"process":1,"type":"invoke","f":"release","value":null}
{"time":7100000,"process":1,"type":"ok","f":"release","value":null}
{"time":10000000,"process":0,"type":"invoke","f":"write","value":1}
{"time":10000000,"process":0,"type":"ok","f":"write","value":1}
{"time":10000000,"process":0,"type":"invoke","f":"release","value":null}
{"time":12000000,"process":0,"type":"fail","f":"release","value":null}
)";

TEST(ScorecardJudge, AnOverlapItsLostUpdateAndTheFailedRelease) {
  Result<TrialOutcome> o = JudgeTrial(kOverlap, 2000, {});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_TRUE(o->ran);
  EXPECT_EQ(o->violations, 1);
  EXPECT_NEAR(o->overlap_ms, 2.0, 1e-9);
  EXPECT_EQ(o->lost_updates, 1);
  EXPECT_TRUE(o->b_acquired);
  EXPECT_EQ(o->a_release, "failed");
  EXPECT_TRUE(o->learned);
  EXPECT_NEAR(o->learned_ms, 10.0, 1e-9);  // the failed release at 12 ms, the fault at 2 ms
  EXPECT_EQ(o->learned_how, "release failed");
  ASSERT_TRUE(o->b_after_known);
  EXPECT_NEAR(o->b_after_a_release_ms, -7.0, 1e-9);  // B acquired 7 ms before A's release ended
}

TEST(ScorecardJudge, ANotificationBeforeTheReleaseIsWhenTheHolderLearned) {
  const std::vector<Learned> learned = {{1, 3000, "B's own: not counted"}, {0, 6000, "signal aborted: lost"}};
  Result<TrialOutcome> o = JudgeTrial(kOverlap, 2000, learned);
  ASSERT_TRUE(o.ok());
  EXPECT_NEAR(o->learned_ms, 4.0, 1e-9);
  EXPECT_EQ(o->learned_how, "signal aborted: lost");
}

TEST(ScorecardJudge, AHandoffIsNoOverlapAndACrashIsLearning) {
  const std::string text = R"({"time":1000000,"process":0,"type":"invoke","f":"acquire","value":null,"lock":"k"}
{"time":1000000,"process":0,"type":"ok","f":"acquire","value":null}
{"time":2000000,"process":1,"type":"invoke","f":"acquire","value":null,"lock":"k"}
{"time":4000000,"process":0,"type":"info","f":"crash","value":0,"detail":"Lost mutex for key k"}
{"time":9000000,"process":1,"type":"ok","f":"acquire","value":null}
{"time":9500000,"process":1,"type":"invoke","f":"release","value":null}
{"time":9600000,"process":1,"type":"ok","f":"release","value":null}
)";
  Result<TrialOutcome> o = JudgeTrial(text, 3000, {});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->violations, 0);
  EXPECT_EQ(o->overlap_ms, 0);
  EXPECT_EQ(o->a_release, "none");
  EXPECT_TRUE(o->learned);
  EXPECT_NEAR(o->learned_ms, 1.0, 1e-9);
  EXPECT_EQ(o->learned_how.rfind("process died", 0), 0u) << o->learned_how;
  EXPECT_FALSE(o->b_after_known);
}

TEST(ScorecardJudge, AMalformedHistoryIsInvalidWithItsLine) {
  Result<TrialOutcome> o = JudgeTrial("{\"time\":1,\"process\":0,\"type\":\"ok\",\"f\":\"acquire\"}\n", 0, {});
  ASSERT_FALSE(o.ok());
  EXPECT_TRUE(o.status().invalid());
  EXPECT_NE(o.status().message().find("line 1"), std::string::npos) << o.status().message();
}

TEST(ScorecardJudge, MergeKeepsTimeOrderAndRefusesLinesWithoutTime) {
  Result<std::string> m = MergeHistories({"{\"time\":1,\"a\":1}\n{\"time\":5,\"a\":2}\n", "{\"time\":3,\"b\":1}\n"},
                                         {NemesisLine(0, "pause", "x"), "{\"time\":5,\"c\":1}"});
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(*m, std::string("{\"time\":0,\"process\":\"nemesis\",\"type\":\"info\",\"f\":\"pause\",\"value\":\"x\"}\n") +
                    "{\"time\":1,\"a\":1}\n{\"time\":3,\"b\":1}\n{\"time\":5,\"a\":2}\n{\"time\":5,\"c\":1}\n");
  EXPECT_FALSE(MergeHistories({"{\"time\":\"x\"}\n"}, {}).ok());
  EXPECT_FALSE(MergeHistories({"not json\n"}, {}).ok());
}

TEST(ScorecardReport, ACellGivesWilsonRatesAndNotApplicableCellsNone) {
  Cell c{"x", "pause", "", {}};
  for (int i = 0; i < 4; ++i) {
    TrialOutcome t;
    t.ran = true;
    t.violations = i < 3 ? 1 : 0;
    t.overlap_ms = 100.0 * (i + 1);
    t.learned = i == 0;
    t.learned_ms = 50;
    t.learned_how = "release failed";
    c.trials.push_back(t);
  }
  c.trials.push_back(TrialOutcome{});  // could not run
  const CellSummary s = Summarize(c);
  EXPECT_EQ(s.n, 4);
  EXPECT_EQ(s.errors, 1);
  EXPECT_EQ(s.two_holders_k, 3);
  EXPECT_EQ(s.two_holders.method, "wilson");
  EXPECT_NEAR(s.two_holders.estimate, 0.75, 1e-9);
  EXPECT_NEAR(s.overlap_ms_median, 200, 1e-9);
  EXPECT_NEAR(s.overlap_ms_max, 300, 1e-9);
  EXPECT_EQ(s.learned_k, 1);
  const nlohmann::json j = CellJson(c);
  EXPECT_EQ(j["two_holders"]["k"], 3);
  EXPECT_EQ(j["trials"].size(), 5u);
  const nlohmann::json na = CellJson(Cell{"x", "restart", "one node", {}});
  EXPECT_FALSE(na["applies"].get<bool>());
  EXPECT_FALSE(na.contains("two_holders"));
}

TEST(ScorecardCli, BadInputExits2WithOneLine) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"scorecard", "--trials", "0"}, {"scorecard", "--impls", "nope"},
        {"scorecard", "--faults", "partition,nope"}, {"scorecard", "--ttl-ms", "250"}}) {
    ::testing::internal::CaptureStderr();
    ::testing::internal::CaptureStdout();
    const int code = Cli(args);
    ::testing::internal::GetCapturedStdout();
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(code, 2) << args[1];
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
}

// --- Real trials. ---

TEST(ScorecardTrial, LocklabTokenPausedPastItsTtlLosesItsLock) {
  const ScImpl* impl = FindScImpl("locklab-token");
  ASSERT_NE(impl, nullptr);
  TrialEnv env;
  const TrialOutcome o = RunTrial(env, *impl, Fault::kPause, TimelineFor(*impl, Fault::kPause, 300, 0), 0);
  ASSERT_TRUE(o.ran) << o.error;
  EXPECT_TRUE(o.b_acquired);      // A's key expired while A was stopped
  EXPECT_EQ(o.a_release, "failed");  // the key was B's, then gone: the compare-and-delete finds no A
  EXPECT_TRUE(o.learned);
}

// Redis Sentinel promotes the replica that never got A's lock: B gets in, A's release finds no key.
TEST(ScorecardTrial, LocklabTokenLosesItsLockInASentinelFailover) {
  const ScImpl* impl = FindScImpl("locklab-token");
  TrialEnv env;
  const TrialOutcome o = RunTrial(env, *impl, Fault::kSentinel, TimelineFor(*impl, Fault::kSentinel, 400, 0), 0);
  ASSERT_TRUE(o.ran) << o.error;
  EXPECT_TRUE(o.b_acquired);
  EXPECT_EQ(o.a_release, "failed");
}

bool OnCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

// "" when the peer can run here, else why not.
std::string PeerMissing(Runner r) {
  if (r == Runner::kPython)
    return std::system("/usr/bin/python3 -c 'import redis' >/dev/null 2>&1") == 0 ? "" : "python3-redis";
  const std::string nm = DefaultPeerModulesDir() + "/node_modules";
  for (const char* pkg : {"redlock", "ioredis", "@sesamecare-oss/redlock", "redlock-universal", "redis-semaphore"})
    if (!std::filesystem::exists(nm + "/" + pkg + "/package.json")) return nm + "/" + pkg;
  return std::system("node --version >/dev/null 2>&1") == 0 ? "" : "node";
}

#define REQUIRE_PEER(runner)                                                                   \
  if (const std::string missing = PeerMissing(runner); !missing.empty()) {                    \
    if (OnCi()) FAIL() << missing << " missing (CI=true: make test installs the peers)";     \
    GTEST_SKIP() << missing << " missing: make test or make bench-peers installs it";        \
  }

// One trial of a peer on five servers of its own.
TrialOutcome PeerTrial(const std::string& impl_id, Fault fault) {
  RedisServerOptions so;
  so.masters = 5;
  Result<std::unique_ptr<RedisServers>> servers = RedisServers::Start(so);
  EXPECT_TRUE(servers.ok()) << servers.status().message();
  if (!servers.ok()) return {};
  TrialEnv env;
  env.servers = servers->get();
  env.tmp = env.servers->dir();
  env.drivers = DefaultPeerDriversDir();
  env.modules = DefaultPeerModulesDir();
  const ScImpl* impl = FindScImpl(impl_id);
  return RunTrial(env, *impl, fault, TimelineFor(*impl, fault, 300, 0), 0);
}

// The release waits behind the ECHO marker that the proxy delays by 2 x TTL: B acquires after the
// TTL, A's late release finds B's key and fails; nobody held at once (A had left).
TEST(ScorecardTrial, NodeRedlockReleaseDelayedThroughTheProxy) {
  REQUIRE_PEER(Runner::kNode);
  const TrialOutcome o = PeerTrial("node-redlock", Fault::kReleaseDelay);
  ASSERT_TRUE(o.ran) << o.error;
  EXPECT_EQ(o.violations, 0);
  EXPECT_TRUE(o.b_acquired);
  EXPECT_EQ(o.a_release, "failed");
  EXPECT_NE(o.fault_note.find("delay_message"), std::string::npos) << o.fault_note;
  ASSERT_EQ(o.proxy_ms.size(), 5u);  // one proxy per node, each delayed A's marker
  for (const auto& [asked, measured] : o.proxy_ms) {
    EXPECT_EQ(asked, 600);  // 2 x the 300 ms TTL
    EXPECT_GE(measured, 599);
  }
}

// Peer trials whose verdict the fault decides, one per case.
struct PeerCase {
  const char* name;
  const char* impl;
  Runner runner;
  Fault fault;
  bool release_fails;  // the library reports a release that found another's key (or none)
  const char* why;
};
void PrintTo(const PeerCase& c, std::ostream* os) { *os << c.name; }

class ScorecardPeerTrial : public ::testing::TestWithParam<PeerCase> {};

// B gets in while A still holds (two holders, judged from the merged history); A's release fails
// where the library says so.
TEST_P(ScorecardPeerTrial, BothHoldAtOnce) {
  const PeerCase& c = GetParam();
  SCOPED_TRACE(c.why);
  REQUIRE_PEER(c.runner);
  const TrialOutcome o = PeerTrial(c.impl, c.fault);
  ASSERT_TRUE(o.ran) << o.error;
  EXPECT_TRUE(o.b_acquired);
  EXPECT_EQ(o.violations, 1);
  EXPECT_EQ(o.a_release, c.release_fails ? "failed" : "ok");
}

INSTANTIATE_TEST_SUITE_P(
    Faults, ScorecardPeerTrial,
    ::testing::Values(
        PeerCase{"RedisPyPausedBySigstop", "redis-py", Runner::kPython, Fault::kPause, true,
                 "stopped past its TTL inside its critical section: B holds while A is stopped, A goes on"},
        PeerCase{"SesameRedlockNodeRestartedEmpty", "sesame-redlock", Runner::kNode, Fault::kRestart, true,
                 "a Redlock with a bare majority loses it when one of its nodes comes back empty; its release "
                 "finds B's key on the restarted node and retries until it gives up"},
        PeerCase{"RedisPySentinelFailover", "redis-py", Runner::kPython, Fault::kSentinel, true,
                 "redis-sentinel promotes the replica that never got A's lock; redis-py's Sentinel client "
                 "finds it, B gets in"},
        PeerCase{"SemaphoreMutexSentinelFailover", "semaphore-mutex", Runner::kNode, Fault::kSentinel, false,
                 "the same through ioredis' sentinels option and its failover detector; redis-semaphore's "
                 "release() says nothing of a key that is gone"}),
    [](const ::testing::TestParamInfo<PeerCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace locklab::scorecard
