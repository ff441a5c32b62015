// History: what happened in one run, in true time (the simulator's global clock, or the real
// runtime's process-wide monotonic clock). Operations are data; checkers (checkers.h) are
// functions of the history.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace locklab {

enum class Ev : uint8_t {
  kAcquireStart,    // a request starts trying to acquire (value: request number)
  kAcquireOk,       // value: attempts used
  kAcquireFail,     // gave up (deadline or policy): value: attempts used
  kAcquireUnknown,  // gave up, last attempt timed out (may hold the lock without knowing it)
  kEnter,           // enters its critical section (now a holder); value: fencing token or -1
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

struct Event {
  int64_t t_us = 0;
  int client = -1;  // -1: not a client (node faults)
  Ev type = Ev::kFault;
  int64_t value = 0;
  std::string detail;
};

class History {
 public:
  explicit History(size_t max_events = 4'000'000) : max_events_(max_events) {}

  // Appends; events must come in non-decreasing t_us (runtimes produce them in that order).
  // Past max_events, kCommand events are dropped (commands_dropped() counts them); other
  // events are always kept, because the checkers need every one of them.
  void Add(int64_t t_us, int client, Ev type, int64_t value = 0, std::string detail = {});

  const std::vector<Event>& events() const { return events_; }
  // Hands the events over (the history is empty afterwards).
  std::vector<Event> TakeEvents() { return std::move(events_); }
  int64_t commands_dropped() const { return commands_dropped_; }

 private:
  size_t max_events_;
  int64_t commands_dropped_ = 0;
  std::vector<Event> events_;
};

}  // namespace locklab
