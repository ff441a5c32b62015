// RunInOrder's order and limits, and the shard slicing and hashes of a sweep.
#include "harness/run/parallel_runs.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "harness/run/sweep_shard.h"

namespace locklab {
namespace {

RunResult Numbered(size_t i) {
  RunResult r;
  r.spec.seed = i;
  return r;
}

TEST(RunInOrder, ConsumesInIndexOrderWhateverFinishesFirst) {
  for (int jobs : {1, 2, 4, 16}) {
    std::vector<size_t> seen;
    RunInOrder(
        50, jobs, 4,
        [](size_t i) {
          // Later runs finish first.
          std::this_thread::sleep_for(std::chrono::microseconds(((50 - i) % 7) * 200));
          return Numbered(i);
        },
        [&](size_t i, RunResult&& r) {
          EXPECT_EQ(r.spec.seed, i);
          seen.push_back(i);
        });
    ASSERT_EQ(seen.size(), 50u) << "jobs " << jobs;
    for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], i);
  }
}

TEST(RunInOrder, NoRunStartsMoreThanTheWindowAheadOfConsume) {
  std::atomic<size_t> consumed{0};
  std::atomic<bool> too_far{false};
  RunInOrder(
      40, 4, 6,
      [&](size_t i) {
        if (i >= consumed.load() + 6) too_far = true;
        if (i == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the others wait for it
        return Numbered(i);
      },
      [&](size_t i, RunResult&&) { consumed = i + 1; });
  EXPECT_FALSE(too_far.load());
  EXPECT_EQ(consumed.load(), 40u);
}

TEST(RunInOrder, AnExceptionOfARunComesBack) {
  size_t consumed = 0;
  EXPECT_THROW(RunInOrder(
                   100, 3, 8,
                   [](size_t i) {
                     if (i == 10) throw std::runtime_error("run 10");
                     return Numbered(i);
                   },
                   [&](size_t, RunResult&&) { ++consumed; }),
               std::runtime_error);
  EXPECT_LE(consumed, 10u);
  EXPECT_THROW(RunInOrder(
                   5, 2, 2, [](size_t i) { return Numbered(i); },
                   [](size_t i, RunResult&&) {
                     if (i == 2) throw std::runtime_error("consume 2");
                   }),
               std::runtime_error);
}

TEST(RunInOrder, NothingToRun) {
  RunInOrder(0, 8, 8, [](size_t i) { return Numbered(i); }, [](size_t, RunResult&&) { FAIL(); });
  EXPECT_GE(DefaultJobs(), 1);
  EXPECT_LE(DefaultJobs(), kMaxJobs);
}

TEST(Shards, ParseIsOneBasedAndStrict) {
  ASSERT_TRUE(ParseShard("1/1").ok());
  EXPECT_EQ(*ParseShard("3/8"), (Shard{3, 8}));
  for (const char* bad : {"0/3", "4/3", "3", "/3", "1/", "1/0", "-1/3", "1/3x", " 1/3", "1/10001", "a/b", ""})
    EXPECT_FALSE(ParseShard(bad).ok()) << bad;
  EXPECT_NE(ParseShard("0/3").status().message().find("--shard 0/3"), std::string::npos);
}

TEST(Shards, RoundRobinSlicesCoverTheSweepOnce) {
  EXPECT_EQ(ShardRuns(7, {1, 3}), (std::vector<size_t>{0, 3, 6}));
  EXPECT_EQ(ShardRuns(7, {3, 3}), (std::vector<size_t>{2, 5}));
  EXPECT_TRUE(ShardRuns(2, {3, 3}).empty());
  std::vector<int> count(100, 0);
  for (int i = 1; i <= 7; ++i)
    for (size_t r : ShardRuns(100, {i, 7})) ++count[r];
  for (int c : count) EXPECT_EQ(c, 1);
}

TEST(Shards, HashesAreStableAndTellSweepsApart) {
  EXPECT_EQ(HashHex(""), "cbf29ce484222325");  // FNV-1a 64's offset basis
  EXPECT_EQ(HashHex("a"), "af63dc4c8601ec8c");
  RunSpec a, b;
  b.seed = 2;
  EXPECT_EQ(ConfigHash(a), ConfigHash(b));  // the seed is not part of the configuration
  b.clients = 3;
  EXPECT_NE(ConfigHash(a), ConfigHash(b));
  EXPECT_EQ(SweepHash({a, b}), SweepHash({a, b}));
  EXPECT_NE(SweepHash({a, b}), SweepHash({b, a}));
  EXPECT_NE(SweepHash({a}), SweepHash({a, a}));
}

// HashSweep makes each spec's JSON once for both hashes, on the sweep's threads, and a spec that
// differs from the one before it in its seed alone reuses that one's: the same hashes as SweepHash
// and ConfigHash, on one thread or several.
TEST(Shards, HashSweepGivesTheHashesOfSweepHashAndConfigHash) {
  std::vector<RunSpec> specs(5);
  specs[1].seed = 7;
  specs[2].algorithm = "redlock";
  specs[2].faults.gc_pause_ms = 300;
  specs[3].algorithm_options.Set("release", "del");
  specs[3].workload = "seckill";
  specs[4].faults.plan.push_back(FaultAction{});
  specs[4].retry = "fixed";
  for (uint64_t seed : {12345678901234567890ULL, 0ULL, 9ULL}) {  // seeds of any length after a plan
    specs.push_back(specs[4]);
    specs.back().seed = seed;
  }
  specs.push_back(specs.back());
  specs.back().faults.plan.back().at_us += 1;  // the plan alone differs
  specs.push_back(specs.back());
  specs.back().seed = 10;
  for (int jobs : {1, 2}) {
    const SweepHashes h = HashSweep(specs, jobs);
    EXPECT_EQ(h.sweep, SweepHash(specs));
    ASSERT_EQ(h.configs.size(), specs.size());
    for (size_t i = 0; i < specs.size(); ++i) EXPECT_EQ(h.configs[i], ConfigHash(specs[i])) << i;
  }
  EXPECT_EQ(HashSweep({}, 1).sweep, SweepHash({}));
}

}  // namespace
}  // namespace locklab
