// Peer event logs: see peer_log.h.
#include "harness/bench/peer_log.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string_view>

namespace locklab {

namespace {

constexpr size_t kMaxLogLines = 20'000'000;  // a limit on every loop

Status LogFail(size_t line, const std::string& msg) {
  return Status::Invalid("event log line " + std::to_string(line) + ": " + msg);
}

}  // namespace

Status ParsePeerEventLog(const std::string& text, PeerLog* out) {
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    if (++line_no > kMaxLogLines) return LogFail(line_no, "too many lines");
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return LogFail(line_no, "not a JSON object");
    if (!j.contains("t_us") || !j["t_us"].is_number_integer()) return LogFail(line_no, "no integer t_us");
    if (!j.contains("client") || !j["client"].is_number_integer()) return LogFail(line_no, "no integer client");
    if (!j.contains("ev") || !j["ev"].is_string()) return LogFail(line_no, "no event name (ev)");
    const int64_t t = j["t_us"].get<int64_t>();
    const int64_t client64 = j["client"].get<int64_t>();
    if (client64 < 0 || client64 > 1'000'000) return LogFail(line_no, "client out of range");
    const int client = static_cast<int>(client64);
    const std::string ev = j["ev"].get<std::string>();
    std::string detail;
    if (j.contains("error") && j["error"].is_string()) detail = j["error"].get<std::string>();
    auto add = [&](Ev type, int64_t value = 0) { out->events.push_back(Event{t, client, type, value, detail}); };
    auto number = [&](const char* field, int64_t* v) {
      if (!j.contains(field)) return false;
      if (!j[field].is_number_integer()) return false;
      *v = j[field].get<int64_t>();
      return true;
    };
    if (ev == "acquire_start") {
      if (j.contains("key")) {
        if (!j["key"].is_string()) return LogFail(line_no, "key is not a string");
        out->key_of_client[client] = j["key"].get<std::string>();
      }
      add(Ev::kAcquireStart);
    } else if (ev == "acquire_ok") {
      add(Ev::kAcquireOk);
    } else if (ev == "acquire_fail") {
      add(Ev::kAcquireFail);
    } else if (ev == "enter") {
      add(Ev::kEnter, -1);
      int64_t v = 0;
      if (j.contains("read") && !number("read", &v)) return LogFail(line_no, "read is not an integer");
      if (j.contains("read")) add(Ev::kRead, v);
    } else if (ev == "exit") {
      int64_t v = 0;
      if (j.contains("wrote") && !number("wrote", &v)) return LogFail(line_no, "wrote is not an integer");
      if (j.contains("wrote")) add(Ev::kWriteOk, v);
      add(Ev::kExit);
      add(Ev::kReleaseStart);
    } else if (ev == "release_ok") {
      add(Ev::kReleaseOk);
    } else if (ev == "release_fail") {
      add(Ev::kReleaseFail);
    } else if (ev == "crash") {
      add(Ev::kCrash);
    } else if (ev == "pause_start") {
      int64_t v = 0;
      number("duration_us", &v);
      add(Ev::kPauseStart, v);
    } else if (ev == "pause_end") {
      add(Ev::kPauseEnd);
    } else {
      return LogFail(line_no, "unknown event '" + ev + "'");
    }
  }
  return Status::Ok();
}

int64_t ShiftToEarliest(std::vector<Event>* events) {
  std::stable_sort(events->begin(), events->end(), [](const Event& a, const Event& b) { return a.t_us < b.t_us; });
  if (events->empty()) return 0;
  const int64_t earliest_us = events->front().t_us;
  for (Event& e : *events) e.t_us -= earliest_us;
  return earliest_us;
}

}  // namespace locklab
