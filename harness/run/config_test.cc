#include "harness/run/config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <type_traits>
#include <variant>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "harness/cli/cli.h"
#include "harness/report/report.h"
#include "harness/run/run_spec.h"
#include "harness/run/spec_fields.h"
#include "harness/testing/test_specs.h"

namespace locklab {
namespace {

using nlohmann::json;


TEST(ConfigJson, RoundTripGivesTheSameJson) {
  const RunSpec s = FullSpec();
  const json j = ToJson(s);
  RunSpec back;
  std::string error;
  ASSERT_TRUE(FromJson(json::parse(j.dump()), &back).ok(&error)) << error;
  EXPECT_EQ(ToJson(back).dump(), j.dump());
  EXPECT_EQ(back.seed, s.seed);
  ASSERT_EQ(back.faults.plan.size(), s.faults.plan.size());
  EXPECT_EQ(back.faults.plan[0].at_us, 500);
  EXPECT_EQ(back.faults.plan[2].delta_us, -2'000'000);
}

TEST(ConfigJson, DefaultSpecRoundTripsToo) {
  RunSpec back;
  std::string error;
  back.clients = 99;  // absent keys keep what the spec had, so start elsewhere
  ASSERT_TRUE(FromJson(ToJson(RunSpec()), &back).ok(&error)) << error;
  EXPECT_EQ(ToJson(back).dump(), ToJson(RunSpec()).dump());
}

TEST(ConfigJson, IsDeterministic) {
  EXPECT_EQ(ToJson(FullSpec()).dump(2), ToJson(FullSpec()).dump(2));
  // Fields, not insertion order, decide the bytes.
  RunSpec a, b;
  a.algorithm_options.Set("x", "1");
  a.algorithm_options.Set("y", "2");
  b.algorithm_options.Set("y", "2");
  b.algorithm_options.Set("x", "1");
  EXPECT_EQ(ToJson(a).dump(), ToJson(b).dump());
}

// ToJson's text without its "seed" member.
std::string DumpButSeed(const RunSpec& s) {
  json j = ToJson(s);
  j.erase("seed");
  return j.dump();
}

// Specs that differ from `base` in one thing each: every scalar field (a double also set to 0.0
// and to -0.0, which compare equal and print apart), the plan, the options, redis, the profile's
// name and the client plans.
std::vector<RunSpec> OneChangeEach(const RunSpec& base, std::vector<RunSpec>* signed_zeros) {
  std::vector<RunSpec> out;
  for (const SpecField& f : SpecFields()) {
    RunSpec s = base;
    std::visit(
        [&](auto* p) {
          using T = std::remove_pointer_t<decltype(p)>;
          if constexpr (std::is_same_v<T, std::string>) {
            *p += "x";
          } else if constexpr (std::is_same_v<T, bool>) {
            *p = !*p;
          } else if constexpr (std::is_same_v<T, double>) {
            for (double zero : {0.0, -0.0}) {
              signed_zeros->push_back(base);
              *std::get<double*>(f.get(signed_zeros->back())) = zero;
            }
            *p += 0.5;
          } else {
            *p += 1;
          }
        },
        f.get(s));
    out.push_back(s);
  }
  for (int k = 0; k < 6; ++k) out.push_back(base);
  out[out.size() - 6].faults.plan.back().duration_us += 1000;
  out[out.size() - 5].algorithm_options.Set("release", "del");
  out[out.size() - 4].retry_options.Set("sleep-ms", "11");
  out[out.size() - 3].redis.push_back("127.0.0.1:6399");
  out[out.size() - 2].profile_name += "x";
  out[out.size() - 1].client_plans.push_back(ClientPlan{});
  return out;
}

// HashSweep reuses a spec's JSON for the next when SameJsonButSeed says so: it says so exactly
// when the two texts but for the seed are the same, for a change of any one thing.
TEST(ConfigJson, SameJsonButSeedWhenOnlyTheSeedDiffers) {
  RunSpec base = FullSpec();
  ASSERT_FALSE(base.faults.plan.empty());
  std::vector<RunSpec> signed_zeros;
  std::vector<RunSpec> specs = OneChangeEach(base, &signed_zeros);
  specs.push_back(base);
  specs.back().seed += 1;
  specs.push_back(base);
  std::vector<std::string> dumps;
  for (const RunSpec& s : specs) dumps.push_back(DumpButSeed(s));
  for (size_t i = 0; i < specs.size(); ++i)
    for (size_t j = 0; j < specs.size(); ++j)
      EXPECT_EQ(SameJsonButSeed(specs[i], specs[j]), dumps[i] == dumps[j]) << i << " " << j;
  EXPECT_TRUE(SameJsonButSeed(specs[specs.size() - 2], base));  // the seed alone
  // 0.0 and -0.0 print apart (but where a field is left out at its default): never the same.
  ASSERT_FALSE(signed_zeros.empty());
  for (size_t i = 0; i + 1 < signed_zeros.size(); i += 2)
    EXPECT_FALSE(SameJsonButSeed(signed_zeros[i], signed_zeros[i + 1])) << i;
}

TEST(ConfigJson, MsInJsonMicrosecondsInFaultAction) {
  FaultAction a;
  std::string error;
  ASSERT_TRUE(Take(
      FaultActionFromJson(json::parse(R"({"kind":"partition","at_ms":1.5,"target":0,"node":2,"duration_ms":20})"), "p"),
      &a, &error))
      << error;
  EXPECT_EQ(a.kind, FaultAction::Kind::kPartition);
  EXPECT_EQ(a.at_us, 1500);
  EXPECT_EQ(a.duration_us, 20'000);
  EXPECT_EQ(a.node, 2);
  EXPECT_EQ(ToJson(a).dump(), R"({"at_ms":1.5,"duration_ms":20,"kind":"partition","node":2,"target":0})");
}

struct BadCase {
  const char* json;
  const char* must_mention;
};

TEST(ConfigJson, RejectsWithOneLineNamingTheKey) {
  const BadCase cases[] = {
      {R"({"clints": 3})", "'clints'"},
      {R"({"faults": {"gc_pase_ms": 3}})", "'faults.gc_pase_ms'"},
      {R"({"clients": "3"})", "'clients' must be an integer"},
      {R"({"clients": 3.5})", "'clients' must be an integer"},
      {R"({"clients": 99999999999})", "'clients' is out of range"},
      {R"({"seed": -1})", "'seed' must be a non-negative integer"},
      {R"({"replica": 1})", "'replica' must be true or false"},
      {R"({"faults": {"net_loss": "x"}})", "'faults.net_loss' must be a number"},
      {R"({"algorithm_options": ["a"]})", "'algorithm_options' must be an object"},
      {R"({"algorithm_options": {"a": 1.5}})", "'algorithm_options.a' must be a string"},
      {R"({"redis": "localhost:6379"})", "'redis' must be a list"},
      {R"({"faults": {"plan": [{"kind": "nap"}]}})", "'faults.plan[0].kind' must be one of"},
      {R"({"faults": {"plan": [{"at_ms": 1}]}})", "'faults.plan[0].kind' is missing"},
      {R"({"faults": {"plan": [{"kind": "pause_client", "len": 1}]}})", "'faults.plan[0].len'"},
      {R"({"faults": {"plan": [{"kind": "pause_client", "at_ms": "1"}]}})", "'faults.plan[0].at_ms' must be a number"},
      {R"([1, 2])", "JSON object"},
  };
  for (const BadCase& c : cases) {
    RunSpec s;
    std::string error;
    EXPECT_FALSE(FromJson(json::parse(c.json), &s).ok(&error)) << c.json;
    EXPECT_NE(error.find(c.must_mention), std::string::npos) << c.json << " -> " << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
}

TEST(ConfigJson, FailureLeavesTheSpecAlone) {
  RunSpec s;
  std::string error;
  EXPECT_FALSE(FromJson(json::parse(R"({"clients": 3, "bogus": 1})"), &s).ok(&error));
  EXPECT_EQ(s.clients, RunSpec().clients);
}

TEST(AlgorithmChoice, ParsesNameAndOptions) {
  AlgorithmChoice c;
  std::string error;
  ASSERT_TRUE(Take(ParseAlgorithmChoice("timestamp:recovery=del,getset-nil=fail"), &c, &error)) << error;
  EXPECT_EQ(c.name, "timestamp");
  EXPECT_EQ(c.options.Get("recovery"), "del");
  EXPECT_EQ(c.ToString(), "timestamp:getset-nil=fail,recovery=del");
  ASSERT_TRUE(Take(ParseAlgorithmChoice("token"), &c, &error));
  EXPECT_EQ(c.ToString(), "token");
  EXPECT_FALSE(Take(ParseAlgorithmChoice(":a=1"), &c, &error));
  EXPECT_FALSE(Take(ParseAlgorithmChoice("token:release"), &c, &error));
}

TEST(FaultFlag, RoundTripsEveryKind) {
  for (const FaultAction& a : FullSpec().faults.plan) {
    const std::string text = FaultFlag(a);
    FaultAction back;
    std::string error;
    ASSERT_TRUE(Take(ParseFaultFlag(text), &back, &error)) << text << ": " << error;
    EXPECT_EQ(ToJson(back).dump(), ToJson(a).dump()) << text;
  }
  FaultAction a;
  a.kind = FaultAction::Kind::kPauseClient;
  a.at_us = 100'000;
  a.duration_us = 1'500'000;
  EXPECT_EQ(FaultFlag(a), "pause_client:at_ms=100,target=0,duration_ms=1500");
}

TEST(FaultFlag, RejectsBadText) {
  FaultAction a;
  std::string error;
  EXPECT_FALSE(Take(ParseFaultFlag("nap:at_ms=1"), &a, &error));
  EXPECT_NE(error.find("kind"), std::string::npos) << error;
  EXPECT_FALSE(Take(ParseFaultFlag("pause_client:at_ms=soon"), &a, &error));
  EXPECT_NE(error.find("at_ms=soon is not a number"), std::string::npos) << error;
  EXPECT_FALSE(Take(ParseFaultFlag("pause_client:at_ms"), &a, &error));
  EXPECT_FALSE(Take(ParseFaultFlag("pause_client:span_ms=3"), &a, &error));
  EXPECT_NE(error.find("'span_ms'"), std::string::npos) << error;
}

TEST(FaultOnSend, RoundTripsThroughJsonAndFlag) {
  FaultAction a;
  a.kind = FaultAction::Kind::kPauseClient;
  a.target = 2;
  a.on_send = "GET";
  a.occurrence = 1;
  a.duration_us = 50'000;
  const std::string want = R"({"at_ms":0,"duration_ms":50,"kind":"pause_client","occurrence":1,"on_send":"GET","target":2})";
  EXPECT_EQ(ToJson(a).dump(), want);
  FaultAction back;
  std::string error;
  ASSERT_TRUE(Take(FaultActionFromJson(json::parse(want), "p"), &back, &error)) << error;
  EXPECT_EQ(back.on_send, "GET");
  EXPECT_EQ(back.occurrence, 1);
  EXPECT_EQ(ToJson(back).dump(), want);
  // The flag form, in any order, and what FaultFlag writes for the replay command.
  ASSERT_TRUE(Take(ParseFaultFlag("pause_client:target=2,on_send=GET,occurrence=1,duration_ms=50"), &back, &error))
      << error;
  EXPECT_EQ(ToJson(back).dump(), want);
  EXPECT_EQ(FaultFlag(a), "pause_client:at_ms=0,target=2,duration_ms=50,on_send=GET,occurrence=1");
  ASSERT_TRUE(Take(ParseFaultFlag(FaultFlag(a)), &back, &error)) << error;
  EXPECT_EQ(ToJson(back).dump(), want);

  FaultAction star;
  star.kind = FaultAction::Kind::kCrashClient;
  star.on_send = "*";
  star.occurrence = 2;
  EXPECT_EQ(FaultFlag(star), "crash_client:at_ms=0,target=0,on_send=*,occurrence=2");
  ASSERT_TRUE(Take(ParseFaultFlag(FaultFlag(star)), &back, &error)) << error;
  EXPECT_EQ(back.on_send, "*");
  EXPECT_EQ(back.occurrence, 2);
  RunSpec spec;
  spec.faults.plan = {star};
  EXPECT_NE(ReplayCommand(spec).find("--fault 'crash_client:at_ms=0,target=0,on_send=*,occurrence=2'"),
            std::string::npos)
      << ReplayCommand(spec);  // quoted: the shell must not expand the *

  // Not set: not written, so existing plans keep their bytes.
  a.on_send.clear();
  EXPECT_EQ(ToJson(a).dump(), R"({"at_ms":0,"duration_ms":50,"kind":"pause_client","target":2})");
}

TEST(FaultOnSend, IsCheckedByTheReaderAndByResolveSpec) {
  const BadCase cases[] = {
      {R"({"faults": {"plan": [{"kind": "pause_client", "on_send": 5}]}})",
       "'faults.plan[0].on_send' must be a command name or \"*\""},
      {R"({"faults": {"plan": [{"kind": "pause_client", "on_send": ""}]}})", "'faults.plan[0].on_send' must be"},
      {R"({"faults": {"plan": [{"kind": "pause_client", "on_sent": "GET"}]}})", "'faults.plan[0].on_sent'"},
  };
  for (const BadCase& c : cases) {
    RunSpec s;
    std::string error;
    EXPECT_FALSE(FromJson(json::parse(c.json), &s).ok(&error)) << c.json;
    EXPECT_NE(error.find(c.must_mention), std::string::npos) << c.json << " -> " << error;
  }
  RunSpec s;
  std::string error;
  ASSERT_TRUE(
      FromJson(json::parse(R"({"faults": {"plan": [{"kind": "crash_node", "target": 0, "on_send": "GET"}]}})"), &s)
          .ok(&error))
      << error;
  EXPECT_FALSE(ResolveSpec(&s).ok(&error));
  EXPECT_EQ(error, "fault crash_node: on_send applies only to pause_client and crash_client");
  ASSERT_TRUE(
      Take(ParseFaultFlag("pause_client:target=0,on_send=GET,occurrence=0,duration_ms=5"), &s.faults.plan[0], &error));
  EXPECT_FALSE(ResolveSpec(&s).ok(&error));
  EXPECT_EQ(error, "fault pause_client: on_send needs occurrence >= 1");
  s.faults.plan[0].occurrence = 3;
  EXPECT_TRUE(ResolveSpec(&s).ok(&error)) << error;
}

TEST(ConfigFile, SweepExpandsToTheCartesianProduct) {
  ConfigFile cfg;
  std::string error;
  ASSERT_TRUE(ConfigFromJson(json::parse(R"({"algorithms": ["token", "timestamp:recovery=del", "fencing"],
                                              "seeds": [1, 2, 3, 4], "clients": 5})"),
                             &cfg)
                  .ok(&error))
      << error;
  const std::vector<RunSpec> specs = ExpandSweep(cfg);
  ASSERT_EQ(specs.size(), 12u);
  EXPECT_EQ(specs[0].algorithm, "token");
  EXPECT_EQ(specs[0].seed, 1u);
  EXPECT_EQ(specs[3].seed, 4u);
  EXPECT_EQ(specs[4].algorithm, "timestamp");
  EXPECT_EQ(specs[4].algorithm_options.Get("recovery"), "del");
  EXPECT_EQ(specs[11].algorithm, "fencing");
  for (const RunSpec& s : specs) EXPECT_EQ(s.clients, 5);
}

TEST(ConfigFile, NoSweepIsOneRun) {
  ConfigFile cfg;
  std::string error;
  ASSERT_TRUE(ConfigFromJson(json::parse(R"({"algorithm": "redlock", "seed": 9})"), &cfg).ok(&error)) << error;
  const std::vector<RunSpec> specs = ExpandSweep(cfg);
  ASSERT_EQ(specs.size(), 1u);
  EXPECT_EQ(specs[0].algorithm, "redlock");
  EXPECT_EQ(specs[0].seed, 9u);
}

TEST(ConfigFile, RejectsConflictsAndBadLists) {
  const BadCase cases[] = {
      {R"({"algorithms": ["token"], "algorithm": "token"})", "not both"},
      {R"({"seeds": [1], "seed": 1})", "not both"},
      {R"({"seeds": []})", "'seeds' must be a non-empty list"},
      {R"({"seeds": [-1]})", "'seeds' must be a list of non-negative integers"},
      {R"({"algorithms": [3]})", "'algorithms' must be a list"},
      {R"({"algorithms": ["token"], "clints": 1})", "'clints'"},
  };
  for (const BadCase& c : cases) {
    ConfigFile cfg;
    std::string error;
    EXPECT_FALSE(ConfigFromJson(json::parse(c.json), &cfg).ok(&error)) << c.json;
    EXPECT_NE(error.find(c.must_mention), std::string::npos) << c.json << " -> " << error;
  }
}

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("locklab_config_test_" + std::to_string(getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(TempDir, LoadConfigFileReportsPathAndPosition) {
  ConfigFile cfg;
  std::string error;
  const std::string bad = Write("bad.json", "{\"clients\": 3,}");
  EXPECT_FALSE(Take(LoadConfigFile(bad), &cfg, &error));
  EXPECT_NE(error.find(bad + ": invalid JSON"), std::string::npos) << error;
  EXPECT_NE(error.find("line 1"), std::string::npos) << error;
  EXPECT_FALSE(Take(LoadConfigFile((dir_ / "missing.json").string()), &cfg, &error));
  EXPECT_NE(error.find("missing.json: no such file"), std::string::npos) << error;
  EXPECT_FALSE(Take(LoadConfigFile(dir_.string()), &cfg, &error));  // a directory
  EXPECT_NE(error.find(": a directory, not a file"), std::string::npos) << error;
  // Comments are allowed in hand-written files.
  const std::string good = Write("good.json", "// test\n{\"clients\": 3 /* three */}");
  ASSERT_TRUE(Take(LoadConfigFile(good), &cfg, &error)) << error;
  EXPECT_EQ(cfg.base.clients, 3);
}

TEST_F(TempDir, FlagsOverrideTheFile) {
  const std::string path = Write("c.json", R"({"algorithms": ["token", "timestamp"], "seeds": [1, 2],
      "clients": 4, "hold_ms": 55, "faults": {"gc_pause_ms": 100,
      "plan": [{"kind": "crash_client", "at_ms": 5, "target": 1}]}})");
  RunRequest req;
  std::string error;
  ASSERT_TRUE(Take(ParseRunArgs({"--config", path}), &req, &error)) << error;
  EXPECT_EQ(req.specs.size(), 4u);

  ASSERT_TRUE(
      Take(ParseRunArgs({"--config", path, "--clients", "9", "--seed", "7", "--gc-pause-ms", "300"}), &req, &error))
      << error;
  ASSERT_EQ(req.specs.size(), 2u);  // --seed replaced the file's seeds
  for (const RunSpec& s : req.specs) {
    EXPECT_EQ(s.clients, 9);
    EXPECT_EQ(s.seed, 7u);
    EXPECT_EQ(s.hold_ms, 55);  // not given as a flag: the file's value
    EXPECT_EQ(s.faults.gc_pause_ms, 300);
    EXPECT_EQ(s.faults.plan.size(), 1u);
  }

  ASSERT_TRUE(Take(ParseRunArgs({"--config", path, "--algorithm", "token:release=del", "--fault",
                                 "pause_client:at_ms=1,target=0,duration_ms=2", "--opt", "release=get-then-del"}),
                   &req, &error))
      << error;
  ASSERT_EQ(req.specs.size(), 2u);  // --algorithm replaced the file's algorithms
  EXPECT_EQ(req.specs[0].algorithm, "token");
  EXPECT_EQ(req.specs[0].algorithm_options.Get("release"), "get-then-del");  // --opt wins over NAME:opts
  ASSERT_EQ(req.specs[0].faults.plan.size(), 1u);                            // --fault replaced the plan
  EXPECT_EQ(req.specs[0].faults.plan[0].kind, FaultAction::Kind::kPauseClient);
}

TEST(RunArgs, BadInputIsOneLine) {
  RunRequest req;
  std::string error;
  EXPECT_FALSE(Take(ParseRunArgs({"--clients", "ten"}), &req, &error));
  EXPECT_NE(error.find("--clients"), std::string::npos) << error;
  EXPECT_FALSE(Take(ParseRunArgs({"--seed", "-1"}), &req, &error));
  EXPECT_FALSE(Take(ParseRunArgs({"--frobnicate"}), &req, &error));
  EXPECT_FALSE(Take(ParseRunArgs({"--opt", "noequals"}), &req, &error));
  EXPECT_FALSE(Take(ParseRunArgs({"--config", "/nonexistent/locklab.json"}), &req, &error));
  EXPECT_NE(error.find("/nonexistent/locklab.json"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

TEST(RunArgs, DefaultReportPath) {
  RunSpec a;
  a.algorithm = "token";
  a.seed = 3;
  EXPECT_EQ(DefaultRunReportPath({a}), "results/run-token-3.json");
  RunSpec b = a;
  b.algorithm = "fencing";
  EXPECT_EQ(DefaultRunReportPath({a, b}), "results/run-sweep-3.json");
  b = a;
  b.seed = 4;
  EXPECT_EQ(DefaultRunReportPath({a, b}), "results/run-token-seeds.json");
}

}  // namespace
}  // namespace locklab

namespace locklab {
namespace {

TEST(OptionSpec, ResolveChecksTypeAndRangeOnce) {
  const std::vector<OptionSpec> specs = {OptionSpec::Enum("release", {"lua", "del"}, ""),
                                         OptionSpec::Int("wait-ms", 200, 0, 1000, ""),
                                         OptionSpec::Bool("check", true, "")};
  Options o;
  ASSERT_TRUE(o.Resolve("t", specs).ok());
  EXPECT_EQ(o.ToString(), "check=true,release=lua,wait-ms=200");  // defaults written once, as text
  EXPECT_EQ(o.GetInt("wait-ms"), 200);
  for (const char* bad : {"wait-ms=-1", "wait-ms=1001", "wait-ms=nan", "wait-ms=inf", "wait-ms=", "wait-ms=1.5",
                          "check=yes", "release=x"}) {
    Result<Options> given = Options::Parse(bad);
    ASSERT_TRUE(given.ok()) << bad;
    const Status st = given->Resolve("t", specs);
    EXPECT_TRUE(st.invalid()) << bad;
    EXPECT_EQ(st.message().rfind("t: option " + std::string(bad, std::string(bad).find('=')), 0), 0u) << st.message();
  }
  Result<Options> kept = Options::Parse("wait-ms=0200");
  ASSERT_TRUE(kept.ok());
  ASSERT_TRUE(kept->Resolve("t", specs).ok());
  EXPECT_EQ(kept->Get("wait-ms"), "0200");  // the text as given: reports show it so
  EXPECT_EQ(kept->GetInt("wait-ms"), 200);
  EXPECT_EQ(specs[1].ValuesText(), "0..1000");
  EXPECT_EQ(specs[2].ValuesText(), "true|false");
}

TEST(Resolve, NonFiniteRatesFailEveryRange) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (double v : {nan, inf, -inf}) {
    for (double FaultSpec::*field :
         {&FaultSpec::gc_pause_rate, &FaultSpec::net_delay_ms, &FaultSpec::net_loss, &FaultSpec::clock_drift_ppm}) {
      RunSpec s;
      s.faults.*field = v;
      const Status st = ResolveSpec(&s);
      EXPECT_TRUE(st.invalid()) << v;
    }
  }
  RunSpec s;
  std::string error;
  ASSERT_TRUE(FromJson(json::parse(R"({"faults": {"net_loss": 1e308}})"), &s).ok(&error)) << error;
  EXPECT_EQ(ResolveSpec(&s).message(), "net_loss must be in [0, 1)");
  s.faults.net_loss = 0.5;
  EXPECT_TRUE(ResolveSpec(&s).ok(&error)) << error;
}

}  // namespace
}  // namespace locklab

namespace locklab {
namespace {

Status Check(int x) { return x < 0 ? Status::Invalid("negative") : Status::Ok(); }
Result<int> Twice(int x) {
  LOCKLAB_RETURN_IF_ERROR(Check(x));
  return 2 * x;
}

TEST(Status, ValuesCodesAndMessages) {
  const Status ok;
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.message(), "");
  EXPECT_TRUE(ok.Prefixed("ctx").ok());
  const Status bad = Status::Failed("disk full");
  Status copy = bad;
  copy = copy;  // self-assignment keeps it
  EXPECT_FALSE(copy.ok());
  EXPECT_FALSE(copy.invalid());
  EXPECT_EQ(copy.code(), Status::Code::kFailed);
  EXPECT_EQ(copy.Prefixed("report").message(), "report: disk full");
  std::string why;
  EXPECT_FALSE(copy.ok(&why));
  EXPECT_EQ(why, "disk full");
  EXPECT_EQ(*Twice(4), 8);
  const Result<int> r = Twice(-1);
  EXPECT_FALSE(r.ok(&why));
  EXPECT_TRUE(r.status().invalid());
  EXPECT_EQ(why, "negative");
}

}  // namespace
}  // namespace locklab
