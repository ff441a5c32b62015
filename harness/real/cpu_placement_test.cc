// Where the real backend's processes run (cpu_placement.h): a split puts the redis-servers on
// the CPUs the event loop does not use, and a pinned loop gets its CPUs back.
#include "harness/real/cpu_placement.h"

#include <sched.h>

#include <fstream>
#include <memory>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "harness/real/redis_server.h"

namespace locklab {
namespace {

// The CPUs process `pid` may run on, as /proc says ("1", "0-1").
std::string AllowedList(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)  // bounded by the file
    if (line.rfind("Cpus_allowed_list:", 0) == 0) return line.substr(line.find_first_not_of(" \t", 18));
  return "";
}

class Placement : public ::testing::Test {
 protected:
  void TearDown() override { SetCpuPlacement(CpuPlacement::kSplit); }
};

TEST_F(Placement, OsPinsNothing) {
  SetCpuPlacement(CpuPlacement::kOs);
  EXPECT_FALSE(PlanCpuSplit().has_value());
  EXPECT_EQ(CpuPlacementText(PlanCpuSplit()), "the scheduler's (--cpu-placement os)");
}

TEST_F(Placement, SplitPutsTheServersOffTheLoopsCpu) {
  const std::optional<CpuSplit> split = PlanCpuSplit();
  cpu_set_t mine;
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  if (CPU_COUNT(&mine) < 2) {
    EXPECT_FALSE(split.has_value());
    GTEST_SKIP() << "one CPU: nothing to split";
  }
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(CPU_COUNT(&split->loop), 1);
  EXPECT_TRUE(CPU_ISSET(split->loop_cpu, &split->loop));
  EXPECT_FALSE(CPU_ISSET(split->loop_cpu, &split->servers));
  EXPECT_EQ(CPU_COUNT(&split->servers), CPU_COUNT(&mine) - 1);

  RedisServerOptions o;
  o.cpus = split->servers;
  Result<std::unique_ptr<RedisServers>> s = RedisServers::Start(o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  const std::string allowed = AllowedList((*s)->pid(0));
  EXPECT_EQ(allowed.find(std::to_string(split->loop_cpu)), std::string::npos) << allowed;
  ASSERT_TRUE((*s)->Restart(0).ok());  // a restarted server keeps its CPUs
  EXPECT_EQ(AllowedList((*s)->pid(0)), allowed);
  {
    const LoopCpuPin pin(split);
    cpu_set_t now;
    ASSERT_EQ(sched_getaffinity(0, sizeof now, &now), 0);
    EXPECT_EQ(CPU_COUNT(&now), 1);
    EXPECT_TRUE(CPU_ISSET(split->loop_cpu, &now));
  }
  cpu_set_t after;
  ASSERT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&after, &mine));
}

TEST_F(Placement, EachSplitTakesTheNextCpuForItsLoop) {
  cpu_set_t mine;
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  if (CPU_COUNT(&mine) < 2) GTEST_SKIP() << "one CPU: nothing to split";
  std::set<int> loops;
  for (int i = 0; i < CPU_COUNT(&mine); ++i) loops.insert(PlanCpuSplit()->loop_cpu);
  EXPECT_EQ(static_cast<int>(loops.size()), CPU_COUNT(&mine));  // runs at once spread their loops
}

}  // namespace
}  // namespace locklab
