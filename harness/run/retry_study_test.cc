// A quick version of the retry-strategy study (harness/experiments/retry-strategies.json): the
// committed experiment with a small load, every retry policy, on the simulator and on real
// redis-server processes. Each must finish every request without breaking mutual exclusion.
#include <gtest/gtest.h>
#include "harness/run/build_info.h"

#include <set>

#include "algorithms/retry.h"
#include "harness/run/config.h"
#include "harness/run/run_spec.h"

namespace locklab {
namespace {

struct Case {
  std::string retry, backend;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.retry << "/" << c.backend; }

std::vector<Case> Cases() {
  std::vector<Case> out;
  for (const char* backend : {"sim", "redis"})
    for (const auto& r : RetryPolicies())
      if (r.name != "once") out.push_back({r.name, backend});  // once gives up: not a way of waiting
  return out;
}

class RetryStudy : public ::testing::TestWithParam<Case> {};

TEST_P(RetryStudy, SmallLoadCompletesWithoutViolations) {
  Result<ConfigFile> loaded = LoadConfigFile(std::string(SourceDir()) + "/harness/experiments/retry-strategies.json");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const ConfigFile& cfg = *loaded;
  std::string error;
  ASSERT_FALSE(cfg.sweep.empty()) << "the experiment sweeps the retry policies";
  RunSpec spec = cfg.base;
  spec.backend = GetParam().backend;
  spec.retry = GetParam().retry;
  spec.retry_options = Options();
  spec.clients = 20;
  spec.requests = 60;
  spec.acquire_timeout_ms = 15000;
  ASSERT_TRUE(ResolveSpec(&spec).ok(&error)) << error;
  const RunResult r = RunOne(spec, false);
  ASSERT_TRUE(r.completed) << r.error;
  EXPECT_EQ(r.check.safety.violations, 0);
  EXPECT_EQ(r.check.resource.oversold + r.check.resource.lost_updates, 0);
  const auto& l = r.check.liveness;
  EXPECT_EQ(l.acquired + l.failed + l.unknown, spec.requests);
  EXPECT_GT(l.acquired, 0);
  EXPECT_EQ(r.check.resource.orders, l.acquired);  // every acquisition sold one unit
}

INSTANTIATE_TEST_SUITE_P(EveryPolicy, RetryStudy, ::testing::ValuesIn(Cases()), [](const auto& info) {
  return info.param.retry + "_" + info.param.backend;
});

// The experiment file lists every registered retry policy: a new one joins the study.
TEST(RetryStudy, TheExperimentSweepsEveryPolicy) {
  Result<ConfigFile> loaded = LoadConfigFile(std::string(SourceDir()) + "/harness/experiments/retry-strategies.json");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const ConfigFile& cfg = *loaded;
  std::string error;
  std::set<std::string> swept;
  for (const auto& [key, values] : cfg.sweep)
    if (key == "retry")
      for (const auto& v : values) swept.insert(v.get<std::string>().substr(0, v.get<std::string>().find(':')));
  for (const auto& r : RetryPolicies()) {
    if (r.name == "once" || r.name == "auto" || r.name == "fixed" || r.name == "random") continue;  // generic ones
    EXPECT_TRUE(swept.count(r.name)) << r.name << " is missing from harness/experiments/retry-strategies.json";
  }
}

}  // namespace
}  // namespace locklab
