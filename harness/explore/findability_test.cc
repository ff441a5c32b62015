// The findability table's spaces: what a scenario file's variants make of it. A scenario with no
// fault kind explores how long its clients work only when one of its clients works at least a
// TTL (the long task is then its fault); otherwise holds stay below half a TTL, as under faults.
#include "harness/explore/findability.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace locklab {
namespace {

Scenario Load(const std::string& id) {
  Result<std::vector<Scenario>> all = LoadScenarioDir(DefaultScenarioDir());
  EXPECT_TRUE(all.ok()) << all.status().message();
  for (const Scenario& sc : all.ok() ? *all : std::vector<Scenario>())
    if (sc.id == id) return sc;
  ADD_FAILURE() << "no scenario " << id;
  return {};
}

Result<ExploreSpace> SpaceOfVariant(const std::string& id, const std::string& variant) {
  const Scenario sc = Load(id);
  Result<ScenarioRoles> roles = RolesOf(sc);
  EXPECT_TRUE(roles.ok());
  Result<ExploreSpace> s = SpaceOf(sc, variant, roles.ok() ? *roles : ScenarioRoles());
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s;
}

std::string HoldRange(const std::string& id, const std::string& variant) {
  Result<ExploreSpace> s = SpaceOfVariant(id, variant);
  return s.ok() ? s->hold.Text() : "";
}

TEST(FindabilitySpace, TheLongTaskExploresHoldsPastTheTtlAndANoFaultScenarioWithoutItDoesNot) {
  EXPECT_EQ(HoldRange("long-task", "fixed"), "0.05-3ttl");
  EXPECT_EQ(HoldRange("reentrant-wrong-count", "fixed"), ExploreSpace().hold.Text());
  EXPECT_EQ(HoldRange("reentrant-wrong-count", "broken"), ExploreSpace().hold.Text());
}

// A fix that lengthens the TTL is searched with the pauses (and timeline) that broke the broken
// variant, in ms, not with pauses scaled up with its own TTL.
TEST(FindabilitySpace, ALongerTtlFixMeetsTheBrokenVariantsFaultsInMs) {
  Result<ExploreSpace> broken = SpaceOfVariant("semaphore-pause", "broken");
  Result<ExploreSpace> fixed = SpaceOfVariant("semaphore-pause", "fixed");
  ASSERT_TRUE(broken.ok() && fixed.ok());
  ASSERT_NE(fixed->ttl_ms, broken->ttl_ms);
  EXPECT_EQ(broken->pause.Text(), "0.1-3ttl");
  EXPECT_EQ(fixed->pause.HiMs(fixed->ttl_ms), broken->pause.HiMs(broken->ttl_ms));
  EXPECT_EQ(fixed->hold.HiMs(fixed->ttl_ms), broken->hold.HiMs(broken->ttl_ms));
  EXPECT_EQ(fixed->at.LoMs(fixed->ttl_ms), broken->at.LoMs(broken->ttl_ms));
  Result<ExploreSpace> same_ttl = SpaceOfVariant("get-then-del", "fixed");  // same TTL: ranges as given
  ASSERT_TRUE(same_ttl.ok());
  EXPECT_EQ(same_ttl->pause.Text(), "0.1-3ttl");
}

}  // namespace
}  // namespace locklab
