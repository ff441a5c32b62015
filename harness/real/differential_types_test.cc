// Differential test, part two: the simulated node against a real redis-server for what the
// semaphore, reentrant, lock-free seckill and WAIT-replicated algorithms need: counters
// (INCRBY, DECR, DECRBY), hashes (HSET, HGET, HDEL, HEXISTS, HINCRBY, HLEN), sorted sets (ZADD
// with NX/XX/GT/LT/CH, ZCARD, ZSCORE, ZREM, ZREMRANGEBYSCORE), their scripts (stock_decrement,
// semaphore_acquire, reentrant_acquire, reentrant_release, rw_read_acquire, rw_write_acquire),
// transactions on two connections
// (WATCH, UNWATCH, MULTI, EXEC, DISCARD: sim/transactions.h) and WAIT on a server without
// replicas.
//
// As in differential_test.cc: random sequences drawn from a seed (LOCKLAB_DIFF_SEQUENCES,
// LOCKLAB_DIFF_SEED), four keys shared by every type so that wrong-type errors meet, FLUSHALL
// between sequences, replies compared exactly. Time is kept out of it: every TTL here is at
// least a minute (so nothing expires within a sequence) or an amount that deletes at once
// (PEXPIRE 0 or less); the one time-dependent reply, reentrant_acquire's PTTL of another
// owner's lock, must agree within kPttlToleranceMs. Expiry itself is differential_test.cc's job.
#include <hiredis/hiredis.h>
#include <time.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "algorithms/command.h"
#include "algorithms/reply.h"
#include "harness/real/hiredis_reply.h"
#include "harness/real/redis_server.h"
#include "harness/testing/hiredis_test_util.h"
#include "harness/testing/redis_test_util.h"
#include "sim/scripts.h"
#include "sim/store.h"
#include "sim/transactions.h"

namespace locklab {
namespace {

constexpr int64_t kDefaultSequences = 1500;
constexpr int64_t kPttlToleranceMs = 5;
constexpr int kMaxFailures = 3;

int64_t NowMs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

struct Step {
  int conn = 0;  // which connection sends it (transactions use two)
  Command cmd;
  bool eval = false;  // a script sent as EVAL with its text instead of EVALSHA
  std::string ToString() const {
    const std::string how = cmd.script == Script::kNone ? "" : (eval ? "EVAL " : "EVALSHA ");
    return "[conn " + std::to_string(conn) + "] " + how + cmd.ToString();
  }
};

std::vector<std::string> RedisArgv(const Step& s) {
  if (s.cmd.script == Script::kNone) return s.cmd.argv.ToStrings();
  std::vector<std::string> argv = {s.eval ? "EVAL" : "EVALSHA",
                                   s.eval ? std::string(sim::GetScript(s.cmd.script).lua) : sim::ScriptSha1(s.cmd.script),
                                   std::to_string(s.cmd.num_keys)};
  argv.insert(argv.end(), s.cmd.argv.begin(), s.cmd.argv.end());
  return argv;
}

const std::vector<std::string> kKeys = {"a", "b", "c", "d"};
// Values a counter or the stock may hold: integers, and strings Lua's tonumber() reads
// differently from Redis's integers (they must take the same branch in both script bodies).
const std::vector<std::string> kValues = {"3", "1", "0", "-2", "abc", "1.5", " 7", "0x10", "", "1e2", "inf", "nan"};
const std::vector<std::string> kAmounts = {"1", "5", "-3", "0", "x", "9223372036854775807", "-9223372036854775808"};
const std::vector<std::string> kScores = {"1", "2", "2", "5", "10", "-1", "1.5", "0.1", "inf", "-inf", "x", "nan"};
const std::vector<std::string> kRangeEnds = {"-inf", "+inf", "1", "(1", "2", "(5", "10", "x", "1.5", "(", ""};
const std::vector<std::string> kMembers = {"m1", "m2", "m3"};
const std::vector<std::string> kOwners = {"o1", "o2"};
const std::vector<std::string> kLongTtls = {"60000", "120000", "0", "-5", "x"};  // a minute+, or deletes at once, or bad

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}

  int64_t Uniform(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(rng_() % static_cast<uint64_t>(hi - lo + 1)); }
  bool Chance(int percent) { return Uniform(1, 100) <= percent; }
  const std::string& Pick(const std::vector<std::string>& v) {
    return v[static_cast<size_t>(Uniform(0, static_cast<int64_t>(v.size()) - 1))];
  }
  std::string Key() { return Pick(kKeys); }

  // One command on the new types or their scripts, or a plain command that makes a key of
  // another type (so that WRONGTYPE replies are compared too).
  Step TypesStep() {
    Step s;
    const int64_t r = Uniform(1, 100);
    if (r <= 8) {
      s.cmd = Command::Of("SET", Key(), Pick(kValues));
    } else if (r <= 11) {
      s.cmd = Command::Of("RPUSH", Key(), "x");
    } else if (r <= 14) {
      s.cmd = Command::Of("GET", Key());
    } else if (r <= 18) {
      s.cmd = Command::Of("DECR", Key());
    } else if (r <= 21) {
      s.cmd = Command::Of(Chance(50) ? "INCRBY" : "DECRBY", Key(), Pick(kAmounts));
    } else if (r <= 26) {
      s.cmd = Command::Of("HSET", Key(), Pick(kOwners), Pick(kValues));
      if (Chance(20)) s.cmd.argv.push_back(Pick(kMembers));  // odd: arity error
    } else if (r <= 29) {
      s.cmd = Command::Of("HGET", Key(), Pick(kOwners));
    } else if (r <= 31) {
      s.cmd = Command::Of("HDEL", Key(), Pick(kOwners));
      if (Chance(30)) s.cmd.argv.push_back(Pick(kOwners));
    } else if (r <= 33) {
      s.cmd = Command::Of("HEXISTS", Key(), Pick(kOwners));
    } else if (r <= 37) {
      s.cmd = Command::Of("HINCRBY", Key(), Pick(kOwners), Pick(kAmounts));
    } else if (r <= 38) {
      s.cmd = Command::Of("HLEN", Key());
    } else if (r <= 46) {
      ZaddStep(&s);
    } else if (r <= 48) {
      s.cmd = Command::Of("ZCARD", Key());
    } else if (r <= 50) {
      s.cmd = Command::Of("ZSCORE", Key(), Pick(kMembers));
    } else if (r <= 52) {
      s.cmd = Command::Of("ZREM", Key(), Pick(kMembers));
      if (Chance(30)) s.cmd.argv.push_back(Pick(kMembers));
    } else if (r <= 56) {
      s.cmd = Command::Of("ZREMRANGEBYSCORE", Key(), Pick(kRangeEnds), Pick(kRangeEnds));
    } else if (r <= 59) {
      s.cmd = Command::Of("PEXPIRE", Key(), Pick(kLongTtls));
    } else if (r <= 61) {
      s.cmd = Command::Of("EXISTS", Key());
    } else {
      ScriptStep(&s);
    }
    return s;
  }

  // One step of two connections' transactions, or a plain write that may dirty a WATCH.
  Step TransactionStep() {
    Step s;
    s.conn = static_cast<int>(Uniform(0, 1));
    const int64_t r = Uniform(1, 100);
    if (r <= 14) {
      s.cmd = Command::Of("WATCH", Key());
      if (Chance(25)) s.cmd.argv.push_back(Key());
    } else if (r <= 18) {
      s.cmd = Command::Of("UNWATCH");
    } else if (r <= 32) {
      s.cmd = Command::Of("MULTI");
    } else if (r <= 46) {
      s.cmd = Command::Of("EXEC");
    } else if (r <= 50) {
      s.cmd = Command::Of("DISCARD");
    } else if (r <= 58) {
      s.cmd = Command::Of("GET", Key());
    } else if (r <= 68) {
      s.cmd = Command::Of("SET", Key(), Pick(kValues));
    } else if (r <= 78) {
      s.cmd = Command::Of(Chance(50) ? "INCR" : "DECR", Key());
    } else if (r <= 82) {
      s.cmd = Command::Of("DEL", Key());
    } else if (r <= 85) {
      s.cmd = Command::Of("HINCRBY", Key(), "f", "1");
    } else if (r <= 88) {
      s.cmd = Command::Run(Script::kStockDecrement, 1, Key());
    } else if (r <= 90) {
      s.cmd = Command::Of("EXEC", "extra");  // arity
    } else if (r <= 92) {
      s.cmd = Command::Of("NOSUCHCMD", Key());
    } else if (r <= 94) {
      s.cmd = Command::Of("GET");  // arity
    } else if (r <= 96) {
      s.cmd = Command::Of("WATCH");  // arity
    } else {
      s.cmd = Command::Of("SET", Key(), Pick(kValues), "PX", "60000");
    }
    return s;
  }

 private:
  void ZaddStep(Step* s) {
    s->cmd = Command::Of("ZADD", Key());
    for (const char* opt : {"NX", "XX", "GT", "LT", "CH"})
      if (Chance(12)) s->cmd.argv.push_back(opt);
    const int64_t pairs = Uniform(1, 2);
    for (int64_t i = 0; i < pairs; ++i) {
      s->cmd.argv.push_back(Pick(kScores));
      s->cmd.argv.push_back(Pick(kMembers));
    }
    if (Chance(8)) s->cmd.argv.pop_back();  // odd: syntax error
  }

  void ScriptStep(Step* s) {
    const int64_t r = Uniform(1, 6);
    if (r == 1) {
      s->cmd = Command::Run(Script::kStockDecrement, 1, Key());
    } else if (r == 2) {
      // now, and the expiry bound (now - ttl) in the same small range, so that some holders
      // are dropped and some stay; permits always an integer (as the algorithm sends it).
      const int64_t now = Uniform(1, 12);
      s->cmd = Command::Run(Script::kSemaphoreAcquire, 1, Key(), Pick(kMembers), std::to_string(now),
                            std::to_string(now - Uniform(0, 6)), std::to_string(Uniform(1, 3)), Pick(kLongTtls));
    } else if (r <= 4) {
      s->cmd = Command::Run(r == 3 ? Script::kReentrantAcquire : Script::kReentrantRelease, 1, Key(), Pick(kOwners),
                            Pick(kLongTtls));
    } else if (r == 5) {
      const int64_t now = Uniform(1, 12);
      s->cmd = Command::Run(Script::kRwReadAcquire, 2, Key(), Key(), Pick(kMembers), std::to_string(now),
                            std::to_string(now - Uniform(0, 6)), Pick(kLongTtls));
    } else {
      s->cmd = Command::Run(Script::kRwWriteAcquire, 2, Key(), Key(), Pick(kMembers), std::to_string(Uniform(-5, 8)),
                            Pick(kLongTtls));
    }
    s->eval = Chance(30);
  }

  std::mt19937_64 rng_;
};

bool Agree(const Step& s, const Reply& sim, const Reply& redis) {
  if (sim == redis) return true;
  // Another owner's lock: both PTTLs of a key set with a TTL of a minute or more, read at
  // (nearly) the same time.
  return s.cmd.script == Script::kReentrantAcquire && sim.type == Reply::Type::kInteger &&
         redis.type == Reply::Type::kInteger && sim.integer >= 0 && redis.integer >= 0 &&
         std::llabs(sim.integer - redis.integer) <= kPttlToleranceMs;
}

class Fixture : public ::testing::Test {
 protected:
  void SetUp() override {
    servers_ = StartServers(RedisServerOptions{});
    ASSERT_TRUE(servers_);
    timeval tv{2, 0};
    for (auto& c : conns_) {
      c.reset(redisConnectWithTimeout("127.0.0.1", servers_->port(0), tv));
      ASSERT_TRUE(c && c->err == 0) << (c ? c->errstr : "redisConnect failed");
      ASSERT_EQ(redisSetTimeout(c.get(), tv), REDIS_OK);
    }
    std::string error;
    for (const sim::ScriptDef& def : sim::Scripts()) {
      std::optional<Reply> r = RedisRun(conns_[0].get(), {"SCRIPT", "LOAD", def.lua}, &error);
      ASSERT_TRUE(r) << error;
      ASSERT_EQ(*r, Reply::Str(sim::ScriptSha1(def.id))) << ScriptName(def.id);
    }
  }

  // Runs one sequence on both sides; "" or what differed.
  std::string Run(uint64_t seed, const std::vector<Step>& steps) {
    std::string error;
    for (auto& c : conns_) {  // leave any MULTI and WATCH of the last sequence
      RedisRun(c.get(), {"DISCARD"}, &error);
      RedisRun(c.get(), {"UNWATCH"}, &error);
    }
    std::optional<Reply> flushed = RedisRun(conns_[0].get(), {"FLUSHALL"}, &error);
    if (!flushed || !flushed->is_ok()) return "FLUSHALL failed: " + error;
    store_.Clear();
    tx_.Clear();
    std::string log;
    for (size_t i = 0; i < steps.size(); ++i) {
      const Step& s = steps[i];
      const Reply sim = tx_.Execute(store_, s.conn, s.cmd, NowMs(), nullptr);
      std::optional<Reply> redis = RedisRun(conns_[static_cast<size_t>(s.conn)].get(), RedisArgv(s), &error);
      if (!redis) return "seed " + std::to_string(seed) + ": " + error;
      ++by_name_[s.cmd.Name()];
      errors_ += sim.is_error();
      const std::string line = "  " + s.ToString() + " -> sim " + ToString(sim) + ", redis " + ToString(*redis);
      if (!Agree(s, sim, *redis)) {
        return "seed " + std::to_string(seed) + ": MISMATCH at step " + std::to_string(i + 1) + "\n" + log + line +
               "   <== mismatch\nreplay: LOCKLAB_DIFF_SEED=" + std::to_string(seed) +
               " LOCKLAB_DIFF_SEQUENCES=1 real_tests --gtest_filter='DifferentialTypes.*'\n";
      }
      log += line + "\n";
    }
    return "";
  }

  // Sequences of `step` from seeds base..base+n-1; fails the test on a mismatch.
  template <typename StepFn>
  void RunAll(StepFn step) {
    const int64_t sequences = EnvInt("LOCKLAB_DIFF_SEQUENCES", kDefaultSequences);
    const auto base_seed = static_cast<uint64_t>(EnvInt("LOCKLAB_DIFF_SEED", 1));
    int failures = 0;
    for (int64_t i = 0; i < sequences && failures < kMaxFailures; ++i) {
      const uint64_t seed = base_seed + static_cast<uint64_t>(i);
      Gen gen(seed);
      std::vector<Step> steps;
      const int64_t n = gen.Uniform(5, 40);
      for (int64_t k = 0; k < n; ++k) steps.push_back(step(gen));
      const std::string failure = Run(seed, steps);
      if (!failure.empty()) {
        ++failures;
        ADD_FAILURE() << failure;
      }
      ++sequences_;
    }
    std::string names;
    for (const auto& [name, count] : by_name_) names += " " + name + "=" + std::to_string(count);
    std::printf("[ differential ] %" PRId64 " sequences, %" PRId64 " error replies; by command:%s\n", sequences_,
                errors_, names.c_str());
  }

  // Not vacuous: every name ran (only checked on a full run).
  void ExpectRan(std::initializer_list<const char*> names) {
    if (sequences_ < 500) return;
    for (const char* n : names) EXPECT_GT(by_name_[n], 0) << n << " never ran";
    EXPECT_GT(errors_, 0);
  }

  std::unique_ptr<RedisServers> servers_;
  RedisPtr conns_[2];
  sim::Store store_;
  sim::Transactions tx_;
  std::map<std::string, int64_t> by_name_;
  int64_t errors_ = 0;
  int64_t sequences_ = 0;
};

using DifferentialTypes = Fixture;

TEST_F(DifferentialTypes, HashesSortedSetsCountersAndTheirScriptsMatchRedisServer) {
  RunAll([](Gen& g) { return g.TypesStep(); });
  ExpectRan({"DECR", "INCRBY", "DECRBY", "HSET", "HGET", "HDEL", "HEXISTS", "HINCRBY", "HLEN", "ZADD", "ZCARD",
             "ZSCORE", "ZREM", "ZREMRANGEBYSCORE", "stock_decrement", "semaphore_acquire", "reentrant_acquire",
             "reentrant_release", "rw_read_acquire", "rw_write_acquire"});
}

TEST_F(DifferentialTypes, TransactionsOnTwoConnectionsMatchRedisServer) {
  RunAll([](Gen& g) { return g.TransactionStep(); });
  ExpectRan({"WATCH", "UNWATCH", "MULTI", "EXEC", "DISCARD", "INCR", "DECR", "stock_decrement"});
}

// WAIT on a server without replicas: the arguments' errors, 0 at once when no replica is asked
// for, and otherwise 0 after the timeout. The sim store reports the wait (BlockRequest) and
// replies 0; redis-server must answer 0 no sooner than the timeout. WAIT with replicas and
// timeout 0 would block forever: the store refuses it, and it is not sent.
TEST_F(DifferentialTypes, WaitWithoutReplicasMatchesRedisServer) {
  std::string error;
  std::optional<Reply> hz = RedisRun(conns_[0].get(), {"CONFIG", "SET", "hz", "500"}, &error);
  ASSERT_TRUE(hz && hz->is_ok()) << error;
  const std::vector<std::string> replicas = {"0", "1", "2", "-1", "x", "1.5"};
  const std::vector<std::string> timeouts = {"0", "1", "3", "-1", "x", "2.5", "9223372036854775807"};
  int64_t waited = 0, refused = 0;
  for (const auto& n : replicas) {
    for (const auto& t : timeouts) {
      const Command cmd = Command::Of("WAIT", n, t);
      sim::BlockRequest block;
      const Reply sim = store_.Execute(cmd, NowMs(), nullptr, &block);
      if (sim == Reply::Error(sim::kWaitForeverError)) {
        ++refused;
        continue;
      }
      const auto start = std::chrono::steady_clock::now();
      std::optional<Reply> redis = RedisRun(conns_[0].get(), cmd.argv.ToStrings(), &error);
      const auto took_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
      ASSERT_TRUE(redis) << error;
      EXPECT_EQ(sim, *redis) << cmd.ToString();
      if (block.blocked) {
        ++waited;
        EXPECT_TRUE(block.wait) << cmd.ToString();
        EXPECT_GE(took_ms, block.timeout_ms) << cmd.ToString() << ": redis answered before the timeout";
      }
    }
  }
  EXPECT_GT(waited, 0);
  EXPECT_GT(refused, 0);
  // Inside MULTI WAIT answers at once (Redis: "or inside MULTI").
  const Reply queued = tx_.Execute(store_, 0, Command::Of("MULTI"), NowMs(), nullptr);
  ASSERT_TRUE(queued.is_ok());
  EXPECT_EQ(tx_.Execute(store_, 0, Command::Of("WAIT", "1", "0"), NowMs(), nullptr), Reply::Status("QUEUED"));
  EXPECT_EQ(tx_.Execute(store_, 0, Command::Of("EXEC"), NowMs(), nullptr), Reply::Array({Reply::Int(0)}));
  ASSERT_TRUE(RedisRun(conns_[1].get(), {"MULTI"}, &error));
  ASSERT_TRUE(RedisRun(conns_[1].get(), {"WAIT", "1", "0"}, &error));
  std::optional<Reply> exec = RedisRun(conns_[1].get(), {"EXEC"}, &error);
  ASSERT_TRUE(exec) << error;
  EXPECT_EQ(*exec, Reply::Array({Reply::Int(0)}));
}

}  // namespace
}  // namespace locklab
