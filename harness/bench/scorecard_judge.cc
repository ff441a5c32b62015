// Judging one scorecard trial: see scorecard_judge.h.
#include "harness/bench/scorecard_judge.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/check/checkers.h"
#include "harness/run/jepsen_history.h"

namespace locklab::scorecard {
namespace {

constexpr int64_t kMaxLines = 1'000'000;

struct Line {
  int64_t time_ns;
  size_t order;
  std::string text;
};

Status AddLines(const std::string& text, std::vector<Line>* out) {
  std::istringstream in(text);
  std::string line;
  for (int64_t i = 0; i < kMaxLines && std::getline(in, line); ++i) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("time") || !j["time"].is_number_integer())
      return Status::Invalid("history line without an integer time: " + line.substr(0, 120));
    out->push_back(Line{j["time"].get<int64_t>(), out->size(), line});
  }
  return Status::Ok();
}

// A learned-it-lost event: A's release failed, A crashed, or a driver's notification.
void NoteLearned(int64_t t_us, const std::string& how, int64_t fault_start_us, TrialOutcome* o) {
  if (o->learned && o->learned_ms >= 0 && static_cast<double>(t_us - fault_start_us) / 1000.0 >= o->learned_ms) return;
  o->learned = true;
  o->learned_ms = std::max(0.0, static_cast<double>(t_us - fault_start_us) / 1000.0);
  o->learned_how = how;
}

// What happened to A and B, from the judged events.
void ReadClients(const std::vector<Event>& events, int64_t fault_start_us, TrialOutcome* o) {
  int64_t a_release_end = -1, b_acquired_at = -1;
  for (const Event& e : events) {
    if (e.client == 1 && e.type == Ev::kAcquireOk && b_acquired_at < 0) b_acquired_at = e.t_us;
    if (e.client != 0) continue;
    if (e.type == Ev::kReleaseOk) o->a_release = "ok";
    if (e.type == Ev::kReleaseUnknown) o->a_release = "unknown";
    if (e.type == Ev::kReleaseOk || e.type == Ev::kReleaseFail || e.type == Ev::kReleaseUnknown)
      a_release_end = e.t_us;
    if (e.type == Ev::kReleaseFail) {
      o->a_release = "failed";
      NoteLearned(e.t_us, "release failed", fault_start_us, o);
    }
    if (e.type == Ev::kCrash)
      NoteLearned(e.t_us, "process died" + (e.detail.empty() ? std::string() : ": " + e.detail.substr(0, 80)),
                  fault_start_us, o);
  }
  o->b_acquired = b_acquired_at >= 0;
  o->b_after_known = b_acquired_at >= 0 && a_release_end >= 0;
  if (o->b_after_known)
    o->b_after_a_release_ms = static_cast<double>(b_acquired_at - a_release_end) / 1000.0;
}

}  // namespace

Result<std::string> MergeHistories(const std::vector<std::string>& texts, const std::vector<std::string>& extra_lines) {
  std::vector<Line> lines;
  for (const std::string& t : texts) LOCKLAB_RETURN_IF_ERROR(AddLines(t, &lines));
  std::string extra;
  for (const std::string& l : extra_lines) extra += l + "\n";
  LOCKLAB_RETURN_IF_ERROR(AddLines(extra, &lines));
  std::stable_sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) { return a.time_ns < b.time_ns; });
  std::string out;
  for (const Line& l : lines) out += l.text + "\n";
  return out;
}

std::string NemesisLine(int64_t t_us, const std::string& f, const std::string& value) {
  const nlohmann::ordered_json j = {{"time", t_us * 1000}, {"process", "nemesis"}, {"type", "info"}, {"f", f},
                                    {"value", value}};
  return j.dump();
}

Result<TrialOutcome> JudgeTrial(const std::string& history, int64_t fault_start_us, const std::vector<Learned>& learned) {
  Result<RecordedHistory> h = ParseJepsenHistory(history);
  if (!h.ok()) return h.status();
  History judged;
  for (const Event& e : h->events) judged.Add(e.t_us, e.client, e.type, e.value, e.detail);
  const CheckResult c = CheckAll(judged, h->input);
  TrialOutcome o;
  o.ran = true;
  o.violations = c.safety.violations;
  o.overlap_ms = c.safety.overlap_ms_total;
  o.lost_updates = c.resource.lost_updates;
  o.stale_writes_accepted = c.resource.stale_writes_accepted;
  ReadClients(h->events, fault_start_us, &o);
  for (const Learned& l : learned)
    if (l.client == 0) NoteLearned(l.t_us, l.how, fault_start_us, &o);
  return o;
}

}  // namespace locklab::scorecard
