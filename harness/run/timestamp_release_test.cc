// The timestamp lock's release: GET, compare, then DEL. A holder frozen between the two deletes
// the lock of the client that took the expired lock over, and gets in again beside it;
// lua-release=true compares and deletes in one script. And its takeover: a client stalled after
// its GET writes, with a losing GETSET, the expiry it computed before the stall, already past, so
// the lock it overwrote looks expired and the next takeover overlaps its holder; fresh-expiry=true
// writes an expiry read from the clock when the GETSET is sent. And a losing GETSET overwrites
// the holder's value, so that the holder's release fails; recovery=watch takes over in one
// optimistic transaction (WATCH, GET, MULTI, SET, EXEC), which a change since the GET aborts.
#include <gtest/gtest.h>

#include <string>

#include "harness/run/run_spec.h"
#include "harness/testing/test_specs.h"

namespace locklab {
namespace {

// Client 0 holds 500 ms of a 1 s TTL and freezes for 800 ms right after sending its release's
// first command; client 1 takes the expired lock over meanwhile.
RunResult FrozenInRelease(bool lua_release) {
  RunSpec s = SmallSpec("timestamp");
  if (lua_release) s.algorithm_options.Set("lua-release", "true");
  s.clients = 2;
  s.requests = 4;
  s.hold_ms = 500;
  return RunWithFault(s, 50, "pause_client:target=0,on_send=*,occurrence=2,duration_ms=800");
}

TEST(TimestampRelease, GetThenDelDeletesTheTakeoverAndTheScriptDoesNot) {
  const RunResult plain = FrozenInRelease(false);
  EXPECT_GT(plain.check.safety.violations, 0);
  const RunResult lua = FrozenInRelease(true);
  EXPECT_EQ(lua.check.safety.violations, 0);
  EXPECT_EQ(lua.check.liveness.acquired, 4);
}

// A holds 0-600 ms; B asks at 100 ms and freezes for 1500 ms right after sending its GET; C takes
// the free lock at 700 ms and works 1500 ms. B resumes with A's expired value in hand.
RunResult StalledTakeover(bool fresh_expiry) {
  RunSpec s = SmallSpec("timestamp");
  if (fresh_expiry) s.algorithm_options.Set("fresh-expiry", "true");
  s.clients = 3;
  s.client_plans = {{0, 1, 600, -1, false}, {100, 1, 100, 10'000, false}, {700, 1, 1500, -1, false}};
  s.requests = 3;
  return RunWithFault(s, 50, "pause_client:target=1,on_send=GET,occurrence=1,duration_ms=1500");
}

TEST(TimestampTakeover, AStaleExpiryWrittenByALosingGetsetLetsTheNextTakeoverOverlap) {
  const RunResult stale = StalledTakeover(false);
  EXPECT_GT(stale.check.safety.violations, 0);
  const RunResult fresh = StalledTakeover(true);
  EXPECT_EQ(fresh.check.safety.violations, 0);
  EXPECT_EQ(fresh.check.liveness.acquired, 3);
}

// A holds three times 450 ms from 0; B asks at 100 ms, reads A's first value with its GET and
// freezes for 1000 ms right after sending it. It resumes at 1100 ms, when that value is past but A
// holds again under a newer one.
RunResult FrozenBeforeTakeover(const std::string& recovery) {
  RunSpec s = SmallSpec("timestamp");
  s.algorithm_options.Set("recovery", recovery);
  s.clients = 2;
  s.client_plans = {{0, 3, 450, -1, false}, {100, 1, 100, 10'000, false}};
  s.requests = 4;
  return RunWithFault(s, 50, "pause_client:target=1,on_send=GET,occurrence=1,duration_ms=1000");
}

TEST(TimestampTakeover, ALosingGetsetOverwritesTheHolderAndAWatchedTakeoverDoesNot) {
  const RunResult getset = FrozenBeforeTakeover("getset");
  EXPECT_GT(getset.check.liveness.releases_failed, 0);
  const RunResult watch = FrozenBeforeTakeover("watch");
  EXPECT_EQ(watch.check.liveness.releases_failed, 0);
  EXPECT_EQ(watch.check.safety.violations, 0);
  EXPECT_EQ(watch.check.liveness.acquired, 4);
}

}  // namespace
}  // namespace locklab
