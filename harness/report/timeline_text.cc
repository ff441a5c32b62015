#include "harness/report/timeline_text.h"

#include <nlohmann/json.hpp>

#include "harness/report/json_text.h"
#include "harness/report/report.h"

namespace locklab {
namespace {

using json_text::AppendDouble;
using json_text::AppendInt;
using json_text::AppendString;

// ",\n", `indent` spaces and "KEY": ; without the comma for the first key.
std::string FieldStart(const char* key, size_t indent, bool first) {
  std::string s = first ? "" : ",\n";
  s.append(indent, ' ');
  s += '"';
  s += key;
  s += "\": ";
  return s;
}

// An event's time as every report time: ms, rounded to 3 decimals.
double TimeMs(const Event& e) { return Round3(static_cast<double>(e.t_us) / 1000.0); }

}  // namespace

nlohmann::json TimelineJson(const std::vector<Event>& timeline) {
  // Each object built field by field, in its keys' (sorted) order: a braced list of pairs builds
  // each pair as an array first, several times the cost.
  nlohmann::json tl = nlohmann::json::array();
  nlohmann::json::array_t& events = tl.get_ref<nlohmann::json::array_t&>();
  events.reserve(timeline.size());
  for (const Event& e : timeline) {
    nlohmann::json::object_t o;
    o.emplace_hint(o.end(), "client", e.client);
    o.emplace_hint(o.end(), "detail", e.detail);
    o.emplace_hint(o.end(), "event", EvName(e.type));
    o.emplace_hint(o.end(), "t_ms", TimeMs(e));
    o.emplace_hint(o.end(), "value", e.value);
    events.emplace_back(std::move(o));
  }
  return tl;
}

void AppendTimelineText(const std::vector<Event>& timeline, size_t indent, std::string* out) {
  if (timeline.empty()) {
    *out += "[]";
    return;
  }
  const size_t field = indent + 4;
  // About what an event takes (five keys at `field`, their values, the braces at indent + 2): one
  // allocation for the whole timeline rather than a doubling every few events.
  out->reserve(out->size() + timeline.size() * (5 * field + 2 * indent + 96));
  // What comes between the values, the same for every event: TimelineJson's keys in their sorted
  // order, each on its line.
  const std::string open = std::string(indent + 2, ' ') + "{\n" + FieldStart("client", field, true);
  const std::string detail = FieldStart("detail", field, false);
  const std::string event = FieldStart("event", field, false);
  const std::string t_ms = FieldStart("t_ms", field, false);
  const std::string value = FieldStart("value", field, false);
  const std::string close = "\n" + std::string(indent + 2, ' ') + "}";
  *out += "[\n";
  for (size_t i = 0; i < timeline.size(); ++i) {
    const Event& e = timeline[i];
    if (i > 0) *out += ",\n";
    *out += open;
    AppendInt(e.client, out);
    *out += detail;
    AppendString(e.detail, out);
    *out += event;
    AppendString(EvName(e.type), out);
    *out += t_ms;
    AppendDouble(TimeMs(e), out);
    *out += value;
    AppendInt(e.value, out);
    *out += close;
  }
  *out += '\n';
  out->append(indent, ' ');
  *out += ']';
}

}  // namespace locklab
