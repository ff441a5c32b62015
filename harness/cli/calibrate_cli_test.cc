// `locklab calibrate` end to end, in process: flags, exit codes, the profile it writes, --check.
#include "harness/testing/temp_dir_test.h"
#include "harness/cli/calibrate_cli.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "harness/run/profile.h"
#include "harness/testing/cli_test_util.h"

namespace locklab {
namespace {

class CalibCli : public TempDirTest {
 protected:
  CalibCli() : TempDirTest("locklab_calib_cli_test") {}
};

TEST_F(CalibCli, BadFlagsExit2AndRunNothing) {
  EXPECT_EQ(Cli({"calibrate", "--help"}), kExitOk);
  EXPECT_EQ(Cli({"calibrate", "--rounds", "0"}), kExitBadInput);
  EXPECT_EQ(Cli({"calibrate", "--rounds", "many"}), kExitBadInput);
  EXPECT_EQ(Cli({"calibrate", "--fast"}), kExitBadInput);
  EXPECT_EQ(Cli({"calibrate", "--out", Path("dir/")}), kExitBadInput);
  EXPECT_EQ(Cli({"calibrate", "--machine-only", Path("missing.json"), "--out", Path("o.json")}), kExitBadInput);
  EXPECT_EQ(Cli({"calibrate", "--held-only", Path("missing.json"), "--out", Path("o.json")}), kExitBadInput);
  EXPECT_EQ(Cli({"calibrate", "--held-only", "a.json", "--machine-only", "b.json"}), kExitBadInput);
  EXPECT_FALSE(std::filesystem::exists(dir_));
  EXPECT_EQ(DefaultProfilePath().rfind("results/calibration/profile-", 0), 0u);
}

TEST_F(CalibCli, QuickWritesAProfileThatLoads) {
  const std::string out = Path("p/profile.json");
  ASSERT_EQ(Cli({"calibrate", "--quick", "--rounds", "1", "--no-progress", "--out", out}), kExitOk);
  Result<sim::CostModel> m = LoadProfile(out);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->name.rfind("calibrated:", 0), 0u);
  EXPECT_GT(m->node.command_us.MeanUs(), 0.0);
  EXPECT_EQ(Cli({"calibrate", "--check", out}), kExitOk);
}

// --held-only on the committed default: a profile with the held keys, or, on a machine too busy
// for the waves' fit, exit 1 naming why and no file.
TEST_F(CalibCli, HeldOnlyWritesTheHeldKeysOrSaysWhyNot) {
  const std::string out = Path("held.json");
  testing::internal::CaptureStderr();
  const int code = Cli({"calibrate", "--held-only", CommittedProfilePath(), "--quick", "--rounds", "2", "--no-progress",
                        "--out", out});
  const std::string err = testing::internal::GetCapturedStderr();
  if (code == kExitInternal) {
    EXPECT_NE(err.find("measure again on a quieter machine"), std::string::npos) << err;
    EXPECT_FALSE(std::filesystem::exists(out));
    return;
  }
  ASSERT_EQ(code, kExitOk) << err;
  Result<sim::CostModel> m = LoadProfile(out);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_GT(m->client.held_write_us.MeanUs(), 0.0);
  EXPECT_GT(m->client.held_read_us.MeanUs(), 0.0);
  EXPECT_GT(m->client.held_callback_us.MeanUs(), 0.0);
  EXPECT_EQ(m->name.size() - m->name.rfind("-held-split"), std::string("-held-split").size());
  EXPECT_EQ(m->name.find("-held-split-held-split"), std::string::npos);  // measured again: one suffix
}

TEST_F(CalibCli, CheckNamesTheBadKey) {
  std::filesystem::create_directories(dir_);
  sim::CostModel m;
  m.name = "t";
  for (sim::CostDist* d : {&m.node.command_us, &m.node.wake_us, &m.node.script_us, &m.node.script_call_us,
                           &m.node.publish_per_receiver_us, &m.node.blpop_serve_us, &m.client.send_us,
                           &m.client.reply_us, &m.client.timer_us, &m.client.hold_us, &m.one_way_us})
    *d = sim::CostDist::Constant(1);
  nlohmann::json j = ProfileJson(m, ProfileContext());
  j["node"]["blpop_serve_us"]["points"][0][0] = 0.5;
  std::ofstream(Path("bad.json")) << j.dump();
  testing::internal::CaptureStderr();
  EXPECT_EQ(Cli({"calibrate", "--check", Path("bad.json")}), kExitBadInput);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("node.blpop_serve_us.points[0]"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  testing::internal::CaptureStderr();  // a missing file is bad input too: exit 2, its reason
  EXPECT_EQ(Cli({"calibrate", "--check", Path("missing.json")}), kExitBadInput);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "locklab: " + Path("missing.json") + ": no such file\n");
  // --machine-only reads its profile before it measures anything: the same key, one line, exit 2.
  testing::internal::CaptureStderr();
  EXPECT_EQ(Cli({"calibrate", "--machine-only", Path("bad.json"), "--out", Path("o.json")}), kExitBadInput);
  const std::string err2 = testing::internal::GetCapturedStderr();
  EXPECT_NE(err2.find("node.blpop_serve_us.points[0]"), std::string::npos) << err2;
  EXPECT_EQ(std::count(err2.begin(), err2.end(), '\n'), 1) << err2;
  EXPECT_FALSE(std::filesystem::exists(Path("o.json")));
  // --held-only needs a profile whose client loop runs in passes, held requests written by the
  // loop: refused before any server starts.
  m.name = "events";
  std::ofstream(Path("events.json")) << ProfileJson(m, ProfileContext()).dump();
  testing::internal::CaptureStderr();
  EXPECT_EQ(Cli({"calibrate", "--held-only", Path("events.json"), "--out", Path("o.json")}), kExitBadInput);
  const std::string err3 = testing::internal::GetCapturedStderr();
  EXPECT_NE(err3.find("\"client\": \"passes\""), std::string::npos) << err3;
  EXPECT_FALSE(std::filesystem::exists(Path("o.json")));
}

}  // namespace
}  // namespace locklab
