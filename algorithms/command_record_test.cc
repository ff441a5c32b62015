#include "algorithms/command_record.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "sim/history.h"

namespace locklab {
namespace {

std::vector<Reply> Replies() {
  std::vector<Reply> r = {Reply::Nil(),
                          Reply::Int(0),
                          Reply::Int(-1),
                          Reply::Int(std::numeric_limits<int64_t>::min()),
                          Reply::Int(std::numeric_limits<int64_t>::max()),
                          Reply::Str(""),
                          Reply::Str(std::string("a\0b \"q\"", 7)),
                          Reply::Status("OK"),
                          Reply::Error("ERR wrong number of arguments"),
                          Reply::Timeout(),
                          Reply::Array(),
                          Reply::Array({Reply::Str("k"), Reply::Int(3), Reply::Array({Reply::Nil()})}),
                          Reply::Str(std::string(300, 'x'))};
  return r;
}

// A command of `words` words drawn from a pool (empty, blank, "|", NUL, long), by `pick`.
Command Drawn(int script, int num_keys, size_t words, size_t pick) {
  static const std::vector<std::string> pool = {"",  "SET", "k", "a much longer word than fits in sixteen bytes",
                                                " ", "|",   std::string("n\0l", 3), std::string(200, 't')};
  Command c;
  c.script = script == 0 ? Script::kNone : script == 1 ? Script::kCompareAndDelete : Script::kFifoRelease;
  c.num_keys = num_keys;
  std::vector<std::string> argv;
  for (size_t w = 0, x = pick; w < words; ++w, x = x / 5 + w) argv.push_back(pool[x % pool.size()]);
  c.argv = argv;
  return c;
}

// Every shape of command (plain and scripts, num_keys -1 to 3, 0 to 20 words: past the eight a
// command keeps inline and the sixteen the reader keeps on the stack, records past 256 bytes)
// with every kind of reply: the record's text is the text written directly, and records one after
// another in a buffer read back apart.
TEST(CommandRecord, TextIsTheCommandsAndRepliesText) {
  const std::vector<Reply> replies = Replies();
  int checked = 0;
  for (int script = 0; script < 3; ++script) {
    for (int num_keys = -1; num_keys <= 3; ++num_keys) {
      for (size_t words : {0, 1, 2, 5, 8, 9, 16, 17, 20}) {
        for (size_t pick = 0; pick < 6; ++pick) {
          const Command c = Drawn(script, num_keys, words, pick * 7 + words);
          std::string buffer = "before";
          std::vector<size_t> ends;
          for (const Reply& r : replies) {
            AppendCommandRecord(c, r, &buffer);
            ends.push_back(buffer.size());
          }
          size_t begin = 6;
          for (size_t k = 0; k < replies.size(); ++k) {
            std::string text = "x: ";
            AppendCommandRecordText(std::string_view(buffer).substr(begin, ends[k] - begin), &text);
            ASSERT_EQ(text, "x: " + c.ToString() + " -> " + ToString(replies[k]))
                << "script " << script << " num_keys " << num_keys << " words " << words << " reply " << k;
            begin = ends[k];
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 3 * 5 * 9 * 6 * 13);
}

TEST(CommandRecord, ACutRecordIsRefused) {
  std::string buffer;
  AppendCommandRecord(Command::Of("SET", "k", "v"), Reply::Status("OK"), &buffer);
  std::string text;
  EXPECT_THROW(AppendCommandRecordText(std::string_view(buffer).substr(0, buffer.size() - 1), &text), std::logic_error);
}

// A history that keeps records gives the same details as one that keeps texts, however read.
TEST(CommandRecord, AHistoryOfRecordsGivesTheDetailsOfAHistoryOfTexts) {
  History texts, records;
  records.set_record_text(&AppendCommandRecordText);
  const std::vector<Reply> replies = Replies();
  for (size_t i = 0; i < 40; ++i) {
    const Command c = Drawn(static_cast<int>(i % 3), 1, i % 11, i);
    const Reply& r = replies[i % replies.size()];
    const int64_t t = static_cast<int64_t>(i);
    texts.AddCommand(t, 0, 1, [&](std::string* out) { *out += c.ToString() + " -> " + ToString(r); });
    records.AddCommand(t, 0, 1, [&](std::string* out) { AppendCommandRecord(c, r, out); });
    if (i % 7 == 0) {
      texts.Add(t, 0, Ev::kEnter, -1);
      records.Add(t, 0, Ev::kEnter, -1);
    }
  }
  ASSERT_EQ(texts.recorded().size(), records.recorded().size());
  for (size_t k = 0; k < texts.recorded().size(); ++k)
    EXPECT_EQ(texts.Detailed(texts.recorded()[k]).detail, records.Detailed(records.recorded()[k]).detail) << k;
  const std::vector<Event> a = texts.TakeEvents(), b = records.TakeEvents();
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(a[k].detail, b[k].detail) << k;
    EXPECT_EQ(a[k].text, b[k].text) << k;
  }
}

}  // namespace
}  // namespace locklab
