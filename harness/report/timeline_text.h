// A violation's "timeline" as the report prints it, written as text straight from the events:
// the bytes nlohmann's dump(2) gives for the array of event objects (TimelineEventJson in
// report.cc), without building that array first. A sweep's full reports are mostly timelines,
// and building, printing and freeing their JSON cost more than the simulated runs themselves.
//
// Only the layout is written here. Numbers are printed by nlohmann's own routine, and any string
// that needs escaping (a quote, a backslash, a control or non-ASCII byte) is printed by
// nlohmann, so the bytes are the library's; report_test.cc compares the two on every kind of
// string and number.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "sim/history.h"

namespace locklab {

// Appends the timeline array to *out as dump(2) prints it when the line holding its key starts
// `indent` spaces in: "[]" when empty, else "[\n", each event object `indent` + 2 spaces in,
// its fields `indent` + 4 in, joined by ",\n", then "\n", `indent` spaces and "]".
void AppendTimelineText(const std::vector<Event>& timeline, size_t indent, std::string* out);

}  // namespace locklab
