// The simulated node's keyspace and scripts. Expected replies and error texts are what
// redis-server 7.0.15 answered to the same commands.
#include "sim/store.h"

#include <gtest/gtest.h>

#include <cctype>
#include <ostream>
#include <stdexcept>
#include <utility>

#include "sim/scripts.h"

namespace locklab {
// Readable failures: gtest prints Reply through this.
void PrintTo(const Reply& r, std::ostream* os) { *os << ToString(r); }
}  // namespace locklab

namespace locklab::sim {
namespace {

constexpr int64_t kT = 1'700'000'000'000;  // the node's wall clock, ms

Reply Ok() { return Reply::Status("OK"); }
Reply Err(std::string s) { return Reply::Error(std::move(s)); }
const char kNotInteger[] = "ERR value is not an integer or out of range";
const char kSyntax[] = "ERR syntax error";

class StoreTest : public ::testing::Test {
 protected:
  Reply Run(std::vector<std::string> words, int64_t now_ms = kT) {
    return store_.Execute(Command::Plain(std::move(words)), now_ms, &touched_);
  }
  Reply RunScript(Script s, std::vector<std::string> keys, std::vector<std::string> args, int64_t now_ms = kT) {
    return store_.Execute(Command::Call(s, std::move(keys), std::move(args)), now_ms, &touched_);
  }
  std::vector<std::string> TakeTouched() { return std::exchange(touched_, {}); }

  Store store_;
  std::vector<std::string> touched_;
};

using Keys = std::vector<std::string>;

TEST_F(StoreTest, SetGetAndCaseInsensitiveNames) {
  EXPECT_EQ(Run({"SET", "k", "v"}), Ok());
  EXPECT_EQ(Run({"get", "k"}), Reply::Str("v"));
  EXPECT_EQ(Run({"sEt", "k", "w"}), Ok());
  EXPECT_EQ(Run({"GeT", "k"}), Reply::Str("w"));
  EXPECT_EQ(Run({"GET", "missing"}), Reply::Nil());
  EXPECT_EQ(Run({"GET", "K"}), Reply::Nil());  // keys are case-sensitive
}

TEST_F(StoreTest, SetNxOnlyWhenAbsent) {
  EXPECT_EQ(Run({"SET", "k", "v", "NX"}), Ok());
  EXPECT_EQ(Run({"SET", "k", "w", "nx"}), Reply::Nil());
  EXPECT_EQ(Run({"GET", "k"}), Reply::Str("v"));
  EXPECT_EQ(Run({"SET", "k", "w", "NX", "NX"}), Reply::Nil());  // repeating an option is allowed
}

TEST_F(StoreTest, SetXxOnlyWhenPresent) {
  EXPECT_EQ(Run({"SET", "k", "v", "XX"}), Reply::Nil());
  EXPECT_EQ(Run({"GET", "k"}), Reply::Nil());
  EXPECT_EQ(Run({"SET", "k", "v"}), Ok());
  EXPECT_EQ(Run({"SET", "k", "w", "XX"}), Ok());
  EXPECT_EQ(Run({"GET", "k"}), Reply::Str("w"));
}

TEST_F(StoreTest, SetSyntaxErrors) {
  EXPECT_EQ(Run({"SET", "k", "v", "NX", "XX"}), Err(kSyntax));
  EXPECT_EQ(Run({"SET", "k", "v", "xx", "nx"}), Err(kSyntax));
  EXPECT_EQ(Run({"SET", "k", "v", "EX", "10", "PX", "10"}), Err(kSyntax));
  EXPECT_EQ(Run({"SET", "k", "v", "PX", "abc", "EX", "10"}), Err(kSyntax));  // syntax first
  EXPECT_EQ(Run({"SET", "k", "v", "EX"}), Err(kSyntax));
  EXPECT_EQ(Run({"SET", "k", "v", "foo"}), Err(kSyntax));
  EXPECT_EQ(Run({"SET", "k", "v", "KEEPTTL", "EX", "10"}), Err(kSyntax));
  EXPECT_EQ(Run({"SET", "k", "v", "EX", "10", "KEEPTTL"}), Err(kSyntax));
  EXPECT_EQ(Run({"EXISTS", "k"}), Reply::Int(0));
  EXPECT_TRUE(TakeTouched().empty());
}

TEST_F(StoreTest, SetPxExpiresByTheNodeClock) {
  EXPECT_EQ(Run({"SET", "k", "v", "PX", "100"}, kT), Ok());
  EXPECT_EQ(Run({"PTTL", "k"}, kT), Reply::Int(100));
  EXPECT_EQ(Run({"GET", "k"}, kT + 99), Reply::Str("v"));
  // Redis keeps a key through its deadline millisecond (expired iff now > when).
  EXPECT_EQ(Run({"GET", "k"}, kT + 100), Reply::Str("v"));
  EXPECT_EQ(Run({"PTTL", "k"}, kT + 100), Reply::Int(0));
  EXPECT_EQ(Run({"GET", "k"}, kT + 101), Reply::Nil());
  EXPECT_EQ(Run({"PTTL", "k"}, kT + 101), Reply::Int(-2));
  EXPECT_EQ(store_.size(), 0u);  // collected on access
}

TEST_F(StoreTest, ClockJumpDropsKeyEarly) {
  EXPECT_EQ(Run({"SET", "k", "v", "EX", "30"}, kT), Ok());
  EXPECT_EQ(Run({"TTL", "k"}, kT), Reply::Int(30));
  EXPECT_EQ(Run({"GET", "k"}, kT + 60'000), Reply::Nil());  // the node's clock jumped a minute
  // Gone for good: the clock stepping back does not bring it back.
  EXPECT_EQ(Run({"GET", "k"}, kT), Reply::Nil());
  EXPECT_EQ(Run({"SET", "k", "w", "NX", "PX", "10"}, kT + 60'000), Ok());
}

TEST_F(StoreTest, SetExAndRepeatedExpiryLastWins) {
  EXPECT_EQ(Run({"SET", "k", "v", "EX", "10", "EX", "20"}), Ok());
  EXPECT_EQ(Run({"PTTL", "k"}), Reply::Int(20'000));
  EXPECT_EQ(Run({"SET", "k", "v", "Px", "1500"}), Ok());
  EXPECT_EQ(Run({"PTTL", "k"}), Reply::Int(1500));
}

TEST_F(StoreTest, SetExpiryAbsolute) {
  EXPECT_EQ(Run({"SET", "k", "v", "PXAT", std::to_string(kT + 500)}), Ok());
  EXPECT_EQ(Run({"PTTL", "k"}), Reply::Int(500));
  EXPECT_EQ(Run({"SET", "k", "v", "EXAT", "1"}), Ok());  // accepted, born expired
  EXPECT_EQ(Run({"EXISTS", "k"}), Reply::Int(0));
  EXPECT_EQ(Run({"SET", "k", "v", "EXAT", "9223372036854775"}), Ok());  // no "now" added: fits
  EXPECT_EQ(Run({"SET", "k", "v", "PXAT", "0"}), Err("ERR invalid expire time in 'set' command"));
}

TEST_F(StoreTest, SetInvalidExpiry) {
  const Reply invalid = Err("ERR invalid expire time in 'set' command");
  EXPECT_EQ(Run({"SET", "k", "v", "EX", "0"}), invalid);
  EXPECT_EQ(Run({"SET", "k", "v", "EX", "-1"}), invalid);
  EXPECT_EQ(Run({"SET", "k", "v", "PX", "0"}), invalid);
  EXPECT_EQ(Run({"SET", "k", "v", "EX", "9223372036854775"}), invalid);     // ms + now overflows
  EXPECT_EQ(Run({"SET", "k", "v", "EX", "9223372036854776"}), invalid);     // s -> ms overflows
  EXPECT_EQ(Run({"SET", "k", "v", "PX", "9223372036854775807"}), invalid);  // ms + now overflows
  EXPECT_EQ(Run({"SET", "k", "v", "PX", "abc"}), Err(kNotInteger));
  EXPECT_EQ(Run({"SET", "k", "v", "EX", "1.5"}), Err(kNotInteger));
  EXPECT_EQ(Run({"SET", "k", "v", "PX", "-0"}), Err(kNotInteger));
  EXPECT_EQ(Run({"SET", "k", "v", "EX", "010"}), Err(kNotInteger));
  EXPECT_EQ(Run({"SET", "k", "v", "EX", " 10"}), Err(kNotInteger));
  EXPECT_EQ(Run({"EXISTS", "k"}), Reply::Int(0));
  // The expiry is judged before NX looks at the key.
  EXPECT_EQ(Run({"SET", "k", "v"}), Ok());
  EXPECT_EQ(Run({"SET", "k", "v", "NX", "EX", "0"}), invalid);
}

TEST_F(StoreTest, SetGetReturnsOldValue) {
  EXPECT_EQ(Run({"SET", "k", "v", "GET"}), Reply::Nil());
  EXPECT_EQ(Run({"GET", "k"}), Reply::Str("v"));
  EXPECT_EQ(Run({"SET", "k", "w", "get"}), Reply::Str("v"));
  EXPECT_EQ(Run({"SET", "k", "x", "NX", "GET"}), Reply::Str("w"));  // refused, still shows the value
  EXPECT_EQ(Run({"GET", "k"}), Reply::Str("w"));
  EXPECT_EQ(Run({"SET", "z", "v", "XX", "GET"}), Reply::Nil());
  EXPECT_EQ(Run({"EXISTS", "z"}), Reply::Int(0));
  EXPECT_EQ(Run({"SET", "n", "v", "NX", "GET"}), Reply::Nil());  // allowed together since 7.0
  EXPECT_EQ(Run({"GET", "n"}), Reply::Str("v"));
}

TEST_F(StoreTest, SetDropsTtlUnlessKeepttl) {
  EXPECT_EQ(Run({"SET", "k", "v", "PX", "1000"}), Ok());
  EXPECT_EQ(Run({"SET", "k", "w"}), Ok());
  EXPECT_EQ(Run({"PTTL", "k"}), Reply::Int(-1));
  EXPECT_EQ(Run({"SET", "k", "v", "PX", "1000"}), Ok());
  EXPECT_EQ(Run({"SET", "k", "w", "KEEPTTL"}), Ok());
  EXPECT_EQ(Run({"PTTL", "k"}), Reply::Int(1000));
  EXPECT_EQ(Run({"GET", "k"}), Reply::Str("w"));
}

TEST_F(StoreTest, Setnx) {
  EXPECT_EQ(Run({"SETNX", "k", "v"}), Reply::Int(1));
  EXPECT_EQ(Run({"SETNX", "k", "w"}), Reply::Int(0));
  EXPECT_EQ(Run({"GET", "k"}), Reply::Str("v"));
  EXPECT_EQ(Run({"PTTL", "k"}), Reply::Int(-1));
}

TEST_F(StoreTest, Getset) {
  EXPECT_EQ(Run({"GETSET", "k", "v"}), Reply::Nil());
  EXPECT_EQ(Run({"GET", "k"}), Reply::Str("v"));
  EXPECT_EQ(Run({"PEXPIRE", "k", "5000"}), Reply::Int(1));
  EXPECT_EQ(Run({"GETSET", "k", "w"}), Reply::Str("v"));
  EXPECT_EQ(Run({"GET", "k"}), Reply::Str("w"));
  EXPECT_EQ(Run({"PTTL", "k"}), Reply::Int(-1));  // GETSET drops the TTL
}

TEST_F(StoreTest, DelCountsLiveKeysOnce) {
  Run({"SET", "a", "1"});
  Run({"SET", "b", "2"});
  Run({"SET", "c", "3", "PX", "10"});
  EXPECT_EQ(Run({"DEL", "a", "a", "missing", "b", "c"}, kT + 11), Reply::Int(2));  // c had expired
  EXPECT_EQ(Run({"DEL", "a"}), Reply::Int(0));
  EXPECT_EQ(store_.size(), 0u);
}

TEST_F(StoreTest, DelManyKeys) {  // more words than Execute's inline array
  std::vector<std::string> words = {"DEL"};
  for (int i = 0; i < 40; ++i) {
    words.push_back(std::to_string(i) + "k");  // ("k" + ... trips a GCC 12 -Wrestrict false alarm)
    if (i % 2 == 0) Run({"SET", words.back(), "v"});
  }
  EXPECT_EQ(Run(words), Reply::Int(20));
}

TEST_F(StoreTest, ExistsCountsRepeats) {
  Run({"SET", "a", "1"});
  EXPECT_EQ(Run({"EXISTS", "a", "a", "b"}), Reply::Int(2));
  EXPECT_EQ(Run({"EXISTS", "b"}), Reply::Int(0));
}

TEST_F(StoreTest, Incr) {
  EXPECT_EQ(Run({"INCR", "c"}), Reply::Int(1));
  EXPECT_EQ(Run({"INCR", "c"}), Reply::Int(2));
  EXPECT_EQ(Run({"GET", "c"}), Reply::Str("2"));
  EXPECT_EQ(Run({"SET", "c", "-1"}), Ok());
  EXPECT_EQ(Run({"INCR", "c"}), Reply::Int(0));
  EXPECT_EQ(Run({"SET", "c", "-9223372036854775808"}), Ok());
  EXPECT_EQ(Run({"INCR", "c"}), Reply::Int(-9223372036854775807));
  EXPECT_EQ(Run({"SET", "c", "9223372036854775807"}), Ok());
  EXPECT_EQ(Run({"INCR", "c"}), Err("ERR increment or decrement would overflow"));
  for (const char* bad : {"abc", " 1", "01", "+1", "-0", "", "1.0", "9223372036854775808",
                          "123456789012345678901", "18446744073709551615"}) {
    EXPECT_EQ(Run({"SET", "c", bad}), Ok());
    EXPECT_EQ(Run({"INCR", "c"}), Err(kNotInteger)) << "value '" << bad << "'";
    EXPECT_EQ(Run({"GET", "c"}), Reply::Str(bad));
  }
}

TEST_F(StoreTest, IncrKeepsTtl) {
  EXPECT_EQ(Run({"SET", "c", "5", "PX", "1000"}), Ok());
  EXPECT_EQ(Run({"INCR", "c"}), Reply::Int(6));
  EXPECT_EQ(Run({"PTTL", "c"}), Reply::Int(1000));
  EXPECT_EQ(Run({"INCR", "c"}, kT + 1001), Reply::Int(1));  // expired: starts over
}

TEST_F(StoreTest, ExpireAndPexpire) {
  EXPECT_EQ(Run({"EXPIRE", "k", "10"}), Reply::Int(0));
  Run({"SET", "k", "v"});
  EXPECT_EQ(Run({"EXPIRE", "k", "10"}), Reply::Int(1));
  EXPECT_EQ(Run({"PTTL", "k"}), Reply::Int(10'000));
  EXPECT_EQ(Run({"pexpire", "k", "250"}), Reply::Int(1));
  EXPECT_EQ(Run({"PTTL", "k"}), Reply::Int(250));
  EXPECT_EQ(Run({"GET", "k"}, kT + 251), Reply::Nil());
}

TEST_F(StoreTest, ExpireInThePastDeletes) {
  for (const char* amount : {"0", "-1", "-9223372036854775"}) {
    Run({"SET", "k", "v"});
    EXPECT_EQ(Run({"EXPIRE", "k", amount}), Reply::Int(1)) << amount;
    EXPECT_EQ(store_.size(), 0u) << amount;  // deleted at once, not just marked
  }
  Run({"SET", "k", "v"});
  EXPECT_EQ(Run({"PEXPIRE", "k", "-9223372036854775808"}), Reply::Int(1));
  EXPECT_EQ(Run({"EXISTS", "k"}), Reply::Int(0));
}

TEST_F(StoreTest, ExpireFlagsAndErrors) {
  Run({"SET", "k", "v"});
  EXPECT_EQ(Run({"EXPIRE", "k", "10", "XX"}), Reply::Int(0));
  EXPECT_EQ(Run({"EXPIRE", "k", "10", "GT"}), Reply::Int(0));  // no TTL counts as infinite
  EXPECT_EQ(Run({"EXPIRE", "k", "10", "nx"}), Reply::Int(1));
  EXPECT_EQ(Run({"EXPIRE", "k", "20", "NX"}), Reply::Int(0));
  EXPECT_EQ(Run({"EXPIRE", "k", "5", "GT"}), Reply::Int(0));
  EXPECT_EQ(Run({"EXPIRE", "k", "30", "GT"}), Reply::Int(1));
  EXPECT_EQ(Run({"EXPIRE", "k", "40", "LT"}), Reply::Int(0));
  EXPECT_EQ(Run({"EXPIRE", "k", "3", "lt", "XX"}), Reply::Int(1));
  EXPECT_EQ(Run({"TTL", "k"}), Reply::Int(3));

  EXPECT_EQ(Run({"EXPIRE", "k", "10", "foo"}), Err("ERR Unsupported option foo"));
  EXPECT_EQ(Run({"EXPIRE", "k", "abc", "foo"}), Err("ERR Unsupported option foo"));  // options first
  EXPECT_EQ(Run({"EXPIRE", "k", "10", "NX", "XX"}),
            Err("ERR NX and XX, GT or LT options at the same time are not compatible"));
  EXPECT_EQ(Run({"EXPIRE", "k", "10", "GT", "LT"}),
            Err("ERR GT and LT options at the same time are not compatible"));
  EXPECT_EQ(Run({"EXPIRE", "k", "abc"}), Err(kNotInteger));
  EXPECT_EQ(Run({"EXPIRE", "k", "9223372036854775"}), Err("ERR invalid expire time in 'expire' command"));
  EXPECT_EQ(Run({"EXPIRE", "k", "-9223372036854775808"}), Err("ERR invalid expire time in 'expire' command"));
  EXPECT_EQ(Run({"PEXPIRE", "k", "9223372036854775807"}), Err("ERR invalid expire time in 'pexpire' command"));
  EXPECT_EQ(Run({"EXPIRE", "missing", "10", "NX"}), Reply::Int(0));
  EXPECT_EQ(Run({"TTL", "k"}), Reply::Int(3));  // none of the errors touched it
}

TEST_F(StoreTest, PttlAndTtl) {
  EXPECT_EQ(Run({"PTTL", "k"}), Reply::Int(-2));
  EXPECT_EQ(Run({"TTL", "k"}), Reply::Int(-2));
  Run({"SET", "k", "v"});
  EXPECT_EQ(Run({"PTTL", "k"}), Reply::Int(-1));
  EXPECT_EQ(Run({"TTL", "k"}), Reply::Int(-1));
  Run({"SET", "k", "v", "PX", "10000"});
  EXPECT_EQ(Run({"PTTL", "k"}, kT + 2500), Reply::Int(7500));
  // TTL rounds to the nearest second: (ttl_ms + 500) / 1000.
  EXPECT_EQ(Run({"TTL", "k"}, kT + 10'000 - 1499), Reply::Int(1));
  EXPECT_EQ(Run({"TTL", "k"}, kT + 10'000 - 1500), Reply::Int(2));
  EXPECT_EQ(Run({"TTL", "k"}, kT + 10'000 - 500), Reply::Int(1));
  EXPECT_EQ(Run({"TTL", "k"}, kT + 10'000 - 499), Reply::Int(0));
  Run({"SET", "k", "v", "PXAT", "9223372036854775807"});
  EXPECT_EQ(Run({"TTL", "k"}), Reply::Int((9223372036854775807 - kT + 500) / 1000));
}

TEST_F(StoreTest, PingAndFlushall) {
  EXPECT_EQ(Run({"PING"}), Reply::Status("PONG"));
  EXPECT_EQ(Run({"ping", "hi"}), Reply::Str("hi"));
  EXPECT_EQ(Run({"PING", "a", "b"}), Err("ERR wrong number of arguments for 'ping' command"));
  Run({"SET", "b", "1"});
  Run({"SET", "a", "1"});
  TakeTouched();
  EXPECT_EQ(Run({"FLUSHALL"}), Ok());
  EXPECT_EQ(TakeTouched(), (Keys{"a", "b"}));
  EXPECT_EQ(store_.size(), 0u);
  EXPECT_EQ(Run({"flushall", "ASYNC"}), Ok());
  EXPECT_EQ(Run({"FLUSHALL", "sync"}), Ok());
  EXPECT_EQ(Run({"FLUSHALL", "foo"}), Err(kSyntax));
  EXPECT_EQ(Run({"FLUSHALL", "sync", "async"}), Err(kSyntax));
}

TEST_F(StoreTest, WrongArity) {
  const std::vector<std::vector<std::string>> cases = {
      {"SET", "k"},    {"setnx", "k"},      {"GET"},          {"GET", "k", "x"}, {"GETSET", "k"},
      {"DEL"},         {"EXISTS"},          {"EXPIRE", "k"},  {"PEXPIRE", "k"},  {"PTTL"},
      {"TTL", "a", "b"}, {"INCR"},          {"INCR", "a", "b"},
  };
  for (const auto& words : cases) {
    std::string lower = words[0];
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(Run(words), Err("ERR wrong number of arguments for '" + lower + "' command")) << words[0];
  }
}

TEST_F(StoreTest, UnknownCommand) {
  EXPECT_EQ(Run({"foo"}), Err("ERR unknown command 'foo', with args beginning with: "));
  EXPECT_EQ(Run({"FOO", "a", "b"}), Err("ERR unknown command 'FOO', with args beginning with: 'a' 'b' "));
  EXPECT_EQ(Run({"foo", "a b", ""}), Err("ERR unknown command 'foo', with args beginning with: 'a b' '' "));
  EXPECT_EQ(Run({"foo", "x\r\ny"}), Err("ERR unknown command 'foo', with args beginning with: 'x  y' "));
  EXPECT_EQ(Run({"EVAL", "return 1", "0"}),
            Err("ERR unknown command 'EVAL', with args beginning with: 'return 1' '0' "));
  // At most 128 bytes of the name and of the arguments.
  const std::string a200(200, 'a');
  EXPECT_EQ(Run({a200}), Err("ERR unknown command '" + a200.substr(0, 128) + "', with args beginning with: "));
  EXPECT_EQ(Run({"foo", "a", a200, "c"}),
            Err("ERR unknown command 'foo', with args beginning with: 'a' '" + std::string(124, 'a') + "' "));
  EXPECT_TRUE(Run({}).is_error());
}

TEST_F(StoreTest, TouchedKeysAreTheWrittenOnes) {
  Run({"SET", "a", "1"});
  Run({"GET", "a"});
  Run({"SET", "a", "2", "NX"});                // refused
  Run({"SET", "a", "2", "EX", "0"});           // error
  Run({"SETNX", "b", "1"});
  Run({"SETNX", "b", "1"});                    // refused
  Run({"GETSET", "c", "1"});
  Run({"INCR", "d"});
  Run({"SET", "e", "x"});
  Run({"INCR", "e"});                          // error
  Run({"PEXPIRE", "a", "100"});
  Run({"PEXPIRE", "missing", "100"});
  Run({"EXISTS", "a", "b"});
  Run({"PTTL", "a"});
  Run({"DEL", "b", "missing", "c"});
  EXPECT_EQ(TakeTouched(), (Keys{"a", "b", "c", "d", "e", "a", "b", "c"}));
}

TEST_F(StoreTest, FindEraseHonourExpiry) {
  store_.Put("k", Entry{"v", kT + 10});
  ASSERT_NE(store_.Find("k", kT + 10), nullptr);
  EXPECT_EQ(store_.Find("k", kT + 10)->value, "v");
  EXPECT_FALSE(store_.Erase("k", kT + 11));  // expired: removed, but not a live key
  EXPECT_EQ(store_.size(), 0u);
  store_.Put("k", Entry{"v", -1});
  EXPECT_TRUE(store_.Erase("k", kT));
  EXPECT_FALSE(store_.Erase("k", kT));
  EXPECT_EQ(store_.Find("k", kT), nullptr);
}

TEST_F(StoreTest, SnapshotApplyRoundTrip) {
  EXPECT_EQ(store_.Snapshot("k"), std::nullopt);
  Run({"SET", "k", "tok", "PX", "3000"});
  Run({"SET", "p", "forever"});
  Store replica;
  for (const std::string& key : TakeTouched()) replica.Apply(key, store_.Snapshot(key));
  const std::optional<Entry> snap = replica.Snapshot("k");
  ASSERT_TRUE(snap.has_value());
  EXPECT_EQ(snap->value, "tok");
  EXPECT_EQ(snap->expire_at_ms, kT + 3000);
  EXPECT_EQ(replica.Execute(Command::Plain({"PTTL", "k"}), kT + 1000), Reply::Int(2000));
  EXPECT_EQ(replica.Execute(Command::Plain({"PTTL", "p"}), kT), Reply::Int(-1));
  // The replica judges expiry by its own clock, like any node.
  EXPECT_EQ(replica.Execute(Command::Plain({"GET", "k"}), kT + 3001), Reply::Nil());

  Run({"DEL", "p"});
  for (const std::string& key : TakeTouched()) replica.Apply(key, store_.Snapshot(key));
  EXPECT_EQ(replica.Snapshot("p"), std::nullopt);
  // Apply overwrites whatever the replica had.
  replica.Apply("q", Entry{"new", -1});
  replica.Apply("q", Entry{"newer", kT + 5});
  EXPECT_EQ(replica.Snapshot("q")->value, "newer");
  EXPECT_EQ(replica.Snapshot("q")->expire_at_ms, kT + 5);
}

TEST_F(StoreTest, CompareAndDelete) {
  EXPECT_EQ(RunScript(Script::kCompareAndDelete, {"lk"}, {"tok"}), Reply::Int(0));  // missing
  Run({"SET", "lk", "tok", "PX", "1000"});
  TakeTouched();
  EXPECT_EQ(RunScript(Script::kCompareAndDelete, {"lk"}, {"other"}), Reply::Int(0));
  EXPECT_TRUE(TakeTouched().empty());
  EXPECT_EQ(Run({"GET", "lk"}), Reply::Str("tok"));
  EXPECT_EQ(RunScript(Script::kCompareAndDelete, {"lk"}, {"tok"}, kT + 1001), Reply::Int(0));  // expired
  Run({"SET", "lk", "tok", "PX", "1000"});
  TakeTouched();
  EXPECT_EQ(RunScript(Script::kCompareAndDelete, {"lk"}, {"tok"}), Reply::Int(1));
  EXPECT_EQ(TakeTouched(), Keys{"lk"});
  EXPECT_EQ(Run({"EXISTS", "lk"}), Reply::Int(0));
}

TEST_F(StoreTest, CompareAndPexpire) {
  EXPECT_EQ(RunScript(Script::kCompareAndPexpire, {"lk"}, {"tok", "5000"}), Reply::Int(0));
  Run({"SET", "lk", "tok", "PX", "1000"});
  TakeTouched();
  EXPECT_EQ(RunScript(Script::kCompareAndPexpire, {"lk"}, {"other", "5000"}), Reply::Int(0));
  EXPECT_EQ(Run({"PTTL", "lk"}), Reply::Int(1000));
  EXPECT_TRUE(TakeTouched().empty());
  EXPECT_EQ(RunScript(Script::kCompareAndPexpire, {"lk"}, {"tok", "5000"}, kT + 500), Reply::Int(1));
  EXPECT_EQ(TakeTouched(), Keys{"lk"});
  EXPECT_EQ(Run({"PTTL", "lk"}, kT + 500), Reply::Int(5000));
  // A bad ttl fails inside the script, which Redis reports with the script's sha and line.
  EXPECT_EQ(RunScript(Script::kCompareAndPexpire, {"lk"}, {"tok", "abc"}),
            Err(std::string(kNotInteger) + " script: " + ScriptSha1(Script::kCompareAndPexpire) +
                ", on @user_script:1."));
  EXPECT_EQ(RunScript(Script::kCompareAndPexpire, {"lk"}, {"other", "abc"}), Reply::Int(0));  // GET first
  EXPECT_EQ(RunScript(Script::kCompareAndPexpire, {"lk"}, {"tok", "0"}), Reply::Int(1));  // deletes
  EXPECT_EQ(Run({"EXISTS", "lk"}), Reply::Int(0));
}

TEST_F(StoreTest, SetNxPxIncrFence) {
  EXPECT_EQ(RunScript(Script::kSetNxPxIncrFence, {"lk", "fk"}, {"tok", "5000"}), Reply::Int(1));
  EXPECT_EQ(TakeTouched(), (Keys{"lk", "fk"}));
  EXPECT_EQ(Run({"GET", "lk"}), Reply::Str("tok"));
  EXPECT_EQ(Run({"PTTL", "lk"}), Reply::Int(5000));
  EXPECT_EQ(Run({"PTTL", "fk"}), Reply::Int(-1));
  // Held: nil, and the fence does not move.
  EXPECT_EQ(RunScript(Script::kSetNxPxIncrFence, {"lk", "fk"}, {"tok2", "5000"}), Reply::Nil());
  EXPECT_TRUE(TakeTouched().empty());
  EXPECT_EQ(Run({"GET", "fk"}), Reply::Str("1"));
  // Expired: the next holder gets the next fence.
  EXPECT_EQ(RunScript(Script::kSetNxPxIncrFence, {"lk", "fk"}, {"tok2", "5000"}, kT + 5001), Reply::Int(2));
  EXPECT_EQ(Run({"GET", "lk"}, kT + 5001), Reply::Str("tok2"));
}

TEST_F(StoreTest, SetNxPxIncrFenceErrors) {
  const std::string where = " script: " + ScriptSha1(Script::kSetNxPxIncrFence) + ", on @user_script:1.";
  EXPECT_EQ(RunScript(Script::kSetNxPxIncrFence, {"lk", "fk"}, {"tok", "0"}),
            Err("ERR invalid expire time in 'set' command" + where));
  EXPECT_EQ(RunScript(Script::kSetNxPxIncrFence, {"lk", "fk"}, {"tok", "abc"}), Err(kNotInteger + where));
  EXPECT_EQ(store_.size(), 0u);
  // A garbled fence key fails the INCR after the SET went through: no rollback, as in Redis.
  Run({"SET", "fk", "x"});
  EXPECT_EQ(RunScript(Script::kSetNxPxIncrFence, {"lk", "fk"}, {"tok", "100"}), Err(kNotInteger + where));
  EXPECT_EQ(Run({"GET", "lk"}), Reply::Str("tok"));
}

TEST_F(StoreTest, ScriptCallShapeIsChecked) {
  Command c = Command::Call(Script::kCompareAndDelete, {"lk"}, {});
  EXPECT_EQ(store_.Execute(c, kT), Err("ERR wrong number of keys or args for script 'compare_and_delete'"));
  c.num_keys = 2;
  EXPECT_EQ(store_.Execute(c, kT), Err("ERR Number of keys can't be greater than number of args"));
  c = Command::Call(Script::kSetNxPxIncrFence, {"lk"}, {"fk", "tok", "100"});  // keys misdeclared
  EXPECT_TRUE(store_.Execute(c, kT).is_error());
}

// --- Lists. Expected replies: redis-server 7.0.15 (redis-cli) on the same commands. ---

const char kWrongType[] = "WRONGTYPE Operation against a key holding the wrong kind of value";

Reply Arr(std::vector<std::string> items) {
  Reply r = Reply::Array();
  for (auto& i : items) r.elements.push_back(Reply::Str(std::move(i)));
  return r;
}

TEST_F(StoreTest, PushPopLengthRange) {
  EXPECT_EQ(Run({"RPUSH", "l", "a", "b"}), Reply::Int(2));
  EXPECT_EQ(Run({"lpush", "l", "x", "y"}), Reply::Int(4));  // each at the head in turn: y x a b
  EXPECT_EQ(Run({"LRANGE", "l", "0", "-1"}), Arr({"y", "x", "a", "b"}));
  EXPECT_EQ(Run({"LRANGE", "l", "-2", "100"}), Arr({"a", "b"}));
  EXPECT_EQ(Run({"LRANGE", "l", "3", "1"}), Arr({}));
  EXPECT_EQ(Run({"LRANGE", "l", "-100", "0"}), Arr({"y"}));
  EXPECT_EQ(Run({"LRANGE", "missing", "0", "-1"}), Arr({}));
  EXPECT_EQ(Run({"LLEN", "l"}), Reply::Int(4));
  EXPECT_EQ(Run({"LLEN", "missing"}), Reply::Int(0));
  EXPECT_EQ(Run({"LPOP", "l"}), Reply::Str("y"));
  EXPECT_EQ(Run({"LPOP", "l", "2"}), Arr({"x", "a"}));
  EXPECT_EQ(Run({"LPOP", "l", "0"}), Arr({}));    // an empty array, the key stays
  EXPECT_EQ(Run({"LPOP", "l", "5"}), Arr({"b"}));  // as many as there are; the list goes
  EXPECT_EQ(Run({"EXISTS", "l"}), Reply::Int(0));
  EXPECT_EQ(Run({"LPOP", "l"}), Reply::Nil());
  EXPECT_EQ(Run({"LPOP", "l", "2"}), Reply::Nil());  // a null array
  EXPECT_EQ(Run({"LPOP", "l", "0"}), Reply::Nil());
}

TEST_F(StoreTest, ListErrorsAndTypes) {
  Run({"SET", "s", "1"});
  Run({"RPUSH", "l", "a", "b", "c"});
  for (const std::vector<std::string>& words :
       std::vector<std::vector<std::string>>{{"GET", "l"}, {"GETSET", "l", "x"}, {"INCR", "l"}, {"SET", "l", "v", "GET"},
                                             {"SET", "l", "v", "NX", "GET"}, {"LPUSH", "s", "x"}, {"RPUSH", "s", "x"},
                                             {"LLEN", "s"}, {"LPOP", "s"}, {"LPOP", "s", "0"}, {"LRANGE", "s", "0", "1"},
                                             {"LTRIM", "s", "0", "1"}, {"BLPOP", "s", "0.1"}, {"BLPOP", "none", "s", "0.1"}})
    EXPECT_EQ(Run(words), Err(kWrongType)) << words[0] << " " << words[1];
  EXPECT_EQ(Run({"SETNX", "l", "v"}), Reply::Int(0));
  EXPECT_EQ(Run({"LPOP", "l", "abc"}), Err("ERR value is out of range, must be positive"));
  EXPECT_EQ(Run({"LPOP", "s", "-1"}), Err("ERR value is out of range, must be positive"));  // count first
  EXPECT_EQ(Run({"LPOP", "l", "1", "2"}), Err("ERR wrong number of arguments for 'lpop' command"));
  EXPECT_EQ(Run({"LRANGE", "s", "a", "1"}), Err(kNotInteger));  // integers before the key
  EXPECT_EQ(Run({"LTRIM", "missing", "a", "1"}), Err(kNotInteger));
  EXPECT_EQ(Run({"LTRIM", "missing", "0", "1"}), Ok());
  for (const std::vector<std::string>& words : std::vector<std::vector<std::string>>{
           {"BLPOP"}, {"BLPOP", "k"}, {"LPUSH", "k"}, {"LLEN"}, {"LTRIM", "k", "1"}, {"LPOP"}, {"LRANGE", "k", "1"},
           {"PUBLISH", "ch"}}) {
    std::string lower = words[0];
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(Run(words), Err("ERR wrong number of arguments for '" + lower + "' command")) << words[0];
  }
  // SET replaces a list; the TTL rules are the string's.
  EXPECT_EQ(Run({"SET", "l", "v"}), Ok());
  EXPECT_EQ(Run({"GET", "l"}), Reply::Str("v"));
  EXPECT_EQ(Run({"LLEN", "l"}), Err(kWrongType));
  // A list keeps its TTL across pushes and pops, and expires like any key.
  Run({"RPUSH", "t", "a", "b"});
  Run({"PEXPIRE", "t", "100"});
  EXPECT_EQ(Run({"LPUSH", "t", "z"}), Reply::Int(3));
  EXPECT_EQ(Run({"PTTL", "t"}), Reply::Int(100));
  EXPECT_EQ(Run({"LLEN", "t"}, kT + 101), Reply::Int(0));
}

TEST_F(StoreTest, Ltrim) {
  auto fill = [&] {
    Run({"DEL", "l"});
    Run({"RPUSH", "l", "a", "b", "c", "d", "e"});
  };
  fill();
  EXPECT_EQ(Run({"LTRIM", "l", "1", "-2"}), Ok());
  EXPECT_EQ(Run({"LRANGE", "l", "0", "-1"}), Arr({"b", "c", "d"}));
  fill();
  EXPECT_EQ(Run({"LTRIM", "l", "-2", "100"}), Ok());
  EXPECT_EQ(Run({"LRANGE", "l", "0", "-1"}), Arr({"d", "e"}));
  fill();
  EXPECT_EQ(Run({"LTRIM", "l", "0", "0"}), Ok());
  EXPECT_EQ(Run({"LRANGE", "l", "0", "-1"}), Arr({"a"}));
  fill();
  EXPECT_EQ(Run({"LTRIM", "l", "3", "1"}), Ok());  // empty range: the list goes
  EXPECT_EQ(Run({"EXISTS", "l"}), Reply::Int(0));
}

TEST_F(StoreTest, BlpopPopsAtOnceOrAsksToBlock) {
  Run({"RPUSH", "b", "1", "2"});
  TakeTouched();
  BlockRequest block;
  Reply r = store_.Execute(Command::Of("BLPOP", "a", "b", "0.5"), kT, &touched_, &block);
  EXPECT_EQ(r, Arr({"b", "1"}));  // the first non-empty list, at once
  EXPECT_FALSE(block.blocked);
  EXPECT_EQ(TakeTouched(), Keys{"b"});
  r = store_.Execute(Command::Of("BLPOP", "a", "c", "0.25"), kT, &touched_, &block);
  EXPECT_EQ(r, Reply::Nil());
  EXPECT_TRUE(block.blocked);
  EXPECT_EQ(block.timeout_ms, 250);
  EXPECT_TRUE(TakeTouched().empty());
  // Without a BlockRequest (a script, or a caller that cannot wait): nil at once.
  EXPECT_EQ(Run({"BLPOP", "a", "0.25"}), Reply::Nil());
  EXPECT_EQ(Run({"BLPOP", "b", "1"}), Arr({"b", "2"}));
  EXPECT_EQ(Run({"EXISTS", "b"}), Reply::Int(0));
}

TEST_F(StoreTest, BlpopTimeoutIsReadAsRedisReadsIt) {
  struct Case {
    std::string word;
    int64_t ms;  // -1: the error below
    std::string error;
  };
  const std::string not_float = "ERR timeout is not a float or out of range";
  const std::string negative = "ERR timeout is negative";
  // What redis-server 7.0.15 did with each (for "0": blocked for ever; for the others the time
  // before its nil, or its error).
  const std::vector<Case> cases = {
      {"0.5", 500, ""},     {"1", 1000, ""},       {"0.0001", 1, ""},    {"1e-3", 1, ""},      {".5e-2", 5, ""},
      {"+0.01", 10, ""},    {"0x1", 1000, ""},     {"1.5e-1", 150, ""},  {"0", 0, ""},         {"0.0", 0, ""},
      {"-0.0001", 0, ""},   {"-0.001", 0, ""},     {"-0.0011", -1, negative}, {"-1", -1, negative},
      {"inf", -1, negative}, {"1e30", -1, negative}, {"9.3e15", -1, negative}, {"nan", -1, not_float},
      {"abc", -1, not_float}, {"", -1, not_float},  {" 1", -1, not_float}, {"1 ", -1, not_float},
      {"1e5000", -1, not_float},
  };
  for (const Case& c : cases) {
    int64_t ms = -1;
    const char* error = ParseBlockTimeout(c.word, &ms);
    if (c.ms >= 0) {
      EXPECT_EQ(error, nullptr) << c.word;
      EXPECT_EQ(ms, c.ms) << c.word;
    } else {
      ASSERT_NE(error, nullptr) << c.word;
      EXPECT_EQ(std::string(error), c.error) << c.word;
      EXPECT_EQ(Run({"BLPOP", "k", c.word}), Err(c.error)) << c.word;
    }
  }
  // 0 means "for ever" to Redis: refused here (and by the real runtime), whatever the lists hold.
  Run({"RPUSH", "k", "a"});
  EXPECT_EQ(Run({"BLPOP", "k", "0"}), Err(kBlockForeverError));
  EXPECT_EQ(Run({"BLPOP", "k", "-0.0001"}), Err(kBlockForeverError));
  int64_t ms = 0;
  EXPECT_TRUE(BlpopTimeoutMs(Command::Of("blpop", "k", "2"), &ms));
  EXPECT_EQ(ms, 2000);
  EXPECT_FALSE(BlpopTimeoutMs(Command::Of("BLPOP", "k", "x"), &ms));
  EXPECT_FALSE(BlpopTimeoutMs(Command::Of("BLPOP", "2"), &ms));
  EXPECT_FALSE(BlpopTimeoutMs(Command::Of("LPOP", "k", "2"), &ms));
}

TEST_F(StoreTest, ReadyKeysAreTheListsAPushCreated) {
  std::vector<std::string> ready;
  Run({"RPUSH", "a", "1"});
  Run({"RPUSH", "a", "2"});  // already there: not signalled again
  Run({"LPUSH", "b", "1"});
  Run({"SET", "s", "x"});
  store_.TakeReadyKeys(&ready);
  EXPECT_EQ(ready, (Keys{"a", "b"}));
  EXPECT_FALSE(store_.has_ready_keys());
  Run({"LPOP", "b"});
  RunScript(Script::kNotifyOne, {"b"}, {});
  store_.TakeReadyKeys(&ready);
  EXPECT_EQ(ready, Keys{"b"});
  EXPECT_EQ(store_.PopHead("b", kT, nullptr), "1");
  EXPECT_EQ(store_.PopHead("b", kT, nullptr), std::nullopt);
  EXPECT_EQ(store_.PopHead("s", kT, nullptr), std::nullopt);
}

TEST_F(StoreTest, PublishCountsTheHooksReceivers) {
  EXPECT_EQ(Run({"PUBLISH", "ch", "x"}), Reply::Int(0));  // no hook: nobody listens
  std::vector<std::string> seen;
  store_.set_publish_hook([&](std::string_view channel, std::string_view message) -> int64_t {
    seen.push_back(std::string(channel) + "=" + std::string(message));
    return 3;
  });
  EXPECT_EQ(Run({"publish", "ch", "hello"}), Reply::Int(3));
  EXPECT_EQ(seen, Keys{"ch=hello"});
  EXPECT_TRUE(TakeTouched().empty());
}

TEST_F(StoreTest, NotifyOneLeavesAtMostOneToken) {
  EXPECT_EQ(RunScript(Script::kNotifyOne, {"w"}, {}), Reply::Int(1));
  EXPECT_EQ(TakeTouched(), Keys{"w"});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(RunScript(Script::kNotifyOne, {"w"}, {}), Reply::Int(1));
  EXPECT_TRUE(TakeTouched().empty());
  EXPECT_EQ(Run({"LRANGE", "w", "0", "-1"}), Arr({"1"}));
  Run({"RPUSH", "w", "x"});  // pushed by someone else: the script leaves it alone
  EXPECT_EQ(RunScript(Script::kNotifyOne, {"w"}, {}), Reply::Int(2));
  Run({"SET", "s", "1"});
  EXPECT_EQ(RunScript(Script::kNotifyOne, {"s"}, {}),
            Err(std::string(kWrongType) + " script: " + ScriptSha1(Script::kNotifyOne) + ", on @user_script:1."));
}

TEST_F(StoreTest, LockScriptsOnAListKeyFailAsTheirGetDoes) {
  Run({"RPUSH", "lk", "a"});
  EXPECT_EQ(RunScript(Script::kCompareAndDelete, {"lk"}, {"tok"}),
            Err(std::string(kWrongType) + " script: " + ScriptSha1(Script::kCompareAndDelete) + ", on @user_script:1."));
  EXPECT_EQ(RunScript(Script::kCompareAndPexpire, {"lk"}, {"tok", "10"}),
            Err(std::string(kWrongType) + " script: " + ScriptSha1(Script::kCompareAndPexpire) + ", on @user_script:1."));
  EXPECT_EQ(RunScript(Script::kSetNxPxIncrFence, {"lk", "fk"}, {"tok", "10"}), Reply::Nil());  // NX: taken
}

TEST_F(StoreTest, ListsReplicateWhole) {
  Run({"RPUSH", "l", "a", "b"});
  Run({"PEXPIRE", "l", "500"});
  Store replica;
  for (const std::string& key : TakeTouched()) replica.Apply(key, store_.Snapshot(key));
  EXPECT_EQ(replica.Execute(Command::Of("LRANGE", "l", "0", "-1"), kT), Arr({"a", "b"}));
  EXPECT_EQ(replica.Execute(Command::Of("PTTL", "l"), kT), Reply::Int(500));
  Run({"LPOP", "l", "2"});
  for (const std::string& key : TakeTouched()) replica.Apply(key, store_.Snapshot(key));
  EXPECT_EQ(replica.Execute(Command::Of("EXISTS", "l"), kT), Reply::Int(0));
}

TEST(ScriptsTest, TableIsIndexedByScript) {
  ASSERT_EQ(Scripts().size(), static_cast<size_t>(Script::kCount) - 1);
  for (int i = 1; i < static_cast<int>(Script::kCount); ++i) {
    const auto id = static_cast<Script>(i);
    EXPECT_EQ(GetScript(id).id, id);
    EXPECT_EQ(&GetScript(id), &Scripts()[static_cast<size_t>(i - 1)]);
    EXPECT_NE(GetScript(id).body, nullptr);
    EXPECT_EQ(std::string_view(GetScript(id).lua).find('\n'), std::string_view::npos);  // one line
    EXPECT_EQ(ScriptSha1(id), Sha1Hex(GetScript(id).lua));
  }
  EXPECT_EQ(GetScript(Script::kCompareAndDelete).num_keys, 1);
  EXPECT_EQ(GetScript(Script::kCompareAndPexpire).num_args, 2);
  EXPECT_EQ(GetScript(Script::kSetNxPxIncrFence).num_keys, 2);
  EXPECT_EQ(GetScript(Script::kNotifyOne).num_keys, 1);
  EXPECT_EQ(GetScript(Script::kNotifyOne).num_args, 0);
  EXPECT_THROW(GetScript(Script::kNone), std::out_of_range);
}

TEST(ScriptsTest, Sha1) {
  EXPECT_EQ(Sha1Hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(Sha1Hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(Sha1Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  EXPECT_EQ(Sha1Hex(std::string(1000, 'a')), "291e9a6c66994949b57ba5e650361e98fc36b1ba");
  // What redis-server 7.0.15 named these texts in its errors (re-check there if the Lua changes).
  EXPECT_EQ(ScriptSha1(Script::kCompareAndPexpire), "3c47f94dc28d90f47ce03eabe2ebe59e85e54bf1");
  EXPECT_EQ(ScriptSha1(Script::kSetNxPxIncrFence), "7d962846a562b81de3c7344853e93bdaf27792f1");
  EXPECT_EQ(ScriptSha1(Script::kNotifyOne), "9fdabf9f4e4829bd1c9c041397a9aa56ca449ee8");
  EXPECT_EQ(ScriptSha1(Script::kCompareAndDelete), "d02e481a9c91ceec59c5822a58a49d5d5d7ac80b");
}

}  // namespace
}  // namespace locklab::sim
