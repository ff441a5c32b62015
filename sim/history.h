// History: what happened in one run, in true time (the simulator's global clock, or the real
// runtime's process-wide monotonic clock). Operations are data; checkers (checkers.h) are
// functions of the history.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace locklab {

enum class Ev : uint8_t {
  kAcquireStart,    // a request starts trying to acquire (value: request number)
  kAcquireOk,       // value: attempts used
  kAcquireFail,     // gave up (deadline or policy): value: attempts used
  kAcquireUnknown,  // gave up, last attempt timed out (may hold the lock without knowing it)
  kEnter,           // enters its critical section (now a holder); value: fencing token or -1;
                    // detail kReadHold for a reader (a shared hold), "" otherwise
  kExit,            // leaves its critical section
  kReleaseStart,
  kReleaseOk,
  kReleaseFail,     // the lock was no longer this client's
  kReleaseUnknown,  // release timed out
  kRead,            // read the protected resource; value: what it read
  kWriteOk,         // the resource accepted a write; value: what was written
  kWriteRejected,   // the resource rejected a stale fencing token; value: the token
  kReadRejected,    // the resource refused a read with a stale fencing token; value: the token
  kOrder,           // seckill: an order was recorded; value: stock left after it
  kCommand,         // a Redis command executed at a node: detail "SET k v NX PX 1000 -> OK"; value: node
  kPauseStart,      // fault: the client's process froze (value: planned duration, µs)
  kPauseEnd,
  kCrash,           // fault: the client's process died
  kFault,           // any other fault (node crash, clock jump, failover...): detail says what
};
const char* EvName(Ev e);
// The detail of a reader's kEnter: readers may hold together; a writer may hold with no one.
inline constexpr char kReadHold[] = "read";

struct Event {
  int64_t t_us = 0;
  int client = -1;  // -1: not a client (node faults)
  Ev type = Ev::kFault;
  int64_t value = 0;
  std::string detail;
  // A command recorded by History::AddCommand keeps its text in the history's buffer, not in
  // `detail`: 1 + its number there (0: none). History::Detailed fills `detail` from it.
  uint32_t text = 0;
};

class History {
 public:
  explicit History(size_t max_events = 4'000'000) : max_events_(max_events) {}

  // Appends; events must come in non-decreasing t_us (runtimes produce them in that order).
  // Past max_events, kCommand events are dropped (commands_dropped() counts them); other
  // events are always kept, because the checkers need every one of them.
  void Add(int64_t t_us, int client, Ev type, int64_t value = 0, std::string detail = {});
  // Adds a kCommand event (value: node) whose detail `write` appends to the string it is given
  // (or a record of it, set_record_text): the texts of all commands share one buffer (no
  // allocation per command); Detailed() and TakeEvents() give them back as the events' `detail`.
  // Dropped like Add's commands.
  template <typename WriteText>
  void AddCommand(int64_t t_us, int client, int64_t node, WriteText&& write) {
    if (!KeepCommand()) return;
    write(&texts_);
    text_ends_.push_back(texts_.size());
    events_.push_back(Event{t_us, client, Ev::kCommand, node, {}, static_cast<uint32_t>(text_ends_.size())});
  }
  // `e` with its detail filled in when its text is in this history's buffer.
  Event Detailed(const Event& e) const;
  // How AddCommand's bytes become a command's detail: null (the default) when `write` writes the
  // text itself; else `write` writes a record and this appends the record's text to `out` when a
  // detail is read (Detailed, events(), TakeEvents()), so that a run pays only for the texts it
  // reads (most read none). Set it before the first AddCommand.
  using RecordText = void (*)(std::string_view record, std::string* out);
  void set_record_text(RecordText text) { record_text_ = text; }

  // Events of the types in `mask` (a bit per Ev, EvBit) are not recorded from now on: a run that
  // needs no timeline keeps only what its checkers read (RunSpec::trace).
  void set_dropped(uint32_t mask) { dropped_ = mask; }
  static constexpr uint32_t EvBit(Ev e) { return 1u << static_cast<unsigned>(e); }

  // Every event, each detail filled in (commands' texts are copied out of the buffer the first
  // time: readers that need no command text use recorded()).
  const std::vector<Event>& events() const;
  // The events as recorded: a command added by AddCommand has its text in the buffer, not in
  // `detail` (Detailed(e) gives it). For the checkers, which read no command text.
  const std::vector<Event>& recorded() const { return events_; }
  // Hands the events over, every detail filled in (the history is empty afterwards).
  std::vector<Event> TakeEvents();
  int64_t commands_dropped() const { return commands_dropped_; }

  // Commands past the first `kept` are counted, not kept (no text, no event): for a run whose
  // timelines nobody reads unless its checkers find an overlap. A short run keeps all its commands
  // and needs nothing more; a long one is only counted past `kept` (RunOne then runs it again in
  // full, if it has an overlap). The checkers read no command, so their figures are the same;
  // size() and the cap count the commands as if kept. 0: every command is only counted.
  void set_commands_kept_at_most(size_t kept) { keep_at_most_ = kept; }
  // Commands counted past set_commands_kept_at_most's limit: 0 when every command is kept (or
  // dropped by the cap or by set_dropped, as in a full history).
  int64_t commands_counted() const { return commands_counted_; }
  // The events a full history would hold: recorded() plus the commands only counted.
  size_t size() const { return events_.size() + static_cast<size_t>(commands_counted_); }

 private:
  size_t max_events_;
  // False (and counted) when a command must be dropped: the history is full, or commands are not
  // kept (set_dropped).
  bool KeepCommand();

  int64_t commands_dropped_ = 0;
  int64_t commands_counted_ = 0;  // past keep_at_most_: commands that would have been kept
  size_t keep_at_most_ = SIZE_MAX;
  size_t commands_kept_ = 0;
  uint32_t dropped_ = 0;
  RecordText record_text_ = nullptr;
  // Mutable: events() moves the commands' texts into their details on first use.
  mutable std::vector<Event> events_;
  mutable std::string texts_;                // AddCommand's texts, one after another
  mutable std::vector<uint64_t> text_ends_;  // where each text ends in texts_
};

}  // namespace locklab
