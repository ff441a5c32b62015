// The scenario timeline marks rows with "!!" where the checkers count too many holders: readers
// sharing a read-write lock and holders within a semaphore's permits are not marked.
#include "harness/scenario/scenario_text.h"

#include <gtest/gtest.h>

#include <sstream>

namespace locklab {
namespace {

int64_t Us(int64_t ms) { return ms * 1000; }

// The first column of every row of the table after the header, in order.
std::vector<std::string> Marks(const std::string& table) {
  std::vector<std::string> marks;
  std::istringstream in(table);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '-') continue;
    marks.push_back(line.rfind("!!", 0) == 0 ? "!!" : "");
  }
  return marks;
}

TEST(ScenarioTimeline, ReadersSharingAreNotMarkedAWriterAmongThemIs) {
  History h;
  h.Add(Us(0), 0, Ev::kEnter, -1, kReadHold);
  h.Add(Us(10), 1, Ev::kEnter, -1, kReadHold);  // two readers: legal
  h.Add(Us(20), 0, Ev::kExit);
  h.Add(Us(30), 2, Ev::kEnter);                  // a writer while reader 1 reads
  h.Add(Us(40), 1, Ev::kExit);                   // the overlap ends with this exit
  h.Add(Us(50), 2, Ev::kExit);
  const std::vector<std::string> marks = Marks(ScenarioTimelineTable({"A", "B", "C"}, h.events(), 1));
  EXPECT_EQ(marks, (std::vector<std::string>{"", "", "", "!!", "!!", ""}));
}

TEST(ScenarioTimeline, HoldersWithinTheSemaphorePermitsAreNotMarked) {
  History h;
  h.Add(Us(0), 0, Ev::kEnter);
  h.Add(Us(10), 1, Ev::kEnter);  // 2 of 2 permits: legal
  h.Add(Us(20), 2, Ev::kEnter);  // a third holder
  h.Add(Us(30), 2, Ev::kExit);
  h.Add(Us(40), 1, Ev::kExit);
  h.Add(Us(50), 0, Ev::kExit);
  const auto& events = h.events();
  EXPECT_EQ(Marks(ScenarioTimelineTable({"A", "B", "C"}, events, 2)),
            (std::vector<std::string>{"", "", "!!", "!!", "", ""}));
  // The same history under a lock (one holder allowed): every row with two or more holders.
  EXPECT_EQ(Marks(ScenarioTimelineTable({"A", "B", "C"}, events, 1)),
            (std::vector<std::string>{"", "!!", "!!", "!!", "!!", ""}));
}

}  // namespace
}  // namespace locklab
