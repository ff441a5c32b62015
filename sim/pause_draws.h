// A client's drawn stop-the-world pauses, each drawn when a run reaches it: the same times, and
// the same stream left for the next client, as drawing them all before the run.
//
// A run's GC pauses are a Poisson process per client, drawn from one stream client after client
// up to the run's time limit (600 s by default): hundreds per client, of which a run that ends
// after a few seconds reaches a handful, and each gap costs a log1p. DrawPauses counts them and
// moves the stream past them with a multiply per draw (the product of the 1 - u draws bounds the
// sum of the gaps; where a bound is too close to the time limit to call, it draws them the plain
// way); PauseDraws::Next then draws each gap as the plain loop (PauseTimes) does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/rng.h"

namespace locklab::sim {

// What PauseTimes below gives, drawn one at a time.
struct PauseDraws {
  Rng rng{0};               // where the first pause's gap is drawn
  double mean_gap_us = 0;   // the mean of the exponential gaps between pauses
  int64_t duration_us = 0;  // each pause's length: the next gap starts at its end
  size_t count = 0;         // the pauses in all
  int64_t end_us = 0;       // the end of the last pause drawn (0 before the first)

  // The next pause's start: call at most `count` times.
  int64_t Next() {
    end_us += static_cast<int64_t>(rng.Exponential(mean_gap_us));
    const int64_t at = end_us;
    end_us += duration_us;
    return at;
  }
};

// The plain loop: from t = 0, t += the whole µs of an Exponential(mean_gap_us) draw; stop when t
// >= horizon_us, else a pause starts at t and t += duration_us; at most max_count pauses. The
// pauses' starts, and *rng moved past every draw the loop made (one more than the pauses when
// the horizon stopped it).
std::vector<int64_t> PauseTimes(Rng* rng, double mean_gap_us, int64_t duration_us, int64_t horizon_us,
                                size_t max_count);

// PauseTimes' pauses to be drawn one at a time (PauseDraws::Next gives them in order), and *rng
// where PauseTimes leaves it. duration_us >= 0.
PauseDraws DrawPauses(Rng* rng, double mean_gap_us, int64_t duration_us, int64_t horizon_us, size_t max_count);

}  // namespace locklab::sim
