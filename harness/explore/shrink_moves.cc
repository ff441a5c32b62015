#include "harness/explore/shrink_moves.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "harness/explore/shrink.h"
#include "harness/run/config.h"

namespace locklab {
namespace {

using K = FaultAction::Kind;

// Fired by a trigger (on_send, or the message a delay is put on) rather than at a time.
bool Triggered(const FaultAction& f) { return f.kind == K::kDelayMessage || !f.on_send.empty(); }
bool TakesOnSend(K k) { return k == K::kPauseClient || k == K::kCrashClient; }
bool HasDuration(K k) {
  return k == K::kPauseClient || k == K::kPauseNode || k == K::kPartition || k == K::kFailover ||
         k == K::kDelayMessage;
}
bool IsJump(K k) { return k == K::kClientClockJump || k == K::kNodeClockJump; }

int64_t MaxMs(const MoveLimits& l, K k) { return l.max_magnitude_ms ? l.max_magnitude_ms(k) : 0; }
// The longest magnitude f may take (never below its own), and f's and `dropped`'s added, up to
// that: what a fault that is to do the dropped one's work as well is first tried with.
int64_t LongestMs(const FaultAction& f, const MoveLimits& l) { return std::max(MagnitudeMs(f), MaxMs(l, f.kind)); }
int64_t SumMs(const FaultAction& f, const FaultAction& dropped, const MoveLimits& l) {
  return std::min(LongestMs(f, l), MagnitudeMs(f) + std::max<int64_t>(0, MagnitudeMs(dropped)));
}

// A bounded, duplicate-free list of replacements for `original` (SameFault: equal steps; kept as
// their text in a set, one serialization per fault instead of one per pair).
class Out {
 public:
  Out(const FaultAction& original, size_t limit) : limit_(limit) { seen_.insert(ToJson(original).dump()); }
  void Add(const FaultAction& g) {
    if (list_.size() >= limit_ || !seen_.insert(ToJson(g).dump()).second) return;
    list_.push_back(g);
  }
  std::vector<FaultAction> Take() { return std::move(list_); }

 private:
  size_t limit_;
  std::set<std::string> seen_;
  std::vector<FaultAction> list_;
};

// `g` placed where `d` fires (its time, or its trigger where g's kind takes one); false when
// g's kind cannot fire there.
bool PlaceAt(FaultAction* g, const FaultAction& d) {
  if (TargetsClient(g->kind) != TargetsClient(d.kind)) return false;
  g->target = d.target;
  if (g->kind == K::kPartition && d.kind == K::kPartition) g->node = d.node;
  const std::string trigger = d.kind == K::kDelayMessage ? d.command : d.on_send;
  if (trigger.empty()) {  // d is timed
    if (g->kind == K::kDelayMessage) return false;
    g->on_send.clear();
    g->occurrence = 1;
    g->at_us = d.at_us;
    return true;
  }
  if (g->kind == K::kDelayMessage) {
    g->command = trigger;
  } else if (TakesOnSend(g->kind)) {
    g->on_send = trigger;
    g->at_us = 0;
  } else {
    return false;
  }
  g->occurrence = d.occurrence;
  return true;
}

// The places (magnitude untouched) f may move to, in the order they are tried.
std::vector<FaultAction> Places(const FaultAction& f, const FaultAction& dropped, const std::vector<ProtocolPoint>& points,
                                const MoveLimits& l) {
  std::vector<FaultAction> out;
  if (FaultAction g = f; PlaceAt(&g, dropped)) out.push_back(g);
  const bool on_client = TargetsClient(f.kind);
  const int targets = f.kind == K::kFailover ? 1 : on_client ? l.clients : l.nodes;
  for (int t = 0; t < targets; ++t) {
    FaultAction g = f;
    g.target = t;
    out.push_back(g);
  }
  // Right after each command of the fault's client (and of the dropped fault's client), or on its node.
  std::vector<int> whose = {f.target};
  if (on_client && TargetsClient(dropped.kind) && dropped.target != f.target) whose.push_back(dropped.target);
  for (int who : whose) {
    std::set<std::pair<std::string, int>> seen;
    for (const ProtocolPoint& p : points) {
      if (seen.size() >= kMaxMovePoints) break;
      const bool mine = on_client ? p.client == who : p.node == (f.kind == K::kFailover ? 0 : who);
      if (!mine || (f.kind == K::kPartition && p.node != f.node)) continue;
      if (!seen.insert({p.command, p.occurrence}).second) continue;
      FaultAction g = f;
      g.target = who;
      if (TakesOnSend(g.kind)) {
        g.on_send = p.command;
        g.occurrence = p.occurrence;
        g.at_us = 0;
      } else if (g.kind == K::kDelayMessage) {
        g.command = p.command;
        g.occurrence = p.occurrence;
      } else {
        g.at_us = p.next_whole_ms_us();
      }
      out.push_back(g);
    }
  }
  if (!Triggered(f) && !Triggered(dropped)) {  // times between the two faults'
    for (int k = 1; k < kMoveTimeGrid; ++k) {
      FaultAction g = f;
      g.at_us = (f.at_us + (dropped.at_us - f.at_us) * k / kMoveTimeGrid) / 1000 * 1000;
      out.push_back(g);
    }
  }
  return out;
}

}  // namespace

bool SameFault(const FaultAction& a, const FaultAction& b) { return ToJson(a) == ToJson(b); }

std::vector<FaultAction> Merges(const FaultAction& a, const FaultAction& b, const MoveLimits& l) {
  Out out(a, kMaxMovesPerFault);
  if (a.kind != b.kind || a.target != b.target || (a.kind == K::kPartition && a.node != b.node)) return out.Take();
  if (HasDuration(a.kind)) {
    if (!Triggered(a) && !Triggered(b)) {
      FaultAction g = a;
      g.at_us = std::min(a.at_us, b.at_us);
      g.duration_us = std::max(a.at_us + a.duration_us, b.at_us + b.duration_us) - g.at_us;
      out.Add(g);
    }
    for (const FaultAction* anchor : {&a, &b}) {
      FaultAction g = *anchor;
      g.duration_us = a.duration_us + b.duration_us;
      out.Add(g);
      if (const int64_t hi = MaxMs(l, a.kind); hi * 1000 > g.duration_us) {
        g.duration_us = hi * 1000;
        out.Add(g);
      }
    }
  } else if (IsJump(a.kind) && a.delta_us + b.delta_us != 0) {
    for (const FaultAction* anchor : {&a, &b}) {
      FaultAction g = *anchor;
      g.delta_us = a.delta_us + b.delta_us;
      out.Add(g);
    }
  }
  return out.Take();
}

std::vector<FaultAction> Moves(const FaultAction& f, const FaultAction& dropped, const std::vector<ProtocolPoint>& points,
                               const MoveLimits& l) {
  // Two passes over the places: first f's own magnitude, the dropped fault's, their sum and the
  // longest; then a grid of the longest (1/8 ... 7/8). Ascending within a pass.
  std::vector<std::vector<int64_t>> passes;
  if (const int64_t m = MagnitudeMs(f); m >= 0) {
    const int64_t hi = LongestMs(f, l);
    passes.push_back({m, std::max(m, MagnitudeMs(dropped)), SumMs(f, dropped, l), hi});
    std::vector<int64_t> grid;
    for (int k = 1; k < kMoveMagnitudeGrid; ++k) grid.push_back(hi * k / kMoveMagnitudeGrid);
    passes.push_back(grid);
    for (auto& p : passes) {
      std::sort(p.begin(), p.end());
      p.erase(std::unique(p.begin(), p.end()), p.end());
    }
  } else {
    passes.push_back({-1});  // no magnitude: the place alone
  }
  Out out(f, kMaxMovesPerFault);
  const std::vector<FaultAction> places = Places(f, dropped, points, l);
  for (const std::vector<int64_t>& mags : passes) {
    for (const FaultAction& place : places) {
      for (int64_t m : mags) {
        FaultAction g = place;
        if (m >= 0) SetMagnitudeMs(&g, m);
        out.Add(g);
      }
    }
  }
  return out.Take();
}

namespace {

// When pause f began in `points`' run: its time, or when its trigger command ran there (a few
// µs after it was sent: the span of offsets covers that); -1 when the trigger never fired.
int64_t BeginUs(const FaultAction& f, const std::vector<ProtocolPoint>& points) {
  if (f.on_send.empty()) return f.at_us;
  for (const ProtocolPoint& p : points)
    if (p.client == f.target && p.command == f.on_send && p.occurrence == f.occurrence) return p.t_us;
  return -1;
}

}  // namespace

std::vector<FaultAction> Alignments(const FaultAction& f, const std::vector<ProtocolPoint>& points,
                                    const MoveLimits& l) {
  Out out(f, kMaxAlignments);
  const int64_t begin_us = f.kind == K::kPauseClient ? BeginUs(f, points) : -1;
  if (begin_us < 0) return out.Take();
  // How long after the pause's end its client's next commands ran (0: the end itself): moving
  // the end moves them with it.
  std::vector<int64_t> lags = {0};
  for (const ProtocolPoint& p : points) {
    if (lags.size() > kAlignCommands) break;
    if (p.client == f.target && p.t_us >= begin_us + f.duration_us) lags.push_back(p.t_us - begin_us - f.duration_us);
  }
  const int64_t longest_us = std::max<int64_t>(f.duration_us, MaxMs(l, f.kind) * 1000);
  std::map<int, size_t> per_client;  // points taken of each other client
  for (const ProtocolPoint& p : points) {
    if (p.client == f.target || p.t_us <= begin_us || p.t_us - begin_us > longest_us + lags.back()) continue;
    if (++per_client[p.client] > kMaxMovePoints) continue;
    for (int64_t lag : lags) {
      for (int64_t d = -kAlignSpanUs; d <= kAlignSpanUs; d += kAlignStepUs) {
        const int64_t end_us = p.t_us + d - lag;
        if (end_us <= begin_us || end_us - begin_us > longest_us) continue;
        FaultAction g = f;
        g.duration_us = end_us - begin_us;
        out.Add(g);
      }
    }
  }
  return out.Take();
}

std::vector<FaultAction> Stretches(const FaultAction& f, const FaultAction& dropped, const MoveLimits& l) {
  if (f.kind != K::kPauseClient) return {};
  std::vector<FaultAction> out;
  for (const int64_t to : {SumMs(f, dropped, l), LongestMs(f, l)}) {
    if (to <= MagnitudeMs(f) || (!out.empty() && MagnitudeMs(out.back()) == to)) continue;
    FaultAction g = f;
    SetMagnitudeMs(&g, to);
    out.push_back(g);
  }
  return out;
}

std::vector<FaultAction> Simpler(const FaultAction& f, const MoveLimits& l) {
  K to;
  switch (f.kind) {
    case K::kPauseClient: to = K::kCrashClient; break;
    case K::kPauseNode: to = K::kCrashNode; break;
    default: return {};
  }
  if (std::find(l.kinds.begin(), l.kinds.end(), to) == l.kinds.end()) return {};
  FaultAction g = f;
  g.kind = to;
  g.duration_us = 0;
  g.delta_us = 0;
  return {g};
}

}  // namespace locklab
