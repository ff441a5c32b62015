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

std::string HoldRange(const std::string& id, const std::string& variant) {
  const Scenario sc = Load(id);
  Result<ScenarioRoles> roles = RolesOf(sc);
  EXPECT_TRUE(roles.ok());
  Result<ExploreSpace> s = SpaceOf(sc, variant, roles.ok() ? roles->targets : std::vector<FindingClass>());
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? s->hold.Text() : "";
}

TEST(FindabilitySpace, TheLongTaskExploresHoldsPastTheTtlAndANoFaultScenarioWithoutItDoesNot) {
  EXPECT_EQ(HoldRange("long-task", "fixed"), "0.05-3ttl");
  EXPECT_EQ(HoldRange("reentrant-wrong-count", "fixed"), ExploreSpace().hold.Text());
  EXPECT_EQ(HoldRange("reentrant-wrong-count", "broken"), ExploreSpace().hold.Text());
}

}  // namespace
}  // namespace locklab
