// The profile file: write -> load gives the same model; a bad file is Invalid and names its key.
#include "harness/testing/temp_dir_test.h"
#include "harness/run/profile.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

namespace locklab {
namespace {

sim::CostDist D(std::vector<std::pair<double, double>> pts) { return sim::CostDist{std::move(pts)}; }

sim::CostModel Sample() {
  sim::CostModel m;
  m.name = "calibrated:test";
  m.node.command_us = D({{0, 11.5}, {0.5, 12.25}, {0.99, 14}, {1, 40.125}});
  m.node.wake_us = D({{0, 5}, {0.5, 6}, {1, 9.5}});
  m.node.script_us = D({{0, 20}, {1, 30}});
  m.node.script_call_us = sim::CostDist::Constant(1.5);
  m.node.publish_per_receiver_us = D({{0, 0.5}, {0.25, 0.75}, {1, 2}});
  m.node.blpop_serve_us = D({{0, 3}, {1, 9}});
  m.client.placement = sim::ClientCosts::Placement::kProcessPerClient;
  m.client.send_us = sim::CostDist::Constant(4);
  m.client.reply_us = D({{0, 5}, {1, 6}});
  m.client.timer_us = D({{0, 1}, {1, 2.5}});
  m.client.hold_us = D({{0, 2}, {1, 4}});
  m.client.message_us = D({{0, 6}, {1, 9}});
  m.client.wake_cpu_us = D({{0, 20}, {1, 60}});
  m.client.held_callback_us = sim::CostDist::Constant(1.25);
  m.client.held_write_us = D({{0, 4}, {1, 5.5}});
  m.client.held_read_us = sim::CostDist::Constant(2.25);
  m.client.cold_after_ms = 1000;
  m.client.cold_write_us = D({{0, 2}, {1, 3.5}});
  m.client.cold_read_us = sim::CostDist::Constant(1.5);
  m.client.wake_after_idle = {{20, D({{0, 15}, {1, 30}})}, {1000, sim::CostDist::Constant(40)}};
  m.loop.passes = true;
  m.loop.wire_us = sim::CostDist::Constant(5.25);
  m.loop.reply_write_us = D({{0, 3}, {1, 4}});
  m.loop.held_request_waits = true;
  m.loop.client_passes = true;
  m.loop.socket_wakes = true;
  m.one_way_us = D({{0, 20}, {0.5, 25}, {1, 80}});
  m.replica_one_way_us = 30.5;
  m.machine.per_s = 6.125;
  m.machine.length_us = D({{0, 200}, {0.5, 500}, {1, 4000}});
  return m;
}

class CalibProfile : public TempDirTest {
 protected:
  CalibProfile() : TempDirTest("locklab_profile_test") {}
  // The sample profile as JSON with one edit, loaded: its status.
  Status LoadEdited(const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = ProfileJson(Sample(), LocalProfileContext());
    edit(j);
    std::filesystem::create_directories(dir_);
    std::ofstream(Path("edited.json")) << j.dump(2);
    Result<sim::CostModel> m = LoadProfile(Path("edited.json"));
    return m.ok() ? Status::Ok() : m.status();
  }
};

bool SameDist(const sim::CostDist& a, const sim::CostDist& b) { return a.points == b.points; }

// The client keys that need the client loop in passes (the sample has them), out of a profile.
void EraseClientPassKeys(nlohmann::json& j) {
  for (const char* k : {"held_callback_us", "held_write_us", "held_read_us", "cold_after_ms", "cold_write_us", "cold_read_us"})
    j["client"].erase(k);
}

TEST_F(CalibProfile, RoundTrip) {
  ProfileContext c = LocalProfileContext();
  c.redis_server_version = "7.0.15";
  c.rounds = 3;
  c.measurements["command_us"] = {{"samples", 100}};
  const sim::CostModel m = Sample();
  ASSERT_TRUE(WriteProfile(Path("sub/p.json"), m, c).ok());
  EXPECT_FALSE(std::filesystem::exists(Path("sub/p.json.tmp." + std::to_string(getpid()))));
  Result<sim::CostModel> back = LoadProfile(Path("sub/p.json"));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->name, m.name);
  EXPECT_TRUE(SameDist(back->node.command_us, m.node.command_us));
  EXPECT_TRUE(SameDist(back->node.wake_us, m.node.wake_us));
  EXPECT_TRUE(SameDist(back->node.script_us, m.node.script_us));
  EXPECT_TRUE(SameDist(back->node.script_call_us, m.node.script_call_us));
  EXPECT_TRUE(SameDist(back->node.publish_per_receiver_us, m.node.publish_per_receiver_us));
  EXPECT_TRUE(SameDist(back->node.blpop_serve_us, m.node.blpop_serve_us));
  EXPECT_EQ(back->client.placement, m.client.placement);
  EXPECT_TRUE(SameDist(back->client.send_us, m.client.send_us));
  EXPECT_TRUE(SameDist(back->client.reply_us, m.client.reply_us));
  EXPECT_TRUE(SameDist(back->client.timer_us, m.client.timer_us));
  EXPECT_TRUE(SameDist(back->client.hold_us, m.client.hold_us));
  EXPECT_TRUE(SameDist(back->client.message_us, m.client.message_us));
  EXPECT_TRUE(SameDist(back->client.wake_cpu_us, m.client.wake_cpu_us));
  EXPECT_TRUE(SameDist(back->client.held_callback_us, m.client.held_callback_us));
  EXPECT_TRUE(SameDist(back->client.held_write_us, m.client.held_write_us));
  EXPECT_TRUE(SameDist(back->client.held_read_us, m.client.held_read_us));
  EXPECT_EQ(back->client.cold_after_ms, 1000);
  EXPECT_TRUE(SameDist(back->client.cold_write_us, m.client.cold_write_us));
  EXPECT_TRUE(SameDist(back->client.cold_read_us, m.client.cold_read_us));
  ASSERT_EQ(back->client.wake_after_idle.size(), 2u);
  EXPECT_EQ(back->client.wake_after_idle[1].idle_us, 1000);
  EXPECT_TRUE(SameDist(back->client.wake_after_idle[0].late_us, m.client.wake_after_idle[0].late_us));
  EXPECT_TRUE(back->loop.passes);
  EXPECT_TRUE(SameDist(back->loop.wire_us, m.loop.wire_us));
  EXPECT_TRUE(SameDist(back->loop.reply_write_us, m.loop.reply_write_us));
  EXPECT_TRUE(back->loop.held_request_waits);
  EXPECT_TRUE(back->loop.client_passes);
  EXPECT_TRUE(back->loop.socket_wakes);
  EXPECT_TRUE(SameDist(back->one_way_us, m.one_way_us));
  EXPECT_EQ(back->replica_one_way_us, 30.5);
  EXPECT_EQ(back->machine.per_s, 6.125);
  EXPECT_TRUE(SameDist(back->machine.length_us, m.machine.length_us));
  // The context comes back too; writing the loaded model again gives the same text.
  nlohmann::json j = nlohmann::json::parse(std::ifstream(Path("sub/p.json")));
  ProfileContext c2;
  ASSERT_TRUE(ProfileFromJson(j, &c2).ok());
  EXPECT_EQ(c2.host, c.host);
  EXPECT_EQ(c2.redis_server_version, "7.0.15");
  EXPECT_EQ(c2.rounds, 3);
  EXPECT_EQ(ProfileJson(*back, c2).dump(), ProfileJson(m, c).dump());
  EXPECT_DOUBLE_EQ(j["node"]["script_us"]["mean_us"].get<double>(), 25.0);
}

TEST_F(CalibProfile, BadFilesNameTheKey) {
  struct Case {
    std::function<void(nlohmann::json&)> edit;
    std::string key;
  };
  const std::vector<Case> cases = {
      {[](auto& j) { j["node"]["cpu_us"] = j["node"]["command_us"]; }, "node.cpu_us: unknown key"},
      {[](auto& j) { j["extra"] = 1; }, "extra: unknown key"},
      {[](auto& j) { j["context"]["colour"] = "red"; }, "context.colour: unknown key"},
      {[](auto& j) { j["node"]["script_us"]["points"][1][1] = -1.0; }, "node.script_us.points[1].us: must not be negative"},
      {[](auto& j) { j["one_way_us"]["points"][1][0] = 0.9; j["one_way_us"]["points"][2][0] = 0.8; },
       "one_way_us.points[2]: p must rise"},
      {[](auto& j) { j["client"]["timer_us"]["points"][0][0] = 0.1; }, "client.timer_us.points[0]: the first p must be 0"},
      {[](auto& j) { j["client"]["reply_us"]["points"][1][0] = 0.9; }, "client.reply_us.points: the last p must be 1"},
      {[](auto& j) { j["node"]["blpop_serve_us"]["points"][1][1] = 1.0; }, "node.blpop_serve_us.points[1]: us must not fall"},
      {[](auto& j) { j["node"].erase("script_call_us"); }, "node.script_call_us: missing"},
      {[](auto& j) { j["client"]["placement"] = "threads"; }, "client.placement: must be"},
      {[](auto& j) { j["schema"] = "locklab.profile/0"; }, "schema: must be \"locklab.profile/1\""},
      {[](auto& j) { j["node"]["command_us"]["mean_us"] = "fast"; }, "node.command_us.mean_us: must be a number"},
      {[](auto& j) { j["context"]["cpu_count"] = -2; }, "context.cpu_count: must not be negative"},
      {[](auto& j) { j["client"]["wake_after_idle"][1]["idle_us"] = 10; },
       "client.wake_after_idle[1].idle_us: must be above 0 and rise"},
      {[](auto& j) { j["client"]["wake_after_idle"][0].erase("late_us"); }, "client.wake_after_idle[0].late_us: missing"},
      {[](auto& j) { j["client"]["wake_after_idle"] = 3; }, "client.wake_after_idle: must be an array"},
      {[](auto& j) { j["client"]["wake_cpu_us"]["points"][0][0] = 0.1; },
       "client.wake_cpu_us.points[0]: the first p must be 0"},
      {[](auto& j) { j["loop"]["model"] = "threads"; }, "loop.model: must be \"queue\" or \"passes\""},
      {[](auto& j) { j["loop"].erase("wire_us"); }, "loop.wire_us: missing"},
      {[](auto& j) { j["loop"]["model"] = "queue"; },
       "loop: wire_us, reply_write_us, held_request, client and client_wake belong to"},
      {[](auto& j) { j["loop"]["client_wake"] = "epoll"; }, "loop.client_wake: must be \"timer\" or \"socket\""},
      {[](auto& j) { j["loop"]["client"] = "events"; }, "loop.client_wake: \"socket\" needs the client loop in passes"},
      {[](auto& j) { j["loop"]["held_request"] = "timer"; }, "loop.held_request: must be \"path\" or \"loop\""},
      {[](auto& j) { j["loop"]["client"] = "threads"; }, "loop.client: must be \"events\" or \"passes\""},
      {[](auto& j) { j["loop"]["turns"] = 1; }, "loop.turns: unknown key"},
      {[](auto& j) { j["loop"] = 3; }, "loop: must be an object"},
      {[](auto& j) { j["replica_one_way_us"] = 0; }, "replica_one_way_us: must be from 1 to 1000000"},
      {[](auto& j) { j["replica_one_way_us"] = "30"; }, "replica_one_way_us: must be a number"},
      {[](auto& j) { j["machine"]["stalls_per_s"] = -1; }, "machine.stalls_per_s: must be from 0 to 100000"},
      {[](auto& j) { j["machine"].erase("stalls_per_s"); }, "machine.stalls_per_s: missing"},
      {[](auto& j) { j["machine"]["stalls_per_s"] = "6"; }, "machine.stalls_per_s: must be a number"},
      {[](auto& j) { j["machine"].erase("stall_us"); }, "machine.stall_us: missing"},
      {[](auto& j) { j["machine"]["every_us"] = 1; }, "machine.every_us: unknown key"},
  };
  for (const Case& c : cases) {
    const Status s = LoadEdited(c.edit);
    EXPECT_TRUE(s.invalid()) << c.key;
    EXPECT_NE(s.message().find(c.key), std::string::npos) << s.message();
  }
  EXPECT_TRUE(LoadEdited([](auto&) {}).ok());  // the unedited file loads
  EXPECT_TRUE(LoadEdited([](auto& j) {  // all optional
                j["client"].erase("wake_after_idle");
                j["client"].erase("message_us");
                j["client"].erase("wake_cpu_us");
                EraseClientPassKeys(j);
                j.erase("loop");
                j.erase("replica_one_way_us");
                j.erase("machine");
              }).ok());
  EXPECT_TRUE(LoadEdited([](auto& j) { EraseClientPassKeys(j), j["loop"] = {{"model", "queue"}}; }).ok());
  // JSON text has no infinity or NaN (nlohmann reads "1e999" as no JSON at all), but a parsed
  // document handed over in memory may hold one.
  nlohmann::json j = ProfileJson(Sample(), LocalProfileContext());
  j["node"]["script_us"]["points"][0][1] = std::nan("");
  Result<sim::CostModel> nan = ProfileFromJson(j);
  ASSERT_FALSE(nan.ok());
  EXPECT_TRUE(nan.status().invalid());
  EXPECT_NE(nan.status().message().find("node.script_us.points[0].us: must be finite"), std::string::npos)
      << nan.status().message();
  std::filesystem::create_directories(dir_);
  std::ofstream(Path("garbage.json")) << "{ not json";
  EXPECT_TRUE(LoadProfile(Path("garbage.json")).status().invalid());
  const Status missing = LoadProfile(Path("missing.json")).status();
  EXPECT_TRUE(missing.invalid());
  EXPECT_EQ(missing.message(), Path("missing.json") + ": no such file");
  const Status dir = LoadProfile(dir_).status();
  EXPECT_TRUE(dir.invalid());
  EXPECT_NE(dir.message().find("a directory, not a file"), std::string::npos) << dir.message();
}

TEST_F(CalibProfile, HeldAndColdKeysAreOptionalGoTogetherAndNeedClientPasses) {
  EXPECT_TRUE(LoadEdited([](auto& j) { EraseClientPassKeys(j); }).ok());  // profiles made before the keys
  EXPECT_TRUE(LoadEdited([](auto& j) { j["client"].erase("cold_read_us"); }).ok());  // one of the two suffices
  EXPECT_TRUE(LoadEdited([](auto& j) { j["client"].erase("held_write_us"); }).ok());  // each held_* key alone
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> bad = {
      {[](auto& j) { j["client"].erase("cold_after_ms"); }, "client.cold_after_ms: goes with cold_write_us"},
      {[](auto& j) {
         j["client"].erase("cold_write_us");
         j["client"].erase("cold_read_us");
       },
       "client.cold_after_ms: goes with cold_write_us"},
      {[](auto& j) { j["client"]["cold_after_ms"] = 0; }, "client.cold_after_ms: must be from 0.001"},
      {[](auto& j) { j["loop"]["client"] = "events", j["loop"].erase("client_wake"); },
       "client: held_callback_us, held_write_us, held_read_us and cold_after_ms need the client loop in passes"},
      {[](auto& j) { j["loop"].erase("held_request"); }, "client.held_write_us: needs held requests written by the loop"},
  };
  for (const auto& [edit, key] : bad) {
    const Status s = LoadEdited(edit);
    EXPECT_TRUE(s.invalid()) << key;
    EXPECT_NE(s.message().find(key), std::string::npos) << s.message();
  }
}

TEST(CalibDistFromSamples, QuantilesTrimAndClamp) {
  std::vector<double> s;
  for (int i = 1; i <= 2000; ++i) s.push_back(i);
  s.push_back(1e9);  // one outlier past p99.9, trimmed with the next largest
  SampleSummary sum = DistFromSamples(s);
  EXPECT_EQ(sum.samples, 2001u);
  EXPECT_EQ(sum.trimmed, 2u);
  ASSERT_EQ(sum.dist.points.size(), 21u);
  EXPECT_EQ(sum.dist.points.front(), std::make_pair(0.0, 1.0));
  EXPECT_EQ(sum.dist.points.back(), std::make_pair(1.0, 1999.0));
  EXPECT_NEAR(sum.dist.AtUs(0.5), 1000.0, 1e-9);
  SampleSummary few = DistFromSamples({3.0, -1.0, 5.0});
  EXPECT_EQ(few.clamped, 1u);
  EXPECT_EQ(few.trimmed, 0u);
  ASSERT_EQ(few.dist.points.size(), 11u);
  EXPECT_EQ(few.dist.points.front().second, 0.0);
  EXPECT_EQ(few.dist.points.back().second, 5.0);
  EXPECT_TRUE(DistFromSamples({}).dist.points.empty());
}


// A profile measured at two sizes: the block round-trips, and a run takes the figures measured
// nearest its client count on a log scale (20 and 1000: below sqrt(20,000) = 141.4 the fewer).
TEST_F(CalibProfile, FewerConnectionsRoundTripAndChooseByClients) {
  sim::CostModel m = Sample();
  m.connections = 1000;
  sim::CostModel few = Sample();
  few.connections = 20;
  few.node.command_us = sim::CostDist::Constant(3.5);
  few.name = m.name + "@20";
  m.fewer = std::make_shared<const sim::CostModel>(few);
  ASSERT_TRUE(WriteProfile(Path("two.json"), m, LocalProfileContext()).ok());
  Result<sim::CostModel> back = LoadProfile(Path("two.json"));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->connections, 1000);
  ASSERT_NE(back->fewer, nullptr);
  EXPECT_EQ(back->fewer->connections, 20);
  EXPECT_EQ(back->fewer->name, "calibrated:test@20");
  EXPECT_TRUE(SameDist(back->fewer->node.command_us, few.node.command_us));
  EXPECT_TRUE(SameDist(back->fewer->client.wake_cpu_us, few.client.wake_cpu_us));
  EXPECT_EQ(back->fewer->fewer, nullptr);
  EXPECT_EQ(back->fewer->machine.per_s, m.machine.per_s);  // one machine, whatever the connections
  EXPECT_TRUE(SameDist(back->fewer->machine.length_us, m.machine.length_us));
  for (int clients : {1, 10, 141}) EXPECT_EQ(ForClients(*back, clients).connections, 20) << clients;
  for (int clients : {0, 142, 1000, 5000}) EXPECT_EQ(ForClients(*back, clients).connections, 1000) << clients;
  Result<sim::CostModel> chosen = ChooseProfile(Path("two.json"), 10);
  ASSERT_TRUE(chosen.ok()) << chosen.status().message();
  EXPECT_EQ(chosen->name, "calibrated:test@20");
  EXPECT_EQ(ChooseProfile(Path("two.json"), 1000)->name, "calibrated:test");
  // A profile without the block gives its own figures for any count.
  const sim::CostModel one = Sample();
  EXPECT_EQ(&ForClients(one, 10), &one);
}

TEST_F(CalibProfile, BadFewerConnectionsBlocksNameTheKey) {
  sim::CostModel m = Sample();
  m.connections = 1000;
  sim::CostModel few = Sample();
  few.connections = 20;
  m.fewer = std::make_shared<const sim::CostModel>(few);
  const nlohmann::json good = ProfileJson(m, LocalProfileContext());
  const std::pair<std::function<void(nlohmann::json&)>, std::string> cases[] = {
      {[](auto& j) { j.erase("connections"); }, "fewer_connections: needs the profile's own \"connections\""},
      {[](auto& j) { j["fewer_connections"]["connections"] = 1000; }, "fewer_connections.connections: must be below"},
      {[](auto& j) { j["fewer_connections"]["connections"] = 0; }, "fewer_connections.connections: must be a whole number"},
      {[](auto& j) { j["fewer_connections"].erase("connections"); }, "fewer_connections.connections: missing"},
      {[](auto& j) { j["fewer_connections"]["name"] = "x"; }, "fewer_connections.name: unknown key"},
      {[](auto& j) { j["fewer_connections"].erase("client"); }, "fewer_connections: client: missing"},
      {[](auto& j) { j["connections"] = 2.5; }, "connections: must be a whole number"},
  };
  for (const auto& [edit, want] : cases) {
    nlohmann::json j = good;
    edit(j);
    std::filesystem::create_directories(dir_);
    std::ofstream(Path("bad.json")) << j.dump(2);
    Result<sim::CostModel> r = LoadProfile(Path("bad.json"));
    ASSERT_FALSE(r.ok()) << want;
    EXPECT_TRUE(r.status().invalid()) << want;
    EXPECT_NE(r.status().message().find(want), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace locklab
