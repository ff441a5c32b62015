// A peer driver's event log (harness/bench/peers/node_peer.js, py_peer.py) as locklab Events, so
// that the checkers judge the peers exactly as they judge locklab's own runs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "algorithms/status.h"
#include "sim/history.h"

namespace locklab {

// A driver's event log: one JSON object a line, {"t_us": N, "client": N, "ev": NAME, ...} with
// NAME one of acquire_start, acquire_ok, acquire_fail, enter, exit, release_ok, release_fail,
// crash (and pause_start / pause_end, which the bench adds itself). Optional fields: "key" (on
// acquire_start: the lock's key), "read" (on enter: the counter value read), "wrote" (on exit: the
// value written), "error". Mapping to History events: enter -> kEnter then kRead; exit -> kWriteOk,
// kExit, kReleaseStart (the drivers release right after leaving); crash -> kCrash.
struct PeerLog {
  std::vector<Event> events;                 // in the log's clock (raw CLOCK_MONOTONIC µs), log order
  std::map<int, std::string> key_of_client;  // the last "key" each client named
};

// Appends the log in `text` (at most 20 million lines) to *out. Blank lines are skipped. Invalid,
// naming the line, on a malformed line, an unknown event name or a missing field; *out then holds
// the events of the lines before it.
Status ParsePeerEventLog(const std::string& text, PeerLog* out);

// Events in time order (stable: same-time events keep their order), every time shifted so that
// the earliest event is at 0. Returns the shift (the earliest t_us; 0 for no events).
int64_t ShiftToEarliest(std::vector<Event>* events);

}  // namespace locklab
