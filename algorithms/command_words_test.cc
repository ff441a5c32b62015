#include "algorithms/command_words.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "algorithms/command.h"

namespace locklab {
namespace {

using namespace std::string_literals;

std::vector<std::string> Many(int n) {
  std::vector<std::string> w;
  for (int i = 0; i < n; ++i) w.push_back("word" + std::to_string(i) + std::string(static_cast<size_t>(i), 'x'));
  return w;
}

TEST(CommandWords, KeepsEachWordWhateverItsBytes) {
  const std::string nul = "a\0b"s, empty, long_token(64, 'f');
  const CommandWords w = {"SET", nul, empty, long_token};
  ASSERT_EQ(w.size(), 4u);
  EXPECT_EQ(w[0], "SET");
  EXPECT_EQ(w[1], nul);
  EXPECT_EQ(w[1].size(), 3u);
  EXPECT_EQ(w[2], "");
  EXPECT_EQ(w[3], long_token);
  EXPECT_EQ(w.front(), "SET");
  EXPECT_EQ(w.back(), long_token);
  EXPECT_TRUE(CommandWords().empty());
}

TEST(CommandWords, HoldsMoreWordsThanItsInlineRoom) {
  for (int n : {0, 1, 7, 8, 9, 20}) {
    const std::vector<std::string> words = Many(n);
    const CommandWords w(words);
    ASSERT_EQ(w.size(), static_cast<size_t>(n));
    EXPECT_EQ(w.ToStrings(), words) << n;
    CommandWords pushed;
    for (const std::string& s : words) pushed.push_back(s);
    EXPECT_EQ(pushed, w) << n;
  }
}

TEST(CommandWords, PopBackDropsTheLastWordOnEitherSideOfTheInlineRoom) {
  const std::vector<std::string> words = Many(10);
  CommandWords w(words);
  for (size_t n = words.size(); n-- > 0;) {
    w.pop_back();
    EXPECT_EQ(w.ToStrings(), std::vector<std::string>(words.begin(), words.begin() + static_cast<long>(n)));
  }
  EXPECT_TRUE(w.empty());
  w.push_back("again");
  EXPECT_EQ(w.ToStrings(), std::vector<std::string>{"again"});
}

TEST(CommandWords, EqualMeansTheSameWordsNotTheSameBytes) {
  EXPECT_EQ(CommandWords({"ab", "c"}), CommandWords({"ab", "c"}));
  EXPECT_NE(CommandWords({"ab", "c"}), CommandWords({"a", "bc"}));  // same text, other words
  EXPECT_NE(CommandWords({"ab"}), CommandWords({"ab", ""}));
}

TEST(CommandWords, IteratesAsARandomAccessRangeOfViews) {
  const CommandWords w = {"BLPOP", "k1", "k2", "k1", "0"};
  EXPECT_EQ(w.end() - w.begin(), 5);
  EXPECT_EQ(*(w.begin() + 2), "k2");
  EXPECT_EQ(w.begin()[4], "0");
  EXPECT_EQ(std::find(w.begin() + 1, w.begin() + 3, std::string_view("k1")) - w.begin(), 1);
  EXPECT_EQ(std::vector<std::string_view>(w.begin() + 1, w.end() - 1),
            (std::vector<std::string_view>{"k1", "k2", "k1"}));
  std::vector<std::string> appended = {"x"};
  appended.insert(appended.end(), w.begin(), w.end());
  EXPECT_EQ(appended.size(), 6u);
}

// Assign over words already held: words that fit the inline room, words that outgrow it part way
// through (more than 64 bytes in 8 words or fewer), more words than the inline room, and a short
// command again once the words live on the heap.
TEST(CommandWords, AssignReplacesTheWordsWhereverTheyFit) {
  const std::vector<std::vector<std::string>> commands = {
      {"SET", "k", std::string(32, 't'), "NX", "PX", "3000"},  // 46 bytes: inline
      {"GET", "k"},
      {"SET", std::string(30, 'k'), std::string(30, 'v'), "NX", "PX", "3000"},  // past 64 at the 5th word
      Many(12),
      {"GET", "k"},  // on the heap now, and fits it
      {std::string(200, 'a'), "b"},  // past the heap's room at the first word
      {},
      {"DEL", ""},
  };
  CommandWords w;
  for (const std::vector<std::string>& words : commands) {
    const std::vector<std::string_view> views(words.begin(), words.end());
    w.Assign(views.data(), views.size());
    EXPECT_EQ(w.ToStrings(), words) << words.size() << " words";
    EXPECT_EQ(w, CommandWords(words));
    CommandWords grown = w;  // words pushed past the inline room after an Assign land after its own
    std::vector<std::string> expected = words;
    for (const std::string& more : Many(9)) {
      grown.push_back(more);
      expected.push_back(more);
    }
    EXPECT_EQ(grown.ToStrings(), expected) << words.size() << " words";
  }
}

TEST(CommandWords, AMovedCommandReadsTheSameWords) {
  Command c = Command::Of("SET", "k", std::string(40, 't'), "NX", "PX", "3000");
  Command short_one = Command::Of("GET", "k");  // fits the string's own room: moved by copy
  const Command moved = std::move(c);
  const Command moved_short = std::move(short_one);
  EXPECT_EQ(moved.ToString(), "SET k " + std::string(40, 't') + " NX PX 3000");
  EXPECT_EQ(moved_short.ToString(), "GET k");
  const Command call = Command::Call(Script::kCompareAndDelete, {"lock"}, {"tok"});
  EXPECT_EQ(call.num_keys, 1);
  EXPECT_EQ(call.argv.ToStrings(), (std::vector<std::string>{"lock", "tok"}));
}

}  // namespace
}  // namespace locklab
