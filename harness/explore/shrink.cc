#include "harness/explore/shrink.h"

#include <algorithm>
#include <cmath>

namespace locklab {
namespace {

using K = FaultAction::Kind;

// A predicate that counts its calls.
struct Counted {
  const StillFails& fails;
  ShrinkStats* stats;
  bool operator()(const Candidate& c) const {
    ++stats->tries;
    const bool f = fails(c);
    if (f) ++stats->kept;
    return f;
  }
};

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
  const Counted counted{fails, stats};
  Candidate cur = start;
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
  for (int round = 0; round < kMaxShrinkRounds; ++round) {
    bool changed = DropChunks(&cur, counted, without_faults, fault_count);
    changed = ShrinkMagnitudes(&cur, counted) || changed;
    changed = DropChunks(&cur, counted, without_clients, client_count) || changed;
    changed = ShrinkRequests(&cur, counted) || changed;
    if (!changed) break;
  }
  AddMargins(&cur, counted, margin);
  return cur;
}

}  // namespace locklab
