#include "algorithms/command.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace locklab {
namespace {

TEST(CommandText, PlainWordsAreJoinedBySpaces) {
  EXPECT_EQ(Command::Of("SET", "lock", "tok", "NX", "PX", "200").ToString(), "SET lock tok NX PX 200");
  EXPECT_EQ(Command::Of("GET", "").ToString(), "GET ");  // an empty word keeps its space
  EXPECT_EQ(Command::Of("", "k").ToString(), "k");       // nothing written yet: no space
  EXPECT_EQ(Command{}.ToString(), "");
}

TEST(CommandText, AScriptNamesItselfAndSetsItsArgsApart) {
  EXPECT_EQ(Command::Run(Script::kCompareAndDelete, 1, "lock", "tok").ToString(), "compare_and_delete lock | tok");
  EXPECT_EQ(Command::Run(Script::kNotifyOne, 1, "wake").ToString(), "notify_one wake");
  EXPECT_EQ(Command::Run(Script::kStockDecrement, 0, "a").ToString(), "stock_decrement | a");
}

TEST(CommandText, AppendToAddsAfterWhatIsThere) {
  std::string out = "x";
  Command::Of("DEL", "k").AppendTo(&out);
  out += " -> ";
  Command::Of("GET", "k").AppendTo(&out);
  EXPECT_EQ(out, "xDEL k -> GET k");  // a space only between a command's own words
}

// The text appended a piece at a time, as its definition reads.
std::string SlowText(const Command& c, const std::string& before) {
  std::string out = before;
  const size_t start = out.size();
  if (c.script != Script::kNone) out += ScriptName(c.script);
  for (size_t i = 0; i < c.argv.size(); ++i) {
    if (out.size() > start) out += ' ';
    if (c.script != Script::kNone && static_cast<int>(i) == c.num_keys) out += "| ";
    out += c.argv[i];
  }
  return out;
}

TEST(CommandText, EveryShapeOfCommandGivesThePieceAtATimeText) {
  const std::vector<std::string> pool = {"", "SET", "k", "a much longer word than fits in sixteen bytes", " ", "|", "0"};
  int checked = 0;
  for (int script = 0; script < 3; ++script) {
    for (int num_keys = -1; num_keys <= 5; ++num_keys) {
      for (size_t words = 0; words <= 4; ++words) {
        for (size_t pick = 0; pick < 49; ++pick) {  // which of the pool's words, drawn from pick
          Command c;
          c.script = script == 0 ? Script::kNone : script == 1 ? Script::kCompareAndDelete : Script::kNotifyOne;
          c.num_keys = num_keys;
          std::vector<std::string> argv;
          for (size_t w = 0, x = pick; w < words; ++w, x = x / 7 + w) argv.push_back(pool[x % pool.size()]);
          c.argv = argv;
          for (const char* before : {"", "x -> "}) {
            std::string out = before;
            c.AppendTo(&out);
            ASSERT_EQ(out, SlowText(c, before)) << "script " << script << " num_keys " << num_keys << " words " << words;
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 3 * 7 * 5 * 49 * 2);
}

}  // namespace
}  // namespace locklab
