#include "harness/explore/shrink.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace locklab {
namespace {

using K = FaultAction::Kind;

// A predicate that counts its calls and refuses every candidate once the runs are spent.
struct Counted {
  const StillFails& fails;
  ShrinkStats* stats;
  int64_t max_tries;
  bool Spent() const {
    stats->out_of_tries = stats->out_of_tries || stats->tries + stats->point_runs >= max_tries;
    return stats->out_of_tries;
  }
  bool operator()(const Candidate& c) const {
    if (Spent()) return false;
    ++stats->tries;
    const bool f = fails(c);
    if (f) ++stats->kept;
    return f;
  }
};

// Each alternative in turn put into a copy of `base` by `place(&copy, alternative)`; the first
// copy that still fails becomes *cur (the shape of every move round below).
template <typename Place>
bool FirstStillFailing(Candidate* cur, const Candidate& base, const std::vector<FaultAction>& alternatives,
                       const Counted& fails, Place place) {
  for (const FaultAction& g : alternatives) {
    Candidate next = base;
    place(&next, g);
    if (!fails(next)) continue;
    *cur = std::move(next);
    return true;
  }
  return false;
}

// Each pair of faults (i < j) tried as one (Merges); the merged fault takes i's place.
bool MergePairs(Candidate* cur, const Counted& fails, const MoveLimits& limits) {
  bool changed = false;
  for (size_t i = 0; i < cur->faults.size(); ++i) {
    for (size_t j = i + 1; j < cur->faults.size();) {
      const bool merged = FirstStillFailing(cur, *cur, Merges(cur->faults[i], cur->faults[j], limits), fails,
                                            [&](Candidate* next, const FaultAction& g) {
                                              next->faults[i] = g;
                                              next->faults.erase(next->faults.begin() + static_cast<long>(j));
                                            });
      if (!merged) {
        ++j;
        continue;
      }
      changed = true;  // j now names the next fault
      ++fails.stats->merged;
    }
  }
  return changed;
}

// `base` (a schedule without `dropped`) as it is when `try_base`, then with each of its faults
// moved (Moves), with the protocol points of base's run; the first that fails becomes *cur.
bool TryMoves(Candidate* cur, const Candidate& base, bool try_base, const FaultAction& dropped, const Counted& fails,
              const PointsOf& points_of, const MoveLimits& limits) {
  if (try_base && fails(base)) {
    *cur = base;
    return true;
  }
  std::vector<ProtocolPoint> points;
  if (points_of && !fails.Spent()) {
    ++fails.stats->point_runs;
    points = points_of(base);
  }
  auto in_place = [](size_t j) { return [j](Candidate* next, const FaultAction& g) { next->faults[j] = g; }; };
  for (size_t j = 0; j < base.faults.size(); ++j)
    if (FirstStillFailing(cur, base, Moves(base.faults[j], dropped, points, limits), fails, in_place(j))) return true;
  for (size_t j = 0; j < base.faults.size(); ++j)  // then: pauses poised on a command's window
    if (FirstStillFailing(cur, base, Alignments(base.faults[j], points, limits), fails, in_place(j))) return true;
  // Last: a pause made longer (Stretches) so that the window comes into its run, then aligned on
  // that run's commands.
  for (size_t j = 0; j < base.faults.size() && points_of; ++j) {
    for (const FaultAction& longer : Stretches(base.faults[j], dropped, limits)) {
      if (fails.Spent()) return false;
      Candidate stretched = base;
      stretched.faults[j] = longer;
      ++fails.stats->point_runs;
      if (FirstStillFailing(cur, base, Alignments(longer, points_of(stretched), limits), fails, in_place(j)))
        return true;
    }
  }
  return false;
}

// Each fault dropped while another one moves. With `longer_holds`, each client's critical
// section is also raised to the longest the space draws (limits.hold_max_ms) while the fault
// goes: a pause that only lengthened a hold is then the hold itself, inside the space.
bool DropWithMove(Candidate* cur, const Counted& fails, const PointsOf& points_of, const MoveLimits& limits,
                  bool longer_holds) {
  bool changed = false;
  for (size_t i = 0; i < cur->faults.size() && cur->faults.size() > 1;) {
    const FaultAction dropped = cur->faults[i];
    Candidate base = *cur;
    base.faults.erase(base.faults.begin() + static_cast<long>(i));
    bool moved = false;
    if (!longer_holds) {
      moved = TryMoves(cur, base, false, dropped, fails, points_of, limits);
    } else {
      for (size_t c = 0; c < base.clients.size() && !moved; ++c) {
        if (base.clients[c].hold_ms >= limits.hold_max_ms) continue;
        Candidate longer = base;
        longer.clients[c].hold_ms = limits.hold_max_ms;
        moved = TryMoves(cur, longer, true, dropped, fails, points_of, limits);
      }
    }
    if (moved) {
      changed = true;
      ++fails.stats->moved;
    } else {
      ++i;  // else i now names the next fault
    }
  }
  return changed;
}

// A timed client pause that begins before its client has started holds the client back and
// nothing else: the client starting when the pause ends, without the pause.
bool PausesBeforeStart(Candidate* cur, const Counted& fails) {
  bool changed = false;
  for (size_t i = 0; i < cur->faults.size();) {
    const FaultAction& f = cur->faults[i];
    const int t = f.target;
    const bool before = f.kind == FaultAction::Kind::kPauseClient && f.on_send.empty() && t >= 0 &&
                        t < static_cast<int>(cur->clients.size()) &&
                        f.at_us <= cur->clients[static_cast<size_t>(t)].start_ms * 1000 &&
                        f.at_us + f.duration_us > cur->clients[static_cast<size_t>(t)].start_ms * 1000;
    if (before) {
      Candidate next = *cur;
      next.clients[static_cast<size_t>(t)].start_ms = (f.at_us + f.duration_us) / 1000;
      next.faults.erase(next.faults.begin() + static_cast<long>(i));
      if (fails(next)) {
        *cur = std::move(next);
        changed = true;
        ++fails.stats->started_later;
        continue;  // i now names the next fault
      }
    }
    ++i;
  }
  return changed;
}

bool SimplerKinds(Candidate* cur, const Counted& fails, const MoveLimits& limits) {
  bool changed = false;
  for (size_t i = 0; i < cur->faults.size(); ++i) {
    if (!FirstStillFailing(cur, *cur, Simpler(cur->faults[i], limits), fails,
                           [i](Candidate* next, const FaultAction& g) { next->faults[i] = g; }))
      continue;
    changed = true;
    ++fails.stats->simplified;
  }
  return changed;
}

// Delta debugging over n items: tries removing chunks of n/2, n/4, ..., 1 (each chunk from the
// front); `without(cur, i, len)` is cur without items [i, i + len); `size(cur)` its item count.
template <typename Without, typename Size>
bool DropChunks(Candidate* cur, const Counted& fails, Without without, Size size) {
  bool changed = false;
  for (size_t chunk = std::max<size_t>(1, size(*cur) / 2);; chunk /= 2) {
    for (size_t i = 0; i + chunk <= size(*cur);) {
      Candidate next = without(*cur, i, chunk);
      if (fails(next)) {
        *cur = std::move(next);
        changed = true;
      } else {
        i += chunk;
      }
    }
    if (chunk <= 1) break;
  }
  return changed;
}

// The smallest value in [lo, hi] for which fails(set(v)) holds, given that it holds at hi.
template <typename Set>
int64_t SearchDown(int64_t lo, int64_t hi, const Counted& fails, Set set) {
  if (lo >= hi) return hi;
  if (fails(set(lo))) return lo;
  while (hi - lo > 1) {  // fails(hi), !fails(lo)
    const int64_t mid = lo + (hi - lo) / 2;
    if (fails(set(mid)))
      hi = mid;
    else
      lo = mid;
  }
  return hi;
}

bool ShrinkMagnitudes(Candidate* cur, const Counted& fails) {
  bool changed = false;
  for (size_t i = 0; i < cur->faults.size(); ++i) {
    const int64_t m = MagnitudeMs(cur->faults[i]);
    if (m <= 0) continue;
    const int64_t best = SearchDown(0, m, fails, [&](int64_t v) {
      Candidate next = *cur;
      SetMagnitudeMs(&next.faults[i], v);
      return next;
    });
    if (best != m) {
      SetMagnitudeMs(&cur->faults[i], best);
      changed = true;
    }
  }
  return changed;
}

bool ShrinkRequests(Candidate* cur, const Counted& fails) {
  bool changed = false;
  for (size_t c = 0; c < cur->clients.size(); ++c) {
    const int64_t r = cur->clients[c].requests;
    const int64_t best = SearchDown(1, r, fails, [&](int64_t v) {
      Candidate next = *cur;
      next.clients[c].requests = v;
      return next;
    });
    if (best != r) {
      cur->clients[c].requests = best;
      changed = true;
    }
  }
  return changed;
}

void AddMargins(Candidate* cur, const Counted& fails, double margin) {
  if (margin <= 0) return;
  for (size_t i = 0; i < cur->faults.size(); ++i) {
    const int64_t m = MagnitudeMs(cur->faults[i]);
    if (m < 0) continue;
    Candidate next = *cur;
    SetMagnitudeMs(&next.faults[i],
                   m + std::max<int64_t>(kMarginFloorMs, std::llround(margin * static_cast<double>(m))));
    if (fails(next)) *cur = std::move(next);
  }
}

// The pause-free neighbours of a timed client pause: its client's last command at or before the
// pause and its first one after, in a run of the schedule without that pause (-1: none).
std::pair<int64_t, int64_t> QuietTime(const Candidate& without, const FaultAction& f, const Counted& fails,
                                      const PointsOf& points_of) {
  ++fails.stats->point_runs;
  int64_t last_us = -1, next_us = -1;
  for (const ProtocolPoint& p : points_of(without)) {
    if (p.client != f.target) continue;
    if (p.t_us <= f.at_us) last_us = std::max(last_us, p.t_us);
    if (p.t_us > f.at_us && (next_us < 0 || p.t_us < next_us)) next_us = p.t_us;
  }
  return {last_us, next_us};
}

// A timed client pause that begins less than kPoisedUs after a command of its client, or before
// its next one: moved into the middle of that quiet time, else kCenterOffsetsMs after its start
// or before its end, to the first place that still fails.
void CenterPoisedPauses(Candidate* cur, const Counted& fails, const PointsOf& points_of) {
  if (!points_of) return;
  for (size_t i = 0; i < cur->faults.size(); ++i) {
    const FaultAction f = cur->faults[i];
    if (f.kind != K::kPauseClient || !f.on_send.empty() || f.jitter_us > 0 || fails.Spent()) continue;
    Candidate without = *cur;
    without.faults.erase(without.faults.begin() + static_cast<long>(i));
    const auto [last_us, next_us] = QuietTime(without, f, fails, points_of);
    if (last_us < 0) continue;  // before its client's first command: PausesBeforeStart's case
    const bool poised = f.at_us - last_us < kPoisedUs || (next_us >= 0 && next_us - f.at_us < kPoisedUs);
    if (!poised) continue;
    std::vector<int64_t> places;
    if (next_us >= 0) places.push_back(last_us + (next_us - last_us) / 2);
    for (int64_t ms : kCenterOffsetsMs) places.push_back(last_us + ms * 1000);
    if (next_us >= 0)
      for (int64_t ms : kCenterOffsetsMs) places.push_back(next_us - ms * 1000);
    for (int64_t at_us : places) {
      const bool inside = at_us - last_us >= kPoisedUs && (next_us < 0 || next_us - at_us >= kPoisedUs);
      if (!inside || at_us == f.at_us) continue;
      Candidate next = *cur;
      next.faults[i].at_us = at_us;
      if (!fails(next)) continue;
      *cur = std::move(next);
      ++fails.stats->centered;
      break;
    }
  }
}

}  // namespace

int64_t MagnitudeMs(const FaultAction& f) {
  switch (f.kind) {
    case K::kPauseClient:
    case K::kPauseNode:
    case K::kPartition:
    case K::kFailover:
    case K::kDelayMessage: return f.duration_us / 1000;
    case K::kClientClockJump:
    case K::kNodeClockJump: return std::llabs(f.delta_us) / 1000;
    default: return -1;
  }
}

void SetMagnitudeMs(FaultAction* f, int64_t ms) {
  if (f->kind == K::kClientClockJump || f->kind == K::kNodeClockJump)
    f->delta_us = (f->delta_us < 0 ? -ms : ms) * 1000;
  else if (MagnitudeMs(*f) >= 0)
    f->duration_us = ms * 1000;
}

Candidate WithoutClient(const Candidate& c, int client) {
  Candidate out;
  for (size_t i = 0; i < c.clients.size(); ++i)
    if (static_cast<int>(i) != client) out.clients.push_back(c.clients[i]);
  for (FaultAction f : c.faults) {
    if (TargetsClient(f.kind)) {
      if (f.target == client) continue;
      if (f.target > client) --f.target;
    }
    out.faults.push_back(f);
  }
  return out;
}

Candidate Shrink(const Candidate& start, const StillFails& fails, double margin, ShrinkStats* stats) {
  ShrinkOptions o;
  o.margin = margin;
  return Shrink(start, fails, o, stats);
}

namespace {

// Removal and lowering only (the shrinker before moves and merges): faults, magnitudes, clients,
// requests. True when it changed something.
bool ClassicRound(Candidate* cur, const Counted& counted) {
  auto fault_count = [](const Candidate& c) { return c.faults.size(); };
  auto without_faults = [](const Candidate& c, size_t i, size_t len) {
    Candidate next = c;
    next.faults.erase(next.faults.begin() + static_cast<long>(i), next.faults.begin() + static_cast<long>(i + len));
    return next;
  };
  auto client_count = [](const Candidate& c) { return c.clients.size() > 1 ? c.clients.size() : 0; };
  auto without_clients = [](const Candidate& c, size_t i, size_t len) {
    Candidate next = c;
    for (size_t k = 0; k < len && next.clients.size() > 1; ++k) next = WithoutClient(next, static_cast<int>(i));
    return next;
  };
  bool changed = DropChunks(cur, counted, without_faults, fault_count);
  changed = ShrinkMagnitudes(cur, counted) || changed;
  changed = DropChunks(cur, counted, without_clients, client_count) || changed;
  changed = ShrinkRequests(cur, counted) || changed;
  return changed;
}

// Removal and lowering with moves and merges between them.
bool MoveRound(Candidate* cur, const Counted& counted, const ShrinkOptions& options) {
  MoveLimits limits = options.limits;
  auto fault_count = [](const Candidate& c) { return c.faults.size(); };
  auto without_faults = [](const Candidate& c, size_t i, size_t len) {
    Candidate next = c;
    next.faults.erase(next.faults.begin() + static_cast<long>(i), next.faults.begin() + static_cast<long>(i + len));
    return next;
  };
  bool changed = DropChunks(cur, counted, without_faults, fault_count);
  limits.clients = static_cast<int>(cur->clients.size());
  changed = PausesBeforeStart(cur, counted) || changed;
  changed = MergePairs(cur, counted, limits) || changed;
  changed = DropWithMove(cur, counted, options.points, limits, false) || changed;
  changed = DropWithMove(cur, counted, options.points, limits, true) || changed;
  changed = SimplerKinds(cur, counted, limits) || changed;
  changed = ClassicRound(cur, counted) || changed;
  return changed;
}

}  // namespace

Candidate Shrink(const Candidate& start, const StillFails& fails, const ShrinkOptions& options, ShrinkStats* stats) {
  const Counted counted{fails, stats, options.max_tries};
  Candidate cur = start;
  for (int round = 0; round < kMaxShrinkRounds; ++round)
    if (!ClassicRound(&cur, counted)) break;
  if (cur.faults.size() > 1) {  // moves and merges, kept only when they end with fewer faults
    const ShrinkStats before = *stats;
    Candidate moved = start;  // from the finding again: moves work best before magnitudes are lowered
    for (int round = 0; round < kMaxShrinkRounds; ++round)
      if (!MoveRound(&moved, counted, options)) break;
    if (moved.faults.size() < cur.faults.size()) {
      cur = std::move(moved);
    } else {  // what the move phase did is not in the result
      stats->merged = before.merged;
      stats->moved = before.moved;
      stats->simplified = before.simplified;
      stats->started_later = before.started_later;
    }
  }
  AddMargins(&cur, counted, options.margin);
  CenterPoisedPauses(&cur, counted, options.points);
  return cur;
}

}  // namespace locklab
