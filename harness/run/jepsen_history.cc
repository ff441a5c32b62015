// Jepsen-style history files: see jepsen_history.h.
#include "harness/run/jepsen_history.h"

#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

namespace locklab {
namespace {

using nlohmann::json;

constexpr int kNemesis = -1;

Status LineFail(int64_t line, const std::string& msg) {
  return Status::Invalid("line " + std::to_string(line) + ": " + msg);
}

bool IsOperation(const std::string& f) { return f == "acquire" || f == "release" || f == "read" || f == "write"; }

// locklab's own events (always type "info"), by name.
bool ExtensionEvent(const std::string& f, Ev* out) {
  static const std::map<std::string, Ev> kByName = {{"crash", Ev::kCrash},     {"pause", Ev::kPauseStart},
                                                     {"resume", Ev::kPauseEnd}, {"order", Ev::kOrder},
                                                     {"command", Ev::kCommand}, {"fault", Ev::kFault}};
  auto it = kByName.find(f);
  if (it == kByName.end()) return false;
  *out = it->second;
  return true;
}

// A read's or write's value: N, or {"counter": N, "token": T} (either key optional), or null.
struct Value {
  bool has_counter = false;
  int64_t counter = 0;
  int64_t token = -1;
};

// An acquire's or release's value that is not a number (a random lock token, a lease id) says
// nothing the checkers use and is accepted as no fencing token.
Status ParseValue(const json& j, int64_t line, Value* out, bool lock_op) {
  if (j.is_null()) return Status::Ok();
  if (lock_op && !j.is_number_integer() && !j.is_object()) return Status::Ok();
  if (j.is_number_integer()) {
    out->has_counter = true;
    out->counter = j.get<int64_t>();
    return Status::Ok();
  }
  if (!j.is_object()) return LineFail(line, "value must be an integer, {\"counter\": N, \"token\": T} or null");
  for (const auto& [k, v] : j.items()) {
    if (k != "counter" && k != "token") return LineFail(line, "value has an unknown key '" + k + "'");
    if (!v.is_number_integer()) return LineFail(line, "value's " + k + " is not an integer");
  }
  if (j.contains("counter")) {
    out->has_counter = true;
    out->counter = j["counter"].get<int64_t>();
  }
  if (j.contains("token")) out->token = j["token"].get<int64_t>();
  return Status::Ok();
}

// The parser's state between lines.
class Reader {
 public:
  Status Line(const json& j, int64_t line);
  Result<RecordedHistory> Finish();

 private:
  struct Open {
    std::string f;
    int64_t line = 0;
  };
  Status ClientOp(const json& j, int64_t line, int client, int64_t t_us, const std::string& type,
                  const std::string& f);
  Status Completion(const json& j, int64_t line, int client, int64_t t_us, const std::string& type,
                    const std::string& f);
  Status NemesisOp(const json& j, int64_t line, int64_t t_us, const std::string& type, const std::string& f);
  Status Extension(const json& j, int64_t line, int client, int64_t t_us, Ev ev);
  void Add(int64_t t_us, int client, Ev type, int64_t value = 0, std::string detail = {}) {
    out_.events.push_back(Event{t_us, client, type, value, std::move(detail)});
  }

  RecordedHistory out_;
  int64_t last_ns_ = 0;
  int64_t end_us_ = 0;
  int64_t next_request_ = 0;
  std::unordered_map<int, Open> open_;  // each process's invoked, not yet completed operation
  std::map<int, std::pair<std::string, int64_t>> lock_;  // process -> its lock and the line naming it
  std::set<int> processes_;
};

std::string DetailOf(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

Status Reader::Line(const json& j, int64_t line) {
  if (!j.is_object()) return LineFail(line, "not a JSON object");
  if (!j.contains("time") || !j["time"].is_number_integer()) return LineFail(line, "no integer time (ns)");
  const int64_t ns = j["time"].get<int64_t>();
  if (ns < 0) return LineFail(line, "time is negative");
  if (ns < last_ns_)
    return LineFail(line, "time goes backwards (" + std::to_string(ns) + " < " + std::to_string(last_ns_) + ")");
  last_ns_ = ns;
  const int64_t t_us = ns / 1000;
  if (!j.contains("type") || !j["type"].is_string()) return LineFail(line, "no type");
  const std::string type = j["type"].get<std::string>();
  if (type != "invoke" && type != "ok" && type != "fail" && type != "info")
    return LineFail(line, "type '" + type + "' is not invoke, ok, fail or info");
  if (!j.contains("f") || !j["f"].is_string()) return LineFail(line, "no f");
  const std::string f = j["f"].get<std::string>();
  if (!j.contains("process")) return LineFail(line, "no process");
  const json& p = j["process"];
  if (p.is_string() && p.get<std::string>() == "nemesis") return NemesisOp(j, line, t_us, type, f);
  if (!p.is_number_integer() || p.get<int64_t>() < 0 || p.get<int64_t>() > kMaxProcess)
    return LineFail(line, "process must be an integer from 0 to " + std::to_string(kMaxProcess) + " or \"nemesis\"");
  const int client = static_cast<int>(p.get<int64_t>());
  processes_.insert(client);
  if (j.contains("lock")) {
    if (!j["lock"].is_string()) return LineFail(line, "lock is not a string");
    const std::string name = j["lock"].get<std::string>();
    auto [it, fresh] = lock_.emplace(client, std::make_pair(name, line));
    if (!fresh && it->second.first != name)
      return LineFail(line, "process " + std::to_string(client) + " names lock '" + name + "' but named '" +
                                it->second.first + "' on line " + std::to_string(it->second.second) +
                                " (one lock per process)");
  }
  if (IsOperation(f)) return ClientOp(j, line, client, t_us, type, f);
  Ev ev{};
  if (!ExtensionEvent(f, &ev))
    return LineFail(line, "f '" + f + "' is not acquire, release, read, write (or crash, pause, resume, order, "
                                      "command, fault)");
  if (type != "info") return LineFail(line, "a " + f + " is an info line");
  return Extension(j, line, client, t_us, ev);
}

Status Reader::Extension(const json& j, int64_t line, int client, int64_t t_us, Ev ev) {
  int64_t value = 0;
  if (j.contains("value") && !j["value"].is_null()) {
    if (!j["value"].is_number_integer()) return LineFail(line, "value of a " + j["f"].get<std::string>() + " is not an integer");
    value = j["value"].get<int64_t>();
  }
  if (j.contains("detail") && !j["detail"].is_string()) return LineFail(line, "detail is not a string");
  if (ev == Ev::kCrash && client != kNemesis) open_.erase(client);  // a crash ends its open operation
  Add(t_us, client, ev, value, DetailOf(j, "detail"));
  return Status::Ok();
}

Status Reader::NemesisOp(const json& j, int64_t line, int64_t t_us, const std::string& type, const std::string& f) {
  if (type == "invoke") return Status::Ok();  // Jepsen's nemesis announces, then reports with info
  if (type != "info") return LineFail(line, "a nemesis line is invoke or info");
  if (f == "end") {
    end_us_ = t_us;
    return Status::Ok();
  }
  Ev ev{};
  if (ExtensionEvent(f, &ev) && (ev == Ev::kFault || ev == Ev::kCommand)) return Extension(j, line, kNemesis, t_us, ev);
  // Another tool's nemesis (kill, partition, ...): a fault, named by its f and value.
  std::string detail = f;
  if (j.contains("value") && !j["value"].is_null())
    detail += " " + (j["value"].is_string() ? j["value"].get<std::string>() : j["value"].dump());
  Add(t_us, kNemesis, Ev::kFault, 0, detail);
  return Status::Ok();
}

Status Reader::ClientOp(const json& j, int64_t line, int client, int64_t t_us, const std::string& type,
                        const std::string& f) {
  if (j.contains("error") && !j["error"].is_string()) return LineFail(line, "error is not a string");
  if (j.contains("attempts") && !j["attempts"].is_number_integer()) return LineFail(line, "attempts is not an integer");
  if (type != "invoke") return Completion(j, line, client, t_us, type, f);
  if (auto it = open_.find(client); it != open_.end())
    return LineFail(line, "process " + std::to_string(client) + " invokes " + f + " while its " + it->second.f +
                              " (line " + std::to_string(it->second.line) + ") is open");
  Value v;
  if (j.contains("value")) LOCKLAB_RETURN_IF_ERROR(ParseValue(j["value"], line, &v, f == "acquire" || f == "release"));
  open_[client] = Open{f, line};
  if (f == "acquire") Add(t_us, client, Ev::kAcquireStart, next_request_++);
  if (f == "release") {
    Add(t_us, client, Ev::kExit);
    Add(t_us, client, Ev::kReleaseStart);
  }
  return Status::Ok();
}

Status Reader::Completion(const json& j, int64_t line, int client, int64_t t_us, const std::string& type,
                          const std::string& f) {
  auto it = open_.find(client);
  if (it == open_.end() || it->second.f != f)
    return LineFail(line, "process " + std::to_string(client) + " completes a " + f + " it did not invoke");
  open_.erase(it);
  Value v;
  if (j.contains("value")) LOCKLAB_RETURN_IF_ERROR(ParseValue(j["value"], line, &v, f == "acquire" || f == "release"));
  const std::string error = DetailOf(j, "error");
  const int64_t attempts = j.contains("attempts") ? j["attempts"].get<int64_t>() : 1;
  if (f == "acquire") {
    if (type == "ok") {
      Add(t_us, client, Ev::kAcquireOk, attempts, error);
      // the value is the fencing token; "mode": "read" makes it a reader's (shared) hold
      const bool read = j.contains("mode") && j["mode"].is_string() && j["mode"].get<std::string>() == "read";
      Add(t_us, client, Ev::kEnter, v.has_counter ? v.counter : v.token, read ? kReadHold : "");
    } else {
      Add(t_us, client, type == "fail" ? Ev::kAcquireFail : Ev::kAcquireUnknown, attempts, error);
    }
  } else if (f == "release") {
    Add(t_us, client, type == "ok" ? Ev::kReleaseOk : type == "fail" ? Ev::kReleaseFail : Ev::kReleaseUnknown, 0,
        error);
  } else if (type == "ok") {
    if (!v.has_counter) return LineFail(line, "an ok " + f + " needs the counter value");
    Add(t_us, client, f == "read" ? Ev::kRead : Ev::kWriteOk, v.counter, error);
  } else if (type == "fail") {
    Add(t_us, client, f == "read" ? Ev::kReadRejected : Ev::kWriteRejected, v.token, error);
  }  // a read or write with an unknown outcome is not counted
  return Status::Ok();
}

Result<RecordedHistory> Reader::Finish() {
  bool have_read = false, have_write = false, orders = false;
  int64_t first_read = 0, last_write = 0;
  for (const Event& e : out_.events) {
    if (e.type == Ev::kRead && !have_read) {
      have_read = true;
      first_read = e.value;
    }
    if (e.type == Ev::kWriteOk) {
      have_write = true;
      last_write = e.value;
    }
    orders = orders || e.type == Ev::kOrder;
  }
  CheckInput& in = out_.input;
  const int64_t initial = have_read ? first_read : 0;
  const int64_t final_value = have_write ? last_write : initial;
  in.end_us = std::max(end_us_, out_.events.empty() ? 0 : out_.events.back().t_us);
  if (orders) {
    in.stock_initial = initial;
    out_.stock_final = final_value;
  } else {
    in.counter_initial = initial;
    in.counter_final = final_value;
    out_.counter_final = final_value;
  }
  for (const auto& [client, named] : lock_) in.lock_of_client[client] = named.first;
  out_.processes = static_cast<int>(processes_.size());
  return std::move(out_);
}

// ---------------------------------------------------------------------------------------------
// Writing (keys in Jepsen's order: time, process, type, f, value)

using ojson = nlohmann::ordered_json;

// For each event, the index of the same client's next event (events.size(): none).
std::vector<size_t> NextOfSameClient(const std::vector<Event>& events) {
  std::vector<size_t> next(events.size(), events.size());
  std::unordered_map<int, size_t> later;
  for (size_t i = events.size(); i-- > 0;) {
    auto it = later.find(events[i].client);
    if (it != later.end()) next[i] = it->second;
    later[events[i].client] = i;
  }
  return next;
}

ojson Op(const Event& e, const char* type, const char* f) {
  ojson j = {{"time", e.t_us * 1000}, {"process", e.client}, {"type", type}, {"f", f}, {"value", nullptr}};
  if (e.client < 0) j["process"] = "nemesis";
  return j;
}

const char* ExtensionName(Ev e) {
  switch (e) {
    case Ev::kCrash: return "crash";
    case Ev::kPauseStart: return "pause";
    case Ev::kPauseEnd: return "resume";
    case Ev::kOrder: return "order";
    case Ev::kCommand: return "command";
    default: return "fault";
  }
}

class Writer {
 public:
  Writer(const std::vector<Event>& events, const std::map<int, std::string>& locks)
      : ev_(events), next_(NextOfSameClient(events)), skip_(events.size(), false), locks_(locks) {}
  std::string Text(int64_t end_us);

 private:
  void Emit(ojson j, const Event& e, bool with_error = true) {
    if (with_error && !e.detail.empty()) j["error"] = e.detail;
    text_ += j.dump();
    text_ += '\n';
  }
  // The same client's next event when it has type `t` (and marks it written), or nullptr.
  const Event* Take(size_t i, Ev t) {
    const size_t n = next_[i];
    if (n >= ev_.size() || ev_[n].type != t) return nullptr;
    skip_[n] = true;
    return &ev_[n];
  }
  void One(size_t i);

  const std::vector<Event>& ev_;
  std::vector<size_t> next_;
  std::vector<bool> skip_;
  const std::map<int, std::string>& locks_;
  std::string text_;
};

void Writer::One(size_t i) {
  const Event& e = ev_[i];
  const char* completion = e.type == Ev::kAcquireOk || e.type == Ev::kReleaseOk  ? "ok"
                           : e.type == Ev::kAcquireFail || e.type == Ev::kReleaseFail ? "fail"
                                                                                      : "info";
  switch (e.type) {
    case Ev::kAcquireStart: {
      ojson j = Op(e, "invoke", "acquire");
      if (auto it = locks_.find(e.client); it != locks_.end()) j["lock"] = it->second;
      return Emit(j, e);
    }
    case Ev::kAcquireOk:
    case Ev::kEnter: {
      const Event* enter = e.type == Ev::kEnter ? &e : Take(i, Ev::kEnter);
      ojson j = Op(e, "ok", "acquire");
      if (enter != nullptr && enter->value >= 0) j["value"] = enter->value;
      if (enter != nullptr && enter->detail == kReadHold) j["mode"] = "read";
      if (e.type == Ev::kAcquireOk) j["attempts"] = e.value;
      return Emit(j, e);
    }
    case Ev::kAcquireFail:
    case Ev::kAcquireUnknown: {
      ojson j = Op(e, completion, "acquire");
      j["attempts"] = e.value;
      return Emit(j, e);
    }
    case Ev::kExit:
    case Ev::kReleaseStart:
      if (e.type == Ev::kExit) Take(i, Ev::kReleaseStart);
      return Emit(Op(e, "invoke", "release"), e);
    case Ev::kReleaseOk:
    case Ev::kReleaseFail:
    case Ev::kReleaseUnknown:
      return Emit(Op(e, completion, "release"), e);
    case Ev::kRead:
    case Ev::kReadRejected:
    case Ev::kWriteOk:
    case Ev::kWriteRejected: {
      const bool read = e.type == Ev::kRead || e.type == Ev::kReadRejected;
      const bool ok = e.type == Ev::kRead || e.type == Ev::kWriteOk;
      const char* f = read ? "read" : "write";
      ojson done = Op(e, ok ? "ok" : "fail", f);
      done["value"] = ok ? ojson(e.value) : ojson{{"token", e.value}};
      ojson invoke = Op(e, "invoke", f);
      if (!read) invoke["value"] = done["value"];
      Emit(invoke, e, false);
      return Emit(done, e);
    }
    default: {  // locklab's own events
      ojson j = Op(e, "info", ExtensionName(e.type));
      j["value"] = e.value;
      if (!e.detail.empty()) j["detail"] = e.detail;
      return Emit(j, e, false);
    }
  }
}

std::string Writer::Text(int64_t end_us) {
  for (size_t i = 0; i < ev_.size(); ++i)
    if (!skip_[i]) One(i);
  const int64_t last_us = ev_.empty() ? 0 : ev_.back().t_us;
  text_ += ojson{{"time", std::max(end_us, last_us) * 1000}, {"process", "nemesis"}, {"type", "info"}, {"f", "end"}}
               .dump();
  text_ += '\n';
  return std::move(text_);
}

}  // namespace

Result<RecordedHistory> ParseJepsenHistory(std::string_view text) {
  Reader reader;
  int64_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    if (++line_no > kMaxHistoryLines) return LineFail(line_no, "too many lines");
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    if (line.empty()) continue;
    const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return LineFail(line_no, "not JSON");
    LOCKLAB_RETURN_IF_ERROR(reader.Line(j, line_no));
  }
  Result<RecordedHistory> r = reader.Finish();
  if (r.ok()) r->lines = line_no;
  return r;
}

std::string JepsenHistoryText(const std::vector<Event>& events, int64_t end_us,
                              const std::map<int, std::string>& lock_of_client) {
  return Writer(events, lock_of_client).Text(end_us);
}

}  // namespace locklab
