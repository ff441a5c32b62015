#include "harness/report/timeline_text.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/report/report.h"

namespace locklab {
namespace {

using nlohmann::json;

// Every kind of string and number a timeline event can hold.
std::vector<Event> OddTimeline() {
  return {{0, 0, Ev::kAcquireStart, 0, ""},
          {1, -1, Ev::kFault, -9'223'372'036'854'775'807, "node 0 \"crashed\" \\ at once"},
          {1'000, 1, Ev::kCommand, 4, "SET k v\n\tNX \x01 \x1f \x7f"},
          {1'234'567, 2, Ev::kCommand, 9'223'372'036'854'775'807, "GET caf\xc3\xa9 \xe2\x86\x92 ok"},
          {999'999'999'999'999'999, 0, Ev::kExit, 0, "plain text, the common case"},
          {-1'500, 3, Ev::kEnter, -1, "/ { } [ ] :"}};
}

TEST(TimelineText, HasTheBytesTheLibraryPrints) {
  for (const std::vector<Event>& tl : {OddTimeline(), std::vector<Event>{}, std::vector<Event>(1)}) {
    // At depth 0 the array starts the text; deeper, inside an object, its key's line is indented.
    std::string text;
    AppendTimelineText(tl, 0, &text);
    EXPECT_EQ(text, TimelineJson(tl).dump(2));
    const std::string whole = json{{"timeline", TimelineJson(tl)}}.dump(2);
    text = "{\n  \"timeline\": ";
    AppendTimelineText(tl, 2, &text);
    text += "\n}";
    EXPECT_EQ(text, whole);
  }
}

TEST(TimelineText, BadUtf8IsRefusedAsTheLibraryRefusesIt) {
  const std::vector<Event> tl = {{0, 0, Ev::kCommand, 0, "GET \xff"}};
  std::string text;
  EXPECT_THROW(AppendTimelineText(tl, 0, &text), json::type_error);
  EXPECT_THROW(TimelineJson(tl).dump(2), json::type_error);
}

// RunText writes the timelines as text into the run's JSON: the report it makes is the one
// BuildReport's JSON prints, with several examples, an empty timeline and odd strings.
TEST(TimelineText, RunTextGivesTheBytesOfTheWholeReport) {
  RunResult r;
  r.spec.algorithm = "token";
  std::string error;
  ASSERT_TRUE(ResolveSpec(&r.spec).ok(&error)) << error;
  r.completed = true;
  r.check.safety.violations = 3;
  for (size_t k = 0; k < 3; ++k) {
    Violation v;
    v.start_us = static_cast<int64_t>(k) * 1000;
    v.end_us = v.start_us + 500;
    v.clients = {0, 1};
    if (k != 1) {  // the second one empty, the third one shorter
      v.timeline = OddTimeline();
      v.timeline.resize(v.timeline.size() - k);
    }
    r.check.safety.examples.push_back(v);
  }
  r.replay = "locklab run --detail \"timeline\": \"\\u0001timeline 0\\u0001\"";  // a stand-in's text
  const std::vector<RunResult> runs = {r, r};
  const std::vector<std::string> texts = {RunText(r), RunText(r)};
  EXPECT_EQ(ReportTextWithRuns(BuildReportHead(runs, MakeReportContext(runs)), texts),
            ReportText(BuildReport(runs, MakeReportContext(runs))));
}

}  // namespace
}  // namespace locklab
