#include "algorithms/command.h"

#include <string>

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

}  // namespace
}  // namespace locklab
