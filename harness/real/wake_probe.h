// How late a sleeping thread wakes on this machine right now: a drift indicator recorded next to
// real runs (validate, study, a real report's machine_after), so that two sessions' real figures
// can be told apart by the machine's state. The simulator's client.wake_after_idle is measured
// through the real runtime's event loop (`locklab calibrate`), which adds its own pass; this
// probe is the bare timer, with the thread's default timer slack (50 µs), which the runtime's
// timerfd timers lack: it reads about 30-50 µs above what they see (README, "The report").
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace locklab {

struct WakeLateness {
  int sleep_us = 0;      // how long each sleep asked for
  int n = 0;             // sleeps made
  double median_us = 0;  // how late past its deadline a sleep ended
  double p90_us = 0;
};

// `n` sleeps (clock_nanosleep on CLOCK_MONOTONIC, absolute deadlines) of each of 1 and 5 ms, in
// turn. About n x 6 ms of wall time and next to no CPU: it may run beside timing-sensitive work.
// n from 1 to 1000.
std::vector<WakeLateness> ProbeWakeLateness(int n = 20);

// [{"sleep_us", "n", "median_us", "p90_us"}, ...], µs to 0.1.
nlohmann::ordered_json WakeLatenessJson(const std::vector<WakeLateness>& rows);
// "1 ms sleeps woke 58 µs late (median; p90 71), 5 ms 60 (p90 80)"; "" for no rows.
std::string WakeLatenessText(const std::vector<WakeLateness>& rows);

// The machine now, as a real-Redis report's context.machine_after records it right after its
// runs (run, suite, scenario): {"load_average": LoadAverageText(), "wake_late_us": the probe's
// rows}. Takes about 0.12 s.
nlohmann::ordered_json MachineNowJson();

}  // namespace locklab
