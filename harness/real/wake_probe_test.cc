// The bare-timer probe recorded next to real runs (harness/real/wake_probe.h).
#include "harness/real/wake_probe.h"

#include <gtest/gtest.h>

namespace locklab {
namespace {

TEST(WakeProbe, MeasuresEverySleepLength) {
  const std::vector<WakeLateness> rows = ProbeWakeLateness(3);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].sleep_us, 1000);
  EXPECT_EQ(rows[1].sleep_us, 5000);
  for (const WakeLateness& r : rows) {
    EXPECT_EQ(r.n, 3);
    EXPECT_GE(r.median_us, 0.0);  // an absolute deadline is never met early
    EXPECT_GE(r.p90_us, r.median_us);
  }
  const nlohmann::ordered_json j = WakeLatenessJson(rows);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[1]["sleep_us"], 5000);
  EXPECT_TRUE(j[0]["median_us"].is_number());
  EXPECT_EQ(WakeLatenessText(rows).rfind("1 ms sleeps woke ", 0), 0u) << WakeLatenessText(rows);
  EXPECT_EQ(WakeLatenessText({}), "");
}

TEST(WakeProbe, ClampsTheCount) {
  EXPECT_EQ(ProbeWakeLateness(0)[0].n, 1);
}

}  // namespace
}  // namespace locklab
