// fit-work: a client frozen while it acquires enters with most of its lease gone; with the option
// the token, timestamp and Redlock locks measure the acquisition and refuse a lease that no longer
// covers the critical section, so the frozen client retries instead of overlapping its successor.
// Without the option nothing changes (not even the report's options).
#include <gtest/gtest.h>

#include <string>

#include "harness/run/run_spec.h"
#include "harness/testing/test_specs.h"

namespace locklab {
namespace {

// Two clients, 1 s TTL, 300 ms holds; client 0 freezes for 900 ms right after sending its first
// lock command (`command`), so its reply reaches it with about 100 ms of the lease left.
RunResult FrozenWhileAcquiring(const std::string& algorithm, const std::string& command, bool fit_work) {
  RunSpec s = SmallSpec(algorithm);
  if (fit_work) s.algorithm_options.Set("fit-work", "true");
  s.clients = 2;
  s.requests = 4;
  s.hold_ms = 300;
  return RunWithFault(s, 50, "pause_client:target=0,on_send=" + command + ",occurrence=1,duration_ms=900");
}

struct Case {
  std::string algorithm, command;
};

class FitWork : public testing::TestWithParam<Case> {};

TEST_P(FitWork, TheFrozenAcquirerOverlapsWithoutItAndRetriesWithIt) {
  const Case& c = GetParam();
  const RunResult plain = FrozenWhileAcquiring(c.algorithm, c.command, false);
  EXPECT_GT(plain.check.safety.violations, 0) << c.algorithm << ": the late entry should overlap";
  const RunResult fit = FrozenWhileAcquiring(c.algorithm, c.command, true);
  EXPECT_EQ(fit.check.safety.violations, 0) << c.algorithm << " with fit-work";
  EXPECT_EQ(fit.check.resource.lost_updates, 0);
  EXPECT_EQ(fit.check.liveness.acquired, 4) << "every request still gets the lock, later";
  EXPECT_EQ(fit.check.liveness.releases_failed, 0);
}

INSTANTIATE_TEST_SUITE_P(Locks, FitWork,
                         testing::Values(Case{"token", "SET"}, Case{"timestamp", "SETNX"}, Case{"redlock", "SET"}),
                         [](const testing::TestParamInfo<Case>& i) { return i.param.algorithm; });

TEST(FitWorkOption, IsLeftOutOfTheResolvedOptionsUnlessSet) {
  RunSpec s = SmallSpec("token");
  std::string error;
  ASSERT_TRUE(ResolveSpec(&s).ok(&error)) << error;
  EXPECT_EQ(s.algorithm_options.ToString(), "release=lua");
  s = SmallSpec("token");
  s.algorithm_options.Set("fit-work", "true");
  ASSERT_TRUE(ResolveSpec(&s).ok(&error)) << error;
  EXPECT_EQ(s.algorithm_options.ToString(), "fit-work=true,release=lua");
  s = SmallSpec("watchdog");
  s.algorithm_options.Set("fit-work", "true");
  EXPECT_FALSE(ResolveSpec(&s).ok(&error));
  EXPECT_NE(error.find("unknown option 'fit-work'"), std::string::npos) << error;
}

}  // namespace
}  // namespace locklab
