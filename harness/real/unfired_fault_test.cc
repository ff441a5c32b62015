// A fault fired by a client's n-th command (delay_message, on_send) whose n-th command never
// comes did not happen: both runtimes say so, RunResult::faults_unfired counts it and the report
// has a note naming it, so that a per-fault rate (locklab map) can leave the run out.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "harness/run/config.h"
#include "harness/run/run_spec.h"
#include "harness/testing/test_specs.h"

namespace locklab {
namespace {

// Client 0 of 2 takes at most 3 of the 4 requests: a fifth DEL or ninth GET never comes.
RunSpec Spec(const std::string& backend, const std::string& fault) {
  RunSpec s = ShortHoldSpec(backend, "token", 2, 4, 3, 30'000);
  s.algorithm_options = Options(std::map<std::string, std::string>{{"release", "del"}});
  FaultAction f;
  std::string error;
  EXPECT_TRUE(Take(ParseFaultFlag(fault), &f, &error)) << error;
  s.faults.plan = {f};
  return s;
}

class UnfiredFault : public ::testing::TestWithParam<std::string> {};

TEST_P(UnfiredFault, ARunWhoseNthCommandNeverCameSaysSo) {
  RunResult never = RunResolved(Spec(GetParam(), "delay_message:target=0,command=DEL,occurrence=5,duration_ms=50"));
  ASSERT_TRUE(never.completed) << never.error;
  EXPECT_EQ(never.faults_unfired, 1);
  const std::string want = "planned fault did not happen: delay_message DEL of client 0, occurrence 5: it sent ";
  int notes = 0;
  for (const std::string& n : never.notes) notes += n.rfind(want, 0) == 0 ? 1 : 0;
  EXPECT_EQ(notes, 1) << "no note starting '" << want << "'";

  RunResult trigger = RunResolved(Spec(GetParam(), "pause_client:target=0,on_send=GET,occurrence=9,duration_ms=5"));
  ASSERT_TRUE(trigger.completed) << trigger.error;
  EXPECT_EQ(trigger.faults_unfired, 1);

  RunResult fired = RunResolved(Spec(GetParam(), "delay_message:target=0,command=DEL,occurrence=1,duration_ms=50"));
  ASSERT_TRUE(fired.completed) << fired.error;
  EXPECT_EQ(fired.faults_unfired, 0);
  for (const std::string& n : fired.notes) EXPECT_EQ(n.find("did not happen"), std::string::npos) << n;
}

INSTANTIATE_TEST_SUITE_P(Backends, UnfiredFault, ::testing::Values("sim", "redis"));

}  // namespace
}  // namespace locklab
