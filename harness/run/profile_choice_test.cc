// A run's cost profile (RunSpec::profile): the built-in choices, a bad file before any run, and
// determinism with the default profile's drawn costs.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/run/build_info.h"
#include "harness/run/profile.h"
#include "harness/run/run_spec.h"

namespace locklab {
namespace {

TEST(ProfileChoice, BuiltInNames) {
  Result<sim::CostModel> legacy = ChooseProfile("legacy");
  ASSERT_TRUE(legacy.ok());
  EXPECT_EQ(legacy->name, sim::kLegacyCostName);
  EXPECT_EQ(legacy->node.command_us.MeanUs(), 2.0);
  EXPECT_TRUE(legacy->one_way_us.points.empty());
  Result<sim::CostModel> def = ChooseProfile("default");
  ASSERT_TRUE(def.ok()) << def.status().message();
  EXPECT_NE(def->name, sim::kLegacyCostName);
  EXPECT_GT(def->node.command_us.MeanUs(), 2.0);
  EXPECT_EQ(def->client.placement, sim::ClientCosts::Placement::kOneProcess);
}

TEST(ProfileChoice, BadFileIsInvalidNamingFileAndKey) {
  const std::string path = ::testing::TempDir() + "/bad_profile.json";
  std::ofstream(path) << R"({"schema": "locklab.profile/1", "name": "x"})";
  RunSpec s;
  s.profile = path;
  Status st = ResolveSpec(&s);
  EXPECT_TRUE(st.invalid());
  EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("node"), std::string::npos) << st.message();
  s.profile = ::testing::TempDir() + "/no_such_profile.json";
  st = ResolveSpec(&s);
  EXPECT_TRUE(st.invalid());
  EXPECT_NE(st.message().find("no_such_profile.json"), std::string::npos) << st.message();
  s.backend = "redis";  // the real backend does not read it
  EXPECT_TRUE(ResolveSpec(&s).ok());
}

TEST(ProfileChoice, ResolveFillsInTheProfileName) {
  RunSpec s;
  ASSERT_TRUE(ResolveSpec(&s).ok());
  EXPECT_EQ(s.profile, "default");
  EXPECT_EQ(s.profile_name, ChooseProfile("default")->name);
  s.profile = "legacy";
  ASSERT_TRUE(ResolveSpec(&s).ok());
  EXPECT_EQ(s.profile_name, sim::kLegacyCostName);
}

RunResult Busy(const std::string& profile, uint64_t seed) {
  RunSpec s;
  s.algorithm = "token";
  s.retry = "backoff";
  s.clients = 50;
  s.requests = 300;
  s.hold_ms = 0;
  s.seed = seed;
  s.profile = profile;
  s.faults.net_delay_ms = 0.05;
  s.faults.net_dist = "uniform";
  EXPECT_TRUE(ResolveSpec(&s).ok());
  RunResult r = RunOne(s, false);
  EXPECT_TRUE(r.completed) << r.error;
  return r;
}

TEST(ProfileChoice, SameSeedSameRunWithTheDefaultProfile) {
  const RunResult a = Busy("default", 5), b = Busy("default", 5);
  EXPECT_EQ(a.duration_us, b.duration_us);
  EXPECT_EQ(a.commands.by_client, b.commands.by_client);
  EXPECT_EQ(a.history_events, b.history_events);
  EXPECT_NE(a.duration_us, Busy("default", 6).duration_us);
}

// replica_one_way_us sets the master-to-replica trip: a WAIT for one replica after a write is
// answered two trips later (the write's state there, the acknowledgement back), where profiles
// without the key keep the simulator's 1 ms each way.
TEST(ProfileChoice, ReplicaTripComesFromTheProfile) {
  nlohmann::json j = nlohmann::json::parse(std::ifstream(std::string(SourceDir()) + "/harness/profiles/default.json"));
  ASSERT_TRUE(j.contains("replica_one_way_us"));  // measured: 17.2 us
  j.erase("replica_one_way_us");                   // the simulator's own 1 ms each way
  const std::string path = ::testing::TempDir() + "/no_replica_trip_profile.json";
  std::ofstream(path) << j.dump();
  auto p50_ms = [](const std::string& profile) {
    RunSpec s;
    s.algorithm = "wait";
    s.clients = 1;
    s.requests = 20;
    s.profile = profile;
    EXPECT_TRUE(ResolveSpec(&s).ok());
    const RunResult r = RunOne(s, false);
    EXPECT_TRUE(r.completed) << r.error;
    EXPECT_EQ(r.check.liveness.acquired, 20);
    return r.check.latency.acquire.p50;
  };
  EXPECT_GE(p50_ms(path), 2.0);  // SET, then WAIT: 1 ms there and 1 ms back
  const double measured = p50_ms("default");
  EXPECT_GE(measured, 0.05);  // the two 17 us trips and a round trip or two
  EXPECT_LT(measured, 0.5);
}

}  // namespace
}  // namespace locklab
