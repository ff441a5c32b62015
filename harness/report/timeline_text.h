// A violation's "timeline" as the report prints it (an array of event objects: client, detail,
// event, t_ms, value), in its two forms side by side so that a field is changed in both:
//
// - TimelineJson: the array as nlohmann::json, for RunJson (and everything that reads a report's
//   JSON).
// - AppendTimelineText: the bytes nlohmann's dump(2) gives for that array, written straight from
//   the events without building it. A sweep's full reports are mostly timelines, and building,
//   printing and freeing their JSON cost more than the simulated runs themselves (RunText).
//   Only the layout is written here; the values by json_text.h (nlohmann's own routines for
//   numbers and escapes), so the bytes are the library's; timeline_text_test.cc compares the two
//   forms on every kind of string and number.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/history.h"

namespace locklab {

nlohmann::json TimelineJson(const std::vector<Event>& timeline);

// Appends TimelineJson(timeline).dump(2) to *out as it is printed when the line holding its key
// starts `indent` spaces in: "[]" when empty, else "[\n", each event object `indent` + 2 spaces
// in, its fields `indent` + 4 in, joined by ",\n", then "\n", `indent` spaces and "]".
void AppendTimelineText(const std::vector<Event>& timeline, size_t indent, std::string* out);

}  // namespace locklab
