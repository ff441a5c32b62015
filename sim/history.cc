#include "sim/history.h"

namespace locklab {

const char* EvName(Ev e) {
  switch (e) {
    case Ev::kAcquireStart: return "acquire_start";
    case Ev::kAcquireOk: return "acquire_ok";
    case Ev::kAcquireFail: return "acquire_fail";
    case Ev::kAcquireUnknown: return "acquire_unknown";
    case Ev::kEnter: return "enter";
    case Ev::kExit: return "exit";
    case Ev::kReleaseStart: return "release_start";
    case Ev::kReleaseOk: return "release_ok";
    case Ev::kReleaseFail: return "release_fail";
    case Ev::kReleaseUnknown: return "release_unknown";
    case Ev::kRead: return "read";
    case Ev::kWriteOk: return "write_ok";
    case Ev::kWriteRejected: return "write_rejected";
    case Ev::kReadRejected: return "read_rejected";
    case Ev::kOrder: return "order";
    case Ev::kCommand: return "command";
    case Ev::kPauseStart: return "pause_start";
    case Ev::kPauseEnd: return "pause_end";
    case Ev::kCrash: return "crash";
    case Ev::kFault: return "fault";
  }
  return "?";
}

void History::Add(int64_t t_us, int client, Ev type, int64_t value, std::string detail) {
  if (type == Ev::kCommand ? !KeepCommand() : (dropped_ & EvBit(type)) != 0) return;
  events_.push_back(Event{t_us, client, type, value, std::move(detail)});
}

bool History::KeepCommand() {
  if ((dropped_ & EvBit(Ev::kCommand)) != 0) return false;
  if (size() >= max_events_) {
    ++commands_dropped_;
    return false;
  }
  if (commands_kept_ >= keep_at_most_) {
    ++commands_counted_;
    return false;
  }
  ++commands_kept_;
  return true;
}

Event History::Detailed(const Event& e) const {
  Event out = e;
  if (e.text > 0 && e.text <= text_ends_.size()) {
    const uint64_t end = text_ends_[e.text - 1];
    const uint64_t begin = e.text > 1 ? text_ends_[e.text - 2] : 0;
    if (record_text_ != nullptr) {
      record_text_(std::string_view(texts_).substr(begin, end - begin), &out.detail);
    } else {
      out.detail.assign(texts_, begin, end - begin);
    }
    out.text = 0;
  }
  return out;
}

const std::vector<Event>& History::events() const {
  if (!text_ends_.empty()) {
    for (Event& e : events_)
      if (e.text > 0) e = Detailed(e);
    texts_.clear();
    text_ends_.clear();
  }
  return events_;
}

std::vector<Event> History::TakeEvents() {
  events();  // the texts into the details
  return std::move(events_);
}

}  // namespace locklab
