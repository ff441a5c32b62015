// IdlePollHold: as root it holds /dev/cpu_dma_latency open while alive and closes it after;
// otherwise it says why it could not.
#include "harness/bench/idle_poll.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace locklab {
namespace {

// How many of this process's open files are /dev/cpu_dma_latency.
int OpenLatencyFiles() {
  int n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    std::error_code rec;
    if (std::filesystem::read_symlink(e.path(), rec) == "/dev/cpu_dma_latency") ++n;
  }
  return n;
}

TEST(IdlePollHold, HoldsTheDeviceWhileAliveOrSaysWhyNot) {
  const int before = OpenLatencyFiles();
  {
    IdlePollHold hold;
    if (!hold.active()) {
      EXPECT_NE(hold.why_not().find("/dev/cpu_dma_latency"), std::string::npos) << hold.why_not();
      EXPECT_EQ(OpenLatencyFiles(), before);  // nothing left open by the failed attempt
      GTEST_SKIP() << "cannot hold it here: " << hold.why_not();
    }
    EXPECT_TRUE(hold.why_not().empty());
    EXPECT_EQ(OpenLatencyFiles(), before + 1);
  }
  EXPECT_EQ(OpenLatencyFiles(), before);  // the request ends with the hold
}

}  // namespace
}  // namespace locklab
