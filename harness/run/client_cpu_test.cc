// RunResult::client_cpu_us (Runtime::ClientCpuUs): the client process's CPU in a run, as the
// simulator charges it and as the real runtime's thread spends it.
#include <gtest/gtest.h>

#include <string>

#include "harness/run/run_spec.h"
#include "harness/testing/test_specs.h"

namespace locklab {
namespace {

RunResult RunToken(const std::string& backend, const std::string& profile, int clients) {
  RunSpec s;
  s.backend = backend;
  s.algorithm = "token";
  s.clients = clients;
  s.requests = 200;
  s.hold_ms = 1;
  SetSimProfile(&s, profile);
  return RunResolved(s);
}

TEST(ClientCpu, TheLegacyProfileChargesNone) {
  EXPECT_EQ(RunToken("sim", "legacy", 4).client_cpu_us, 0.0);
}

TEST(ClientCpu, TheDefaultProfileChargesEveryCommandWithinTheRunsTime) {
  const RunResult r = RunToken("sim", "default", 4);
  // Every command is sent and its reply handled on the one client CPU: more than nothing per
  // command, and no more CPU than the run lasted (one core, busy at most all the time).
  EXPECT_GT(r.client_cpu_us, 1.0 * static_cast<double>(r.commands.total));
  EXPECT_LE(r.client_cpu_us, static_cast<double>(r.duration_us));
  // The same seed charges the same CPU.
  EXPECT_EQ(RunToken("sim", "default", 4).client_cpu_us, r.client_cpu_us);
}

TEST(ClientCpu, TheRealRuntimeMeasuresItsThread) {
  const RunResult r = RunToken("redis", "default", 4);
  EXPECT_GT(r.client_cpu_us, 0.0);
  EXPECT_LE(r.client_cpu_us, static_cast<double>(r.duration_us) + 100'000);  // one thread: at most its wall time
}

}  // namespace
}  // namespace locklab
