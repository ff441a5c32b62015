// Differential test: the simulated Redis node (sim::Store, scripts by their C++ bodies from
// sim/scripts.h) against a real redis-server (the same scripts by their Lua text), on random
// sequences of the commands and scripts the algorithms use: strings, TTLs, the lock scripts,
// and the waiting primitives' commands (LPUSH, RPUSH, LPOP, LLEN, LTRIM, LRANGE, BLPOP,
// notify_one, PUBLISH) and the fifo lock's (LREM, fifo_acquire, fifo_release, fifo_leave) on the same keys, so that wrong-type errors are compared too.
//
// BLPOP: only the cases that do not wait for another client. The sim store pops at once or
// reports that the call would park (BlockRequest); then the simulator would answer nil at the
// timeout, so the sim's reply is nil, and redis-server must answer nil too, no sooner than the
// timeout (1-4 ms here; the test sets the server's hz to 500 so that it notices the timeout
// within ~2 ms instead of ~100). A BLPOP with timeout 0 (block forever) is never sent: the
// simulator refuses it (sim/store_test.cc checks that). PUBLISH has no subscriber on either
// side: 0.
//
// Active expiry (keys deleted in the background, seen when the clock steps back) is compared
// by harness/real/differential_expire_test.cc; this test's bare store expires lazily only, which
// no reply here can tell apart (no clock steps back).
//
// Each sequence is generated up front from its own seed (base seed + its index), over four keys
// (so that commands collide) with small TTLs, then run one command at a time on both: on the
// sim store at now_ms = CLOCK_REALTIME in ms read right before the command, on the server
// through a synchronous hiredis connection. Between sequences: FLUSHALL on Redis, Clear() on
// the store. Replies must be identical, TTL/PTTL values excepted (below).
//
// Environment:
//   LOCKLAB_DIFF_SEQUENCES=N  run N sequences instead of kDefaultSequences (a few seconds);
//                             e.g. LOCKLAB_DIFF_SEQUENCES=200000 for a long run (~10 min).
//   LOCKLAB_DIFF_SEED=S       base seed (default 1): sequence i uses seed S + i. A failure
//                             prints the failing sequence's seed;
//                             LOCKLAB_DIFF_SEED=<it> LOCKLAB_DIFF_SEQUENCES=1 replays it.
//   e.g. LOCKLAB_DIFF_SEQUENCES=200000 build/real_tests --gtest_filter='Differential.*'
//
// Time, and the tolerance (the only one). The sim runs a command at t0 (ms, read before it);
// Redis runs it at some time in [t0, t1] (t1 read after its reply). A deadline Redis computes
// (SET PX/EX, PEXPIRE, EXPIRE, the scripts) is therefore known only to lie in a window
// [lo, hi]: lo = the sim's deadline, hi = lo + (t1 - t0) of the command that set it. The test
// tracks that window for every key with a TTL, and:
//  - Guard: before a command, if a key it touches could reach its deadline while the command
//    runs (t0 + kGuardMs > lo and t0 <= hi), it waits until t0 > hi. So no command runs while
//    a key's expiry is ambiguous, and whether a key has expired must agree exactly. (The exact
//    deadline millisecond cannot be hit with a real clock; sim/store_test.cc checks it on a
//    fixed clock against replies redis-server gave.) Likewise EXPIRE/PEXPIRE GT|LT compare a
//    new deadline, now + amount, with the key's: the test waits while
//    [t0, t0 + kGuardMs] + amount and [lo, hi] are not strictly apart.
//  - PTTL: Redis's value must lie in [lo - t1, hi - t0] (each clamped at 0, as Redis clamps):
//    its deadline within its window, read at a time within [t0, t1]; and so must the sim's.
//    The interval is (hi - lo) + (t1 - t0) wide: 0..2 ms in practice, so this is "PTTL equal
//    within +-2 ms", made exact per command. TTL: the same bounds, rounded as Redis rounds
//    ((ms + 500) / 1000), so equal or 1 s apart only across a rounding boundary.
//    A key without a TTL must give -1, a missing key -2, exactly.
//  - Stall: if a command took longer than the guard allowed for (the machine stalled us or the
//    server) so that a touched key's window overlapped [t0, t1] (for GT|LT: [t0, t1] + amount),
//    the key may legitimately have expired (or compared) differently on each side. A mismatch
//    in that command ends the sequence as inconclusive (counted and printed, never silent; the
//    test fails when more than 2% + 5 of the sequences are). Any other mismatch fails the test.
#include <hiredis/hiredis.h>
#include <time.h>

#include <algorithm>
#include <charconv>
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
#include "harness/testing/hiredis_test_util.h"
#include "harness/testing/redis_test_util.h"
#include "harness/real/hiredis_reply.h"
#include "harness/real/redis_server.h"
#include "sim/scripts.h"
#include "sim/store.h"

namespace locklab {
namespace {

constexpr int64_t kDefaultSequences = 3000;
constexpr int64_t kGuardMs = 2;  // a command is assumed to finish within this many ms ticks
constexpr int64_t kFarMs = 1'000'000'000'000;  // GT/LT amounts beyond this: far from any deadline
constexpr int kMaxFailures = 3;  // failing sequences reported before the test stops

// CLOCK_REALTIME in ms: the clock Redis expires keys by (its mstime(), via gettimeofday).
int64_t NowMs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

// Sleeps until CLOCK_REALTIME reaches ms (absolute).
void SleepUntilMs(int64_t ms) {
  timespec ts;
  ts.tv_sec = static_cast<time_t>(ms / 1000);
  ts.tv_nsec = static_cast<long>(ms % 1000) * 1'000'000;
  while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, nullptr) != 0) {
  }
}

// ---------------------------------------------------------------------------------------------
// Generation: a sequence is a list of steps, all drawn from the seed before anything runs.

struct Step {
  bool sleep = false;
  int64_t sleep_ms = 0;
  Command cmd;                    // as the sim takes it
  bool eval = false;              // scripts: EVAL with the Lua text instead of EVALSHA
  std::vector<std::string> keys;  // the keys it touches (for the expiry windows)
  bool writer = false;            // may set a key's value or deadline
  // EXPIRE/PEXPIRE with GT or LT and a valid amount: it compares now + compare_ms with the
  // key's deadline.
  std::optional<int64_t> compare_ms;

  std::string ToString() const {
    if (sleep) return "(sleep " + std::to_string(sleep_ms) + " ms)";
    if (cmd.script == Script::kNone) return cmd.ToString();
    return std::string(eval ? "EVAL " : "EVALSHA ") + cmd.ToString();
  }
};

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}

  std::vector<Step> Sequence() {
    std::vector<Step> steps;
    const int64_t n = Uniform(5, 40);
    // One sequence in four lets time pass (sleep steps) so that short TTLs run out mid-way;
    // the others are fast (keys set with PX of a few ms still expire within them).
    const bool timed = Chance(25);
    for (int64_t i = 0; i < n; ++i) {
      if (timed && Chance(8)) {
        Step s;
        s.sleep = true;
        s.sleep_ms = Uniform(1, 5);
        steps.push_back(std::move(s));
        continue;
      }
      steps.push_back(CommandStep());
    }
    return steps;
  }

 private:
  int64_t Uniform(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng_() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool Chance(int percent) { return Uniform(1, 100) <= percent; }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(Uniform(0, static_cast<int64_t>(v.size()) - 1))];
  }

  std::string Key() { return Pick(kKeys); }
  std::string Value() { return Pick(kValues); }
  // Option names are case-insensitive in Redis: sometimes say so.
  std::string Word(const std::string& upper) {
    if (!Chance(15)) return upper;
    std::string w = upper;
    for (char& c : w) c = static_cast<char>(c | 0x20);
    return w;
  }
  // A ms amount for PX / PEXPIRE / the scripts: mostly small (expiring within a sequence),
  // some long, some invalid.
  std::string Ms() {
    const int64_t r = Uniform(1, 100);
    if (r <= 40) return std::to_string(Uniform(1, 12));
    if (r <= 65) return std::to_string(Uniform(13, 80));
    if (r <= 85) return std::to_string(Uniform(1000, 5000));
    return Pick(kBadAmounts);
  }
  std::string Seconds() {
    if (Chance(80)) return std::to_string(Uniform(1, 3));
    return Pick(kBadAmounts);
  }

  // One command of the sequence, drawn by weight (out of 141), and the keys it touches.
  Step CommandStep() {
    Step s;
    const int64_t r = Uniform(1, 141);
    if (r <= 79) {
      StringStep(r, &s);
    } else {
      ListScriptStep(r, &s);
    }
    StepKeys(&s);
    return s;
  }

  // Weights 1..79: the string commands.
  void StringStep(int64_t r, Step* sp) {
    Step& s = *sp;
    if (r <= 25) {
      SetStep(&s);
    } else if (r <= 30) {
      s.cmd = Command::Of("SETNX", Key(), Value());
      s.writer = true;
    } else if (r <= 40) {
      s.cmd = Command::Of("GET", Key());
    } else if (r <= 44) {
      s.cmd = Command::Of("GETSET", Key(), Value());
      s.writer = true;
    } else if (r <= 51) {
      s.cmd = Command::Of("DEL");
      const int64_t n = Uniform(1, 3);
      for (int64_t i = 0; i < n; ++i) s.cmd.argv.push_back(Key());
      s.writer = true;
    } else if (r <= 55) {
      ExpireStep(&s, "EXPIRE", Seconds());
    } else if (r <= 62) {
      ExpireStep(&s, "PEXPIRE", Ms());
    } else if (r <= 69) {
      s.cmd = Command::Of("PTTL", Key());
    } else if (r <= 73) {
      s.cmd = Command::Of("TTL", Key());
    } else if (r <= 79) {
      s.cmd = Command::Of("INCR", Key());
      s.writer = true;
    }
  }

  // Weights 80..141: EXISTS, the scripts, the lists, PUBLISH.
  void ListScriptStep(int64_t r, Step* sp) {
    Step& s = *sp;
    if (r <= 84) {
      s.cmd = Command::Of("EXISTS");
      const int64_t n = Uniform(1, 3);
      for (int64_t i = 0; i < n; ++i) s.cmd.argv.push_back(Key());
    } else if (r <= 91) {
      s.cmd = Command::Run(Script::kCompareAndDelete, 1, Key(), Value());
      s.writer = true;
    } else if (r <= 98) {
      s.cmd = Command::Run(Script::kCompareAndPexpire, 1, Key(), Value(), Ms());
      s.writer = true;
    } else if (r <= 105) {
      s.cmd = Command::Run(Script::kSetNxPxIncrFence, 2, Key(), Key(), Value(), Ms());
      s.writer = true;
    } else if (r <= 115) {
      s.cmd = Command::Of(Chance(50) ? "LPUSH" : "RPUSH", Key());
      const int64_t n = Uniform(1, 3);
      for (int64_t i = 0; i < n; ++i) s.cmd.argv.push_back(Value());
      s.writer = true;
    } else if (r <= 119) {
      s.cmd = Command::Of("LPOP", Key());
      if (Chance(40)) s.cmd.argv.push_back(Pick(kCounts));
      s.writer = true;
    } else if (r <= 121) {
      s.cmd = Command::Of("LLEN", Key());
    } else if (r <= 124) {
      s.cmd = Command::Of("BLPOP", Key());
      if (Chance(30)) s.cmd.argv.push_back(Key());
      s.cmd.argv.push_back(Chance(90) ? Pick(kBlockTimeouts) : Pick(kBadBlockTimeouts));
      s.writer = true;
    } else if (r <= 126) {
      s.cmd = Command::Run(Script::kNotifyOne, 1, Key());
      s.writer = true;
    } else if (r <= 128) {
      s.cmd = Command::Of("LTRIM", Key(), Pick(kIndexes), Pick(kIndexes));
      s.writer = true;
    } else if (r <= 130) {
      s.cmd = Command::Of("LRANGE", Key(), Pick(kIndexes), Pick(kIndexes));
    } else if (r <= 133) {
      s.cmd = Command::Of("LREM", Key(), Pick(kIndexes), Value());
      s.writer = true;
    } else if (r <= 135) {
      s.cmd = Command::Run(Script::kFifoAcquire, 2, Key(), Key(), Value(), Ms());
      s.writer = true;
    } else if (r <= 137) {
      s.cmd = Command::Run(Script::kFifoRelease, 2, Key(), Key(), Value(), Ms());
      s.writer = true;
    } else if (r <= 139) {
      s.cmd = Command::Run(Script::kFifoLeave, 2, Key(), Key(), Value());
      s.writer = true;
    } else {
      s.cmd = Command::Of("PUBLISH", "chan", Value());
    }
  }

  // The keys a step touches (and, for a script, whether it goes as EVAL).
  void StepKeys(Step* sp) {
    Step& s = *sp;
    if (s.cmd.script != Script::kNone) {
      s.eval = Chance(30);
      s.keys.assign(s.cmd.argv.begin(), s.cmd.argv.begin() + s.cmd.num_keys);
    } else if (s.cmd.argv[0] == "DEL" || s.cmd.argv[0] == "EXISTS") {
      s.keys.assign(s.cmd.argv.begin() + 1, s.cmd.argv.end());
    } else if (s.cmd.argv[0] == "BLPOP") {
      s.keys.assign(s.cmd.argv.begin() + 1, s.cmd.argv.end() - 1);
    } else if (s.cmd.argv[0] == "PUBLISH") {
      s.keys.clear();  // a channel, not a key
    } else {
      s.keys = {std::string(s.cmd.argv[1])};
    }
  }

  // SET key value [NX|XX] [GET] [PX ms|EX s], options in random order, sometimes conflicting
  // or malformed (syntax errors must match too).
  void SetStep(Step* s) {
    s->writer = true;
    s->cmd = Command::Of("SET", Key(), Value());
    std::vector<std::vector<std::string>> opts;
    const int64_t cond = Uniform(1, 100);
    if (cond <= 35) {
      opts.push_back({Word("NX")});
    } else if (cond <= 50) {
      opts.push_back({Word("XX")});
    } else if (cond <= 53) {
      opts.push_back({Word("NX")});
      opts.push_back({Word("XX")});
    }
    if (Chance(20)) opts.push_back({Word("GET")});
    const int64_t exp = Uniform(1, 100);
    if (exp <= 50) {
      opts.push_back({Word("PX"), Ms()});
    } else if (exp <= 70) {
      opts.push_back({Word("EX"), Seconds()});
    } else if (exp <= 73) {
      opts.push_back({Word("PX"), Ms()});
      opts.push_back({Word("EX"), Seconds()});
    } else if (exp <= 75) {
      opts.push_back({Word("PX"), Ms()});
      opts.push_back({Word("PX"), Ms()});  // repeating an option: the last one wins
    }
    for (size_t i = opts.size(); i > 1; --i) std::swap(opts[i - 1], opts[static_cast<size_t>(Uniform(0, static_cast<int64_t>(i) - 1))]);
    for (auto& o : opts)
      for (auto& w : o) s->cmd.argv.push_back(w);
    if (Chance(2)) s->cmd.argv.push_back(Word("PX"));  // an option without its value
  }

  void ExpireStep(Step* s, const char* name, std::string amount) {
    s->writer = true;
    s->cmd = Command::Of(name, Key(), std::move(amount));
    if (Chance(15)) s->cmd.argv.push_back(Word(Pick(kExpireOptions)));
    if (Chance(3)) s->cmd.argv.push_back(Word(Pick(kExpireOptions)));
    bool compares = false;
    for (size_t i = 3; i < s->cmd.argv.size(); ++i) {
      std::string o(s->cmd.argv[i]);
      for (char& c : o) c = static_cast<char>(c & ~0x20);
      compares = compares || o == "GT" || o == "LT";
    }
    const std::string_view a = s->cmd.argv[2];
    int64_t v;
    const auto [end, ec] = std::from_chars(a.data(), a.data() + a.size(), v);
    // An amount Redis refuses fails the command whatever the time, and one beyond 10^12 ms is
    // nowhere near a deadline of ours: nothing to guard (and no overflow below).
    if (compares && ec == std::errc() && end == a.data() + a.size() &&
        (std::string(name) == "PEXPIRE" || !__builtin_mul_overflow(v, 1000, &v)) && v >= -kFarMs && v <= kFarMs)
      s->compare_ms = v;
  }

  inline static const std::vector<std::string> kKeys = {"k0", "k1", "k2", "fence"};
  // Tokens to compare, integers to INCR (and the edges of INCR), non-integers.
  inline static const std::vector<std::string> kValues = {
      "tokA", "tokB", "tokA", "1", "41", "-3", "0", "007", "9223372036854775806", "9223372036854775807", "a b", ""};
  inline static const std::vector<std::string> kBadAmounts = {
      "0", "-1", "-250", "abc", "+5", "05", "1.5", "", "9223372036854775807", "-9223372036854775808",
      "9223372036854776"};
  inline static const std::vector<std::string> kExpireOptions = {"NX", "XX", "GT", "LT", "ZZ"};
  // BLPOP timeouts: short (a parked call costs the test its timeout), never one Redis reads as
  // 0 (for ever); and malformed ones, refused at once by both.
  inline static const std::vector<std::string> kBlockTimeouts = {"0.001", "0.002", "0.004", "0.0001", "1e-3", "0.003"};
  inline static const std::vector<std::string> kBadBlockTimeouts = {"abc", "-1", "", "inf", "1 ", "nan"};
  inline static const std::vector<std::string> kCounts = {"0", "1", "2", "5", "-1", "abc"};
  inline static const std::vector<std::string> kIndexes = {"0", "1", "-1", "-2", "2", "10", "-10", "x"};

  std::mt19937_64 rng_;
};

// ---------------------------------------------------------------------------------------------
// Running.

std::vector<std::string> RedisArgv(const Step& s) {
  if (s.cmd.script == Script::kNone) return s.cmd.argv.ToStrings();
  std::vector<std::string> argv = {s.eval ? "EVAL" : "EVALSHA",
                                   s.eval ? std::string(sim::GetScript(s.cmd.script).lua) : sim::ScriptSha1(s.cmd.script),
                                   std::to_string(s.cmd.num_keys)};
  argv.insert(argv.end(), s.cmd.argv.begin(), s.cmd.argv.end());
  return argv;
}

struct Window {  // where the server's deadline for a key lies (absolute ms); lo = the sim's
  int64_t lo, hi;
};

struct Stats {
  int64_t sequences = 0;
  int64_t commands = 0;
  int64_t inconclusive = 0;
  int64_t guard_waits = 0;
  int64_t guard_wait_ms = 0;
  int64_t slept_ms = 0;  // sleep steps
  int64_t expired_met = 0;   // commands that met a key whose deadline had passed
  int64_t error_replies = 0;
  int64_t max_pttl_diff = 0;  // |redis - sim| over PTTL replies
  int64_t max_command_ms = 0;  // longest t1 - t0
  int64_t blpop_parked = 0;    // BLPOPs the sim store would park (Redis waited out their timeout)
  int64_t blpop_popped = 0;    // BLPOPs that popped at once on both
  std::map<std::string, int64_t> by_name;
  std::vector<std::string> inconclusive_notes;
};

// Redis's TTL from a ms amount.
int64_t RoundTtl(int64_t ms) { return (ms + 500) / 1000; }

class Runner {
 public:
  Runner(redisContext* c, Stats* stats) : c_(c), stats_(stats) {}

  // Runs one sequence. Returns "" when it passed (or was inconclusive), else the failure text.
  std::string Run(uint64_t seed, const std::vector<Step>& steps) {
    std::string error;
    store_.Clear();
    windows_.clear();
    std::optional<Reply> flushed = RedisRun(c_, {"FLUSHALL"}, &error);
    if (!flushed || !flushed->is_ok()) return "seed " + std::to_string(seed) + ": FLUSHALL failed: " + (flushed ? ToString(*flushed) : error);

    std::string log;
    char buf[96];
    for (size_t i = 0; i < steps.size(); ++i) {
      const Step& s = steps[i];
      if (s.sleep) {
        SleepUntilMs(NowMs() + s.sleep_ms);
        stats_->slept_ms += s.sleep_ms;
        log += "  " + s.ToString() + "\n";
        continue;
      }
      const int64_t t0 = GuardWait(s, &log);
      std::vector<std::optional<sim::Entry>> before;
      for (const auto& k : s.keys) {
        before.push_back(store_.Snapshot(k));
        if (before.back() && before.back()->expire_at_ms != -1 && t0 > before.back()->expire_at_ms)
          ++stats_->expired_met;
      }
      sim::BlockRequest block;
      const Reply sim_reply = store_.Execute(s.cmd, t0, nullptr, &block);  // parked: the simulator's nil
      std::optional<Reply> redis_reply = RedisRun(c_, RedisArgv(s), &error);
      const int64_t t1 = NowMs();
      if (!redis_reply) return "seed " + std::to_string(seed) + ": " + error + "\n" + log;
      ++stats_->commands;
      ++stats_->by_name[s.cmd.Name()];
      stats_->error_replies += sim_reply.is_error();

      const std::string stalled = StalledKey(s, t0, t1);
      stats_->max_command_ms = std::max(stats_->max_command_ms, t1 - t0);

      std::snprintf(buf, sizeof buf, "  [%+" PRId64 "..%+" PRId64 " ms] ", t0 - start_ms_, t1 - start_ms_);
      std::string line = buf + s.ToString() + "  ->  sim " + ToString(sim_reply) + ", redis " + ToString(*redis_reply);
      std::string why;
      bool agree = Agree(s, sim_reply, *redis_reply, t0, t1, &why);
      agree = CheckBlpop(s, block, sim_reply, t1 - t0, agree, &why);
      if (!agree) {
        if (!stalled.empty()) {
          NoteInconclusive(seed, s, stalled, t1 - t0, sim_reply, *redis_reply);
          return "";
        }
        std::string out = "seed " + std::to_string(seed) + ": MISMATCH at step " + std::to_string(i + 1) + " of " +
                          std::to_string(steps.size()) + ": " + why + "\n" +
                          "replay (same commands, new timing): LOCKLAB_DIFF_SEED=" + std::to_string(seed) +
                          " LOCKLAB_DIFF_SEQUENCES=1 real_tests --gtest_filter='Differential.*'\n" +
                          "sequence as run ([t0..t1] in ms since it began):\n" + log + line + "   <== mismatch\n";
        for (size_t j = i + 1; j < steps.size(); ++j) out += "  (not run) " + steps[j].ToString() + "\n";
        return out;
      }
      log += line + "\n";
      UpdateWindows(s, before, t0, t1);
    }
    return "";
  }

  // Guard: waits while a touched key could reach its deadline during the command (bounded: each
  // wait ends past a window, and windows only come from earlier steps). The time to go at.
  int64_t GuardWait(const Step& s, std::string* log) {
    char buf[96];
    int64_t t0 = NowMs();
    for (;;) {
      int64_t until = -1;
      for (const auto& k : s.keys) {
        auto it = windows_.find(k);
        if (it == windows_.end()) continue;
        const Window& w = it->second;
        if (t0 + kGuardMs > w.lo && t0 <= w.hi) until = std::max(until, w.hi + 1);
        if (s.compare_ms && Overlap(t0, t0 + kGuardMs, *s.compare_ms, w))
          until = std::max(until, w.hi - *s.compare_ms + 1);
      }
      if (until < 0) return t0;
      ++stats_->guard_waits;
      stats_->guard_wait_ms += until - t0;
      std::snprintf(buf, sizeof buf, "  (guard: wait %" PRId64 " ms: a deadline is near)\n", until - t0);
      *log += buf;
      SleepUntilMs(until);
      t0 = NowMs();
    }
  }

  // A touched key whose expiry was ambiguous while the command ran (a stall past the guard), or "".
  std::string StalledKey(const Step& s, int64_t t0, int64_t t1) const {
    std::string stalled;
    for (const auto& k : s.keys) {
      auto it = windows_.find(k);
      if (it == windows_.end()) continue;
      if (!(t1 <= it->second.lo || t0 > it->second.hi)) stalled = k;
      if (s.compare_ms && Overlap(t0, t1, *s.compare_ms, it->second)) stalled = k;
    }
    return stalled;
  }

  // A BLPOP the sim store parks: Redis must have waited too (it answers nil once its clock is
  // past its start + timeout). `agree` as it stands after that check.
  bool CheckBlpop(const Step& s, const sim::BlockRequest& block, const Reply& sim_reply, int64_t took_ms, bool agree,
                  std::string* why) {
    if (block.blocked) {
      ++stats_->blpop_parked;
      if (agree && took_ms < block.timeout_ms) {
        *why = "the sim store parks this BLPOP for " + std::to_string(block.timeout_ms) +
               " ms, but redis answered after " + std::to_string(took_ms) + " ms";
        return false;
      }
    } else if (s.cmd.script == Script::kNone && s.cmd.argv[0] == "BLPOP" && sim_reply.type == Reply::Type::kArray) {
      ++stats_->blpop_popped;
    }
    return agree;
  }

  void NoteInconclusive(uint64_t seed, const Step& s, const std::string& stalled, int64_t took_ms,
                        const Reply& sim_reply, const Reply& redis_reply) {
    char buf[96];
    ++stats_->inconclusive;
    std::snprintf(buf, sizeof buf, " (command took %" PRId64 " ms)", took_ms);
    if (stats_->inconclusive_notes.size() < 5)
      stats_->inconclusive_notes.push_back("seed " + std::to_string(seed) + ": " + s.ToString() + ": key " + stalled +
                                           " near its deadline" + buf + ": sim " + ToString(sim_reply) + ", redis " +
                                           ToString(redis_reply));
  }

  // Updates the expiry windows of the keys the step touched.
  void UpdateWindows(const Step& s, const std::vector<std::optional<sim::Entry>>& before, int64_t t0, int64_t t1) {
    for (size_t j = 0; j < s.keys.size(); ++j) {
      const std::string& k = s.keys[j];
      const std::optional<sim::Entry> after = store_.Snapshot(k);
      if (!after || after->expire_at_ms == -1) {
        windows_.erase(k);
        continue;
      }
      if (!s.writer) continue;  // readers leave deadlines alone
      const Window fresh{after->expire_at_ms, after->expire_at_ms + (t1 - t0)};
      auto it = windows_.find(k);
      const bool same_deadline = before[j] && before[j]->expire_at_ms == after->expire_at_ms;
      if (same_deadline && it != windows_.end()) {
        // Kept (INCR) or set again to the same ms: the server's deadline is in either window.
        it->second = Window{std::min(it->second.lo, fresh.lo), std::max(it->second.hi, fresh.hi)};
      } else {
        windows_[k] = fresh;
      }
    }
  }

  void set_start_ms(int64_t ms) { start_ms_ = ms; }

 private:
  // Could now + amount, for a now in [from, to], compare with a deadline in w either way?
  static bool Overlap(int64_t from, int64_t to, int64_t amount, const Window& w) {
    return !(to + amount < w.lo || from + amount > w.hi);
  }

  bool Agree(const Step& s, const Reply& sim, const Reply& redis, int64_t t0, int64_t t1, std::string* why) {
    const std::string name = s.cmd.Name();
    const bool ttl = name == "TTL", pttl = name == "PTTL";
    if (!(ttl || pttl) || sim.type != Reply::Type::kInteger || redis.type != Reply::Type::kInteger ||
        sim.integer < 0 || redis.integer < 0) {
      if (sim == redis) return true;
      *why = "replies differ: sim " + ToString(sim) + ", redis " + ToString(redis);
      return false;
    }
    // Both say the key lives with a TTL: Redis's must fit its deadline window.
    auto it = windows_.find(s.keys[0]);
    if (it == windows_.end()) {
      *why = "the test has no deadline window for " + s.keys[0] + " (test bug)";
      return false;
    }
    const int64_t min_ms = std::max<int64_t>(0, it->second.lo - t1);
    const int64_t max_ms = std::max<int64_t>(0, it->second.hi - t0);
    const int64_t lo = pttl ? min_ms : RoundTtl(min_ms);
    const int64_t hi = pttl ? max_ms : RoundTtl(max_ms);
    if (pttl) stats_->max_pttl_diff = std::max(stats_->max_pttl_diff, std::abs(redis.integer - sim.integer));
    // The sim's value too: lo is its own deadline, so this catches a wrong reading of it.
    if (redis.integer >= lo && redis.integer <= hi && sim.integer >= lo && sim.integer <= hi) return true;
    *why = name + " out of tolerance: redis " + std::to_string(redis.integer) + ", sim " +
           std::to_string(sim.integer) + ", allowed [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    return false;
  }

  redisContext* c_;
  Stats* stats_;
  sim::Store store_;
  std::map<std::string, Window> windows_;
  int64_t start_ms_ = 0;
};

TEST(Differential, SimStoreMatchesRedisServer) {
  const int64_t sequences = EnvInt("LOCKLAB_DIFF_SEQUENCES", kDefaultSequences);
  const auto base_seed = static_cast<uint64_t>(EnvInt("LOCKLAB_DIFF_SEED", 1));
  ASSERT_GT(sequences, 0);

  std::string error;
  // Stopped by its destructor on every way out of this test (ASSERT returns, exceptions);
  // the server also dies with this thread (PR_SET_PDEATHSIG) if the test binary crashes.
  std::unique_ptr<RedisServers> servers = StartServers(RedisServerOptions{});
  ASSERT_TRUE(servers);
  timeval tv{2, 0};
  RedisPtr c(redisConnectWithTimeout("127.0.0.1", servers->port(0), tv));
  ASSERT_TRUE(c && c->err == 0) << (c ? c->errstr : "redisConnect failed");
  ASSERT_EQ(redisSetTimeout(c.get(), tv), REDIS_OK);
  // redis-server notices a parked BLPOP's timeout in its cron: 500 times a second, not 10.
  {
    std::optional<Reply> r = RedisRun(c.get(), {"CONFIG", "SET", "hz", "500"}, &error);
    ASSERT_TRUE(r && r->is_ok()) << (r ? ToString(*r) : error);
  }

  // Load the scripts: EVALSHA must then find them, under the SHA-1 the sim computes.
  for (const sim::ScriptDef& def : sim::Scripts()) {
    std::optional<Reply> r = RedisRun(c.get(), {"SCRIPT", "LOAD", def.lua}, &error);
    ASSERT_TRUE(r) << error;
    ASSERT_EQ(*r, Reply::Str(sim::ScriptSha1(def.id))) << ScriptName(def.id);
  }

  Stats stats;
  Runner runner(c.get(), &stats);
  int failures = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < sequences && failures < kMaxFailures; ++i) {
    const uint64_t seed = base_seed + static_cast<uint64_t>(i);
    const std::vector<Step> steps = Gen(seed).Sequence();
    runner.set_start_ms(NowMs());
    const std::string failure = runner.Run(seed, steps);
    ++stats.sequences;
    if (!failure.empty()) {
      ++failures;
      ADD_FAILURE() << failure;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::printf("[ differential ] %" PRId64 " sequences (seeds %" PRIu64 "..%" PRIu64 "), %" PRId64
              " commands in %.1f s; %" PRId64 " inconclusive; %" PRId64 " error replies; %" PRId64
              " commands met an expired key; %" PRId64 " ms of sleep steps; %" PRId64 " guard waits (%" PRId64
              " ms); max |PTTL redis - sim| %" PRId64 " ms; longest command %" PRId64 " ms; BLPOP: %" PRId64
              " parked (nil after their timeout), %" PRId64 " popped at once\n",
              stats.sequences, base_seed, base_seed + static_cast<uint64_t>(stats.sequences) - 1, stats.commands,
              seconds, stats.inconclusive, stats.error_replies, stats.expired_met, stats.slept_ms, stats.guard_waits,
              stats.guard_wait_ms, stats.max_pttl_diff, stats.max_command_ms, stats.blpop_parked, stats.blpop_popped);
  std::string names;
  for (const auto& [name, n] : stats.by_name) names += " " + name + "=" + std::to_string(n);
  std::printf("[ differential ] by command:%s\n", names.c_str());
  for (const auto& note : stats.inconclusive_notes) std::printf("[ differential ] inconclusive: %s\n", note.c_str());
  RecordProperty("sequences", std::to_string(stats.sequences));
  RecordProperty("commands", std::to_string(stats.commands));
  RecordProperty("inconclusive", std::to_string(stats.inconclusive));

  // Not vacuous: every command and script ran, keys expired under the commands, errors matched,
  // and stalls excused at most a few sequences. (Not checked for a replay of a few sequences.)
  if (failures == 0 && stats.sequences >= 500) {
    for (const char* name : {"SET", "SETNX", "GET", "GETSET", "DEL", "EXPIRE", "PEXPIRE", "PTTL", "TTL", "INCR",
                             "EXISTS", "compare_and_delete", "compare_and_pexpire", "set_nx_px_incr_fence", "LPUSH",
                             "RPUSH", "LPOP", "LLEN", "LTRIM", "LRANGE", "BLPOP", "notify_one", "PUBLISH", "LREM",
                             "fifo_acquire", "fifo_release", "fifo_leave"})
      EXPECT_GT(stats.by_name[name], 0) << name << " never ran";
    EXPECT_GT(stats.blpop_parked, 0);
    EXPECT_GT(stats.blpop_popped, 0);
    EXPECT_GT(stats.expired_met, 0);
    EXPECT_GT(stats.error_replies, 0);
  }
  EXPECT_LE(stats.inconclusive, stats.sequences / 50 + 5) << "too many sequences were inconclusive (stalls)";
}

}  // namespace
}  // namespace locklab
