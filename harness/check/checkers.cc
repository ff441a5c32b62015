#include "harness/check/checkers.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <numeric>
#include <unordered_set>

#include "harness/check/holds.h"

namespace locklab {
namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::min();
constexpr size_t kTimelineCap = 200;

double ToMs(int64_t us) { return static_cast<double>(us) / 1000.0; }

// Histories are appended in non-decreasing time, and every checker relies on it (grouping by
// instant, binary search for timelines). A history that breaks the rule is checked on a
// stably sorted copy rather than misjudged.
const std::vector<Event>& InTimeOrder(const History& h, std::vector<Event>& storage) {
  const auto& ev = h.recorded();  // the checkers read no command text (timelines: Detailed)
  auto by_time = [](const Event& a, const Event& b) { return a.t_us < b.t_us; };
  if (std::is_sorted(ev.begin(), ev.end(), by_time)) return ev;
  storage = ev;
  std::stable_sort(storage.begin(), storage.end(), by_time);
  return storage;
}

// A run cannot end before its last event, so an unset or early end_us is moved up to it;
// otherwise open holds and waits would get negative lengths.
int64_t EffectiveEnd(const std::vector<Event>& ev, const CheckInput& in) {
  return ev.empty() ? in.end_us : std::max(in.end_us, ev.back().t_us);
}

// The lock of every client as a small number: 0 is the shared lock "", the named locks follow in
// name order. Clients outside the history (and non-clients, -1) are on lock 0.
class LockMap {
 public:
  LockMap(const std::vector<Event>& ev, size_t slots, const CheckInput& in) : of_slot_(slots, 0), names_{""} {
    std::map<std::string, size_t> index;
    for (const auto& [client, name] : in.lock_of_client)
      if (!name.empty()) index.emplace(name, 0);
    for (auto& [name, i] : index) {
      i = names_.size();
      names_.push_back(name);
    }
    for (const auto& [client, name] : in.lock_of_client)
      if (client >= 0 && static_cast<size_t>(client) < of_slot_.size() && !name.empty())
        of_slot_[static_cast<size_t>(client)] = index[name];
    std::vector<bool> used(names_.size(), false);
    for (const Event& e : ev)
      if (e.client >= 0) used[of(e.client)] = true;
    used_ = static_cast<int>(std::count(used.begin(), used.end(), true));
  }
  size_t of(int client) const { return client < 0 ? 0 : of_slot_[static_cast<size_t>(client)]; }
  size_t size() const { return names_.size(); }
  const std::string& name(size_t lock) const { return names_[lock]; }
  // Locks that some client of the history uses.
  int used() const { return used_; }

 private:
  std::vector<size_t> of_slot_;
  std::vector<std::string> names_;
  int used_ = 0;
};

// What every checker reads first: the history's events in time order, how many client slots
// they need (ClientSlots) and the lock of each (LockMap). Each checker alone finds them; CheckAll
// once for all five.
// `read`: those of the events whose type a checker reads (EventsCheckersRead), in the same order:
// what a run traced with --trace none keeps, and the checkers' figures are the same in every trace
// mode (Trace.EveryModeGivesTheSameFigures), so every checker but mutual exclusion (whose
// examples' timelines show the commands) walks only these.
struct Ordered {
  Ordered(const History& h, const CheckInput& in)
      : ev(InTimeOrder(h, sorted)), slots(ClientSlots(ev)), locks(ev, slots, in), read(CheckersRead(ev)) {}
  Ordered(const Ordered&) = delete;  // ev may point into sorted
  Ordered& operator=(const Ordered&) = delete;

  std::vector<Event> sorted;  // a sorted copy, when the history is out of time order
  const std::vector<Event>& ev;
  const size_t slots;
  const LockMap locks;
  const std::vector<const Event*> read;

 private:
  static std::vector<const Event*> CheckersRead(const std::vector<Event>& ev) {
    const uint32_t mask = EventsCheckersRead();
    std::vector<const Event*> out;
    out.reserve(ev.size());
    for (const Event& e : ev)
      if ((mask & History::EvBit(e.type)) != 0) out.push_back(&e);
    return out;
  }
};

// ---------------------------------------------------------------------------------------------
// Mutual exclusion

// Order of boundaries at one instant: exits first (a handoff at the same instant is not an
// overlap), then enters, then zero-length holds, which are an enter and an exit in one and
// so overlap whoever holds across that instant.
enum class Edge : uint8_t { kExit = 0, kEnter = 1, kInstant = 2 };

struct Boundary {
  int64_t t_us;
  Edge edge;
  uint32_t hold;
};

std::vector<Boundary> SortedBoundaries(const std::vector<Hold>& holds) {
  std::vector<Boundary> b;
  b.reserve(holds.size() * 2);
  for (uint32_t i = 0; i < holds.size(); ++i) {
    const Hold& h = holds[i];
    if (h.exit_us == h.enter_us) {
      b.push_back({h.enter_us, Edge::kInstant, i});
    } else {
      b.push_back({h.enter_us, Edge::kEnter, i});
      b.push_back({h.exit_us, Edge::kExit, i});
    }
  }
  std::sort(b.begin(), b.end(), [](const Boundary& x, const Boundary& y) {
    if (x.t_us != y.t_us) return x.t_us < y.t_us;
    if (x.edge != y.edge) return x.edge < y.edge;
    return x.hold < y.hold;
  });
  return b;
}

// An overlap episode being recorded as an example (its timeline is cut afterwards).
struct Episode {
  int64_t start_us = 0;
  int64_t end_us = 0;
  int64_t earliest_acquire_us = 0;
  std::vector<int> clients;
};

// The set of current holds, with O(1) insert and erase, so that a run where many clients hold
// at once (no lock at all) stays linear.
class ActiveHolds {
 public:
  explicit ActiveHolds(size_t holds) : pos_(holds, -1) {}
  void Add(uint32_t h) {
    pos_[h] = static_cast<int>(list_.size());
    list_.push_back(h);
  }
  void Remove(uint32_t h) {
    int p = pos_[h];
    list_[static_cast<size_t>(p)] = list_.back();
    pos_[list_.back()] = p;
    list_.pop_back();
    pos_[h] = -1;
  }
  const std::vector<uint32_t>& list() const { return list_; }
  int size() const { return static_cast<int>(list_.size()); }

 private:
  std::vector<int> pos_;
  std::vector<uint32_t> list_;
};

class OverlapSweep {
 public:
  OverlapSweep(const std::vector<Hold>& holds, size_t client_slots, int max_examples, int allowed)
      : holds_(holds),
        active_(holds.size()),
        held_by_client_(client_slots, 0),
        max_examples_(std::max(0, max_examples)),
        allowed_(std::max(1, allowed)) {}

  void Run() {
    for (const Boundary& b : SortedBoundaries(holds_)) {
      switch (b.edge) {
        case Edge::kExit:
          Leave(b.t_us, b.hold);
          break;
        case Edge::kEnter:
          Join(b.t_us, b.hold);
          break;
        case Edge::kInstant:
          // A client already holding (its next hold starts this instant) does not overlap
          // itself.
          if (held_by_client_[static_cast<size_t>(holds_[b.hold].client)] == 0) {
            Join(b.t_us, b.hold);
            Leave(b.t_us, b.hold);
          }
          break;
      }
    }
  }

  SafetyResult& result() { return result_; }
  std::vector<Episode>& episodes() { return episodes_; }

  // Every pair of clients that held together, ascending.
  std::vector<std::pair<int, int>> Pairs() const {
    std::vector<std::pair<int, int>> out;
    out.reserve(pairs_.size());
    for (uint64_t key : pairs_) out.emplace_back(static_cast<int>(key >> 32), static_cast<int>(key & 0xffffffffu));
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  // Too many holders: a writer among more than `allowed_` (readers alone are never too many).
  bool TooMany() const { return TooManyHolders(active_.size(), writers_, allowed_); }

  void Join(int64_t t_us, uint32_t hold) {
    AccountUntil(t_us);
    const bool was = TooMany();
    const bool writer = !holds_[hold].read;
    active_.Add(hold);
    writers_ += writer ? 1 : 0;
    if (TooMany()) NotePairs(hold);  // this hold makes them (or keeps them) too many
    ++held_by_client_[static_cast<size_t>(holds_[hold].client)];
    int n = active_.size();
    result_.max_concurrent_holders = std::max(result_.max_concurrent_holders, n);
    if (!was && TooMany()) {
      ++result_.violations;
      recording_ = static_cast<int>(episodes_.size()) < max_examples_;
      if (recording_) {
        Episode ep;
        ep.start_us = t_us;
        ep.earliest_acquire_us = t_us;
        episodes_.push_back(ep);
        for (uint32_t h : active_.list()) Involve(h);
      }
    } else if (was && recording_) {
      Involve(hold);
    }
  }

  void Leave(int64_t t_us, uint32_t hold) {
    AccountUntil(t_us);
    const bool was = TooMany();
    active_.Remove(hold);
    writers_ -= holds_[hold].read ? 0 : 1;
    --held_by_client_[static_cast<size_t>(holds_[hold].client)];
    if (was && !TooMany() && recording_) {
      Episode& ep = episodes_.back();
      ep.end_us = t_us;
      std::sort(ep.clients.begin(), ep.clients.end());
      ep.clients.erase(std::unique(ep.clients.begin(), ep.clients.end()), ep.clients.end());
      recording_ = false;
    }
  }

  // The joining hold (already active) overlaps every other active hold (another client's: a
  // client holds at most once at a time), unless both are readers.
  void NotePairs(uint32_t hold) {
    const int c = holds_[hold].client;
    for (uint32_t other : active_.list()) {
      const int o = holds_[other].client;
      if (o == c || (holds_[hold].read && holds_[other].read)) continue;
      const uint64_t lo = static_cast<uint32_t>(std::min(c, o)), hi = static_cast<uint32_t>(std::max(c, o));
      pairs_.insert(lo << 32 | hi);
    }
  }

  void Involve(uint32_t hold) {
    Episode& ep = episodes_.back();
    ep.clients.push_back(holds_[hold].client);
    ep.earliest_acquire_us = std::min(ep.earliest_acquire_us, holds_[hold].acquire_start_us);
  }

  // Adds the time since the previous boundary when too many held through it.
  void AccountUntil(int64_t t_us) {
    if (TooMany()) result_.overlap_ms_total += ToMs(t_us - last_us_);
    last_us_ = t_us;
  }

  const std::vector<Hold>& holds_;
  ActiveHolds active_;
  std::vector<int> held_by_client_;  // open holds per client (at most one)
  int max_examples_;
  int allowed_;      // holders allowed at once
  int writers_ = 0;  // active holds that are not readers'
  SafetyResult result_;
  std::vector<Episode> episodes_;
  std::unordered_set<uint64_t> pairs_;  // client pairs as (low << 32 | high)
  bool recording_ = false;
  int64_t last_us_ = 0;
};

bool InTimeline(const Event& e, const std::vector<int>& clients) {
  if (e.client < 0) return e.type == Ev::kFault;
  return std::binary_search(clients.begin(), clients.end(), e.client);
}

// The involved clients' events (and node faults) in [from, ep.end_us]. When there are more
// than kTimelineCap, keeps the ones nearest in time to the overlap's start: a contiguous run,
// so the timeline stays in order.
std::vector<Event> Timeline(const History& h, const std::vector<Event>& ev, const Episode& ep, int64_t from_us) {
  auto lo = std::lower_bound(ev.begin(), ev.end(), from_us,
                             [](const Event& e, int64_t t) { return e.t_us < t; });
  auto hi = std::upper_bound(ev.begin(), ev.end(), ep.end_us,
                             [](int64_t t, const Event& e) { return t < e.t_us; });
  std::vector<size_t> picked;
  for (auto it = lo; it < hi; ++it) {
    if (InTimeline(*it, ep.clients)) picked.push_back(static_cast<size_t>(it - ev.begin()));
  }
  size_t first = 0, last = picked.size();  // [first, last) of picked to keep
  if (picked.size() > kTimelineCap) {
    // Grow a window outwards from the first event at or after the overlap start, taking on
    // each step the side nearer in time (the earlier one on ties: the lead-up explains more).
    size_t split = static_cast<size_t>(
        std::partition_point(picked.begin(), picked.end(),
                             [&](size_t i) { return ev[i].t_us < ep.start_us; }) -
        picked.begin());
    first = last = split;
    while (last - first < kTimelineCap) {
      bool can_left = first > 0, can_right = last < picked.size();
      if (can_left && can_right) {
        int64_t left_gap = ep.start_us - ev[picked[first - 1]].t_us;
        int64_t right_gap = ev[picked[last]].t_us - ep.start_us;
        if (left_gap <= right_gap) --first; else ++last;
      } else if (can_left) {
        --first;
      } else {
        ++last;
      }
    }
  }
  std::vector<Event> out;
  out.reserve(last - first);
  for (size_t k = first; k < last; ++k) out.push_back(h.Detailed(ev[picked[k]]));  // commands' texts too
  return out;
}

// ---------------------------------------------------------------------------------------------
// Liveness

// Tracks who waits and who holds; the state is judged after all events of an instant, so an
// instant where one request gives up and another starts does not cut a stretch in two.
class StuckTracker {
 public:
  explicit StuckTracker(size_t slots) : waiting_(slots, false), holding_(slots, false) {}

  void Apply(const Event& e) {
    if (e.client < 0) return;
    size_t c = static_cast<size_t>(e.client);
    switch (e.type) {
      case Ev::kAcquireStart: SetWaiting(c, true); break;
      case Ev::kAcquireOk:
      case Ev::kAcquireFail:
      case Ev::kAcquireUnknown: SetWaiting(c, false); break;
      case Ev::kEnter:
        SetHolding(c, true);
        entered_this_instant_ = true;  // someone got the lock, even if only for an instant
        break;
      case Ev::kExit: SetHolding(c, false); break;
      case Ev::kCrash:
        SetWaiting(c, false);
        SetHolding(c, false);
        break;
      default: break;
    }
  }

  void EndInstant(int64_t t_us) {
    bool stuck = waiters_ > 0 && holders_ == 0;
    if (stuck_since_us_ != kNever && (!stuck || entered_this_instant_)) {
      max_ms_ = std::max(max_ms_, ToMs(t_us - stuck_since_us_));
      stuck_since_us_ = kNever;
    }
    if (stuck && stuck_since_us_ == kNever) stuck_since_us_ = t_us;
    entered_this_instant_ = false;
  }

  double Finish(int64_t end_us) {
    if (stuck_since_us_ != kNever) max_ms_ = std::max(max_ms_, ToMs(end_us - stuck_since_us_));
    return max_ms_;
  }

 private:
  void SetWaiting(size_t c, bool on) {
    if (waiting_[c] != on) waiters_ += on ? 1 : -1;
    waiting_[c] = on;
  }
  void SetHolding(size_t c, bool on) {
    if (holding_[c] != on) holders_ += on ? 1 : -1;
    holding_[c] = on;
  }

  std::vector<bool> waiting_, holding_;
  int64_t waiters_ = 0, holders_ = 0;
  int64_t stuck_since_us_ = kNever;
  bool entered_this_instant_ = false;
  double max_ms_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Latency

struct ClientTimes {
  int64_t acquire_start_us = kNever;  // the open acquire attempt
  int64_t request_start_us = kNever;  // the open request (acquire through release)
  bool request_acquired = false;
  int64_t enter_us = kNever;
  int64_t release_start_us = kNever;
};

struct LatencySamples {
  std::vector<double> acquire, hold, release, request;

  void Apply(ClientTimes& c, const Event& e) {
    auto since = [&](int64_t& start_us, std::vector<double>& out) {
      if (start_us != kNever) out.push_back(ToMs(e.t_us - start_us));
      start_us = kNever;
    };
    switch (e.type) {
      case Ev::kAcquireStart:
        c.acquire_start_us = c.request_start_us = e.t_us;
        c.request_acquired = false;
        break;
      case Ev::kAcquireOk:
        since(c.acquire_start_us, acquire);
        c.request_acquired = c.request_start_us != kNever;
        break;
      case Ev::kAcquireFail:
      case Ev::kAcquireUnknown:
        // A request that gave up ends here; one that never acquired has no release to wait for.
        c.acquire_start_us = kNever;
        since(c.request_start_us, request);
        break;
      case Ev::kEnter: c.enter_us = e.t_us; break;
      case Ev::kExit: since(c.enter_us, hold); break;
      case Ev::kReleaseStart: c.release_start_us = e.t_us; break;
      case Ev::kReleaseOk:
      case Ev::kReleaseFail:
      case Ev::kReleaseUnknown:
        since(c.release_start_us, release);
        if (c.request_acquired) since(c.request_start_us, request);
        c.request_acquired = false;
        break;
      case Ev::kCrash:
        c = ClientTimes{};  // a dead client's open operations never finish
        break;
      default: break;
    }
  }
};

SafetyResult MutualExclusion(const History& h, const Ordered& o, const CheckInput& in) {
  const std::vector<Event>& ev = o.ev;
  const LockMap& locks = o.locks;
  std::vector<Hold> holds = CollectHolds(ev, EffectiveEnd(ev, in));
  // Each lock's holds, in the order collected; one sweep per lock.
  std::vector<std::vector<Hold>> by_lock(locks.size());
  if (locks.size() == 1) {
    by_lock[0] = std::move(holds);
  } else {
    for (const Hold& hold : holds) by_lock[locks.of(hold.client)].push_back(hold);
  }
  SafetyResult r;
  std::vector<std::pair<Episode, size_t>> episodes;  // with their lock
  for (size_t lock = 0; lock < by_lock.size(); ++lock) {
    if (by_lock[lock].empty()) continue;
    OverlapSweep sweep(by_lock[lock], o.slots, in.max_examples, in.holders_allowed);
    sweep.Run();
    const SafetyResult& s = sweep.result();
    r.violations += s.violations;
    r.overlap_ms_total += s.overlap_ms_total;
    r.max_concurrent_holders = std::max(r.max_concurrent_holders, s.max_concurrent_holders);
    for (const auto& pair : sweep.Pairs()) r.overlapping_pairs.push_back(pair);
    for (Episode& ep : sweep.episodes()) episodes.emplace_back(std::move(ep), lock);
  }
  std::sort(r.overlapping_pairs.begin(), r.overlapping_pairs.end());
  r.overlapping_pairs.erase(std::unique(r.overlapping_pairs.begin(), r.overlapping_pairs.end()),
                            r.overlapping_pairs.end());
  // The first examples by start over all locks (each lock kept its first max_examples).
  std::stable_sort(episodes.begin(), episodes.end(),
                   [](const auto& a, const auto& b) { return a.first.start_us < b.first.start_us; });
  episodes.resize(std::min(episodes.size(), static_cast<size_t>(std::max(0, in.max_examples))));
  for (const auto& [ep, lock] : episodes) {
    int64_t from_us =
        in.timeline_margin_us > 0 ? ep.start_us - in.timeline_margin_us : ep.earliest_acquire_us;
    r.examples.push_back(Violation{ep.start_us, ep.end_us, ep.clients, Timeline(h, ev, ep, from_us), locks.name(lock)});
  }
  return r;
}

ResourceResult Resource(const Ordered& o, const CheckInput& in) {
  const std::vector<const Event*>& ev = o.read;
  const LockMap& locks = o.locks;
  ResourceResult r;
  std::vector<int64_t> last_enter_us(o.slots, kNever);
  // The latest enter on the writer's lock by anyone is enough: an enter after the writer's own
  // latest enter cannot be the writer's, so the write is stale exactly when the latest enter is
  // later than its own. An enter with a fencing token below one the lock already gave out does
  // not count: that holder is the stale one (the resource refuses it), and a write by the holder
  // of the newer token is not made stale by it.
  std::vector<int64_t> latest_enter_us(locks.size(), kNever);
  std::vector<int64_t> top_fence(locks.size(), -1);
  std::vector<int64_t> last_fence(o.slots, -1);  // each client's token at its latest enter
  std::vector<int64_t> readers_inside(locks.size(), 0);  // rwlock: read holds open now, per lock
  std::vector<bool> reading(o.slots, false);
  int64_t negative_stock_orders = 0;

  for (size_t i = 0; i < ev.size();) {
    size_t j = i;
    while (j < ev.size() && ev[j]->t_us == ev[i]->t_us) ++j;
    // Enters of this instant first: an enter "at or before" a write counts even if logged
    // after it.
    // Readers leaving at this instant are gone before a write of it (a handoff, not a stale read).
    for (size_t k = i; k < j; ++k) {
      const Event& e = *ev[k];
      if (e.client < 0) continue;
      const auto c = static_cast<size_t>(e.client);
      const size_t lock = locks.of(e.client);
      if (e.type == Ev::kEnter) {
        last_enter_us[c] = e.t_us;
        last_fence[c] = e.value;
        if (e.detail == kReadHold && !reading[c]) {
          reading[c] = true;
          ++readers_inside[lock];
          ++r.read_holds;
        }
        if (e.value >= 0 && e.value < top_fence[lock]) continue;  // a stale token's holder
        top_fence[lock] = std::max(top_fence[lock], e.value);
        latest_enter_us[lock] = e.t_us;
      } else if ((e.type == Ev::kExit || e.type == Ev::kCrash) && reading[c]) {
        reading[c] = false;
        --readers_inside[lock];
      }
    }
    for (size_t k = i; k < j; ++k) {
      const Event& e = *ev[k];
      if (e.type == Ev::kOrder) {
        ++r.orders;
        if (e.value < 0) ++negative_stock_orders;
      } else if (e.type == Ev::kWriteRejected) {
        ++r.stale_writes_rejected;  // the resource refused a token older than one it saw
      } else if (e.type == Ev::kReadRejected) {
        ++r.stale_reads_rejected;
      } else if (e.type == Ev::kWriteOk) {
        ++r.writes_accepted;
        if (readers_inside[locks.of(e.client)] > 0) ++r.stale_reads;  // a reader is inside: it read old data
        // A write by a client that never entered counts as stale once anyone has entered.
        int64_t own_us = e.client < 0 ? kNever : last_enter_us[static_cast<size_t>(e.client)];
        const int64_t own_fence = e.client < 0 ? -1 : last_fence[static_cast<size_t>(e.client)];
        const size_t lock = locks.of(e.client);
        if (latest_enter_us[lock] > own_us || (own_fence >= 0 && own_fence < top_fence[lock]))
          ++r.stale_writes_accepted;
      }
    }
    i = j;
  }

  // Writes in the seckill workload are not counter increments, so the counter comparison
  // only means something when there are writes and no orders, and one lock guards the counter.
  if (r.writes_accepted > 0 && r.orders == 0 && locks.used() <= 1) {
    r.lost_updates = std::max<int64_t>(0, r.writes_accepted - (in.counter_final - in.counter_initial));
  }
  int64_t beyond_stock = in.stock_initial > 0 ? r.orders - in.stock_initial : 0;
  r.oversold = std::max<int64_t>({0, beyond_stock, negative_stock_orders});
  return r;
}

LivenessResult Liveness(const Ordered& o, const CheckInput& in) {
  const std::vector<const Event*>& ev = o.read;
  const LockMap& locks = o.locks;
  LivenessResult r;
  // One tracker per lock. Only the trackers an instant touched can change at its end.
  std::vector<StuckTracker> stuck(locks.size(), StuckTracker(o.slots));
  std::vector<bool> touched(locks.size(), false);
  std::vector<size_t> touched_list;
  for (size_t i = 0; i < ev.size(); ++i) {
    const Event& e = *ev[i];
    switch (e.type) {
      case Ev::kAcquireOk: ++r.acquired; break;
      case Ev::kAcquireFail: ++r.failed; break;
      case Ev::kAcquireUnknown: ++r.unknown; break;
      case Ev::kReleaseFail: ++r.releases_failed; break;
      case Ev::kReleaseUnknown: ++r.releases_unknown; break;
      default: break;
    }
    const size_t lock = locks.of(e.client);
    stuck[lock].Apply(e);
    if (!touched[lock]) touched_list.push_back(lock);
    touched[lock] = true;
    if (i + 1 < ev.size() && ev[i + 1]->t_us == e.t_us) continue;
    for (size_t l : touched_list) {
      stuck[l].EndInstant(e.t_us);
      touched[l] = false;
    }
    touched_list.clear();
  }
  for (StuckTracker& s : stuck) r.stuck_ms_max = std::max(r.stuck_ms_max, s.Finish(EffectiveEnd(o.ev, in)));
  return r;
}

LatencyResult Latency(const Ordered& o) {
  std::vector<ClientTimes> clients(o.slots);
  LatencySamples s;
  for (const Event* e : o.read) {
    if (e->client >= 0) s.Apply(clients[static_cast<size_t>(e->client)], *e);
  }
  LatencyResult r;
  r.acquire = Summarize(std::move(s.acquire));
  r.hold = Summarize(std::move(s.hold));
  r.release = Summarize(std::move(s.release));
  r.request = Summarize(std::move(s.request));
  return r;
}

FairnessResult Fairness(const Ordered& o, const CheckInput& in) {
  std::vector<int64_t> acquired(o.slots, 0);
  std::vector<int64_t> started_us(o.slots, kNever);
  std::vector<bool> active(o.slots, false);
  FairnessResult r;
  for (const Event* read : o.read) {
    const Event& e = *read;
    if (e.client < 0) continue;
    const size_t c = static_cast<size_t>(e.client);
    switch (e.type) {
      case Ev::kAcquireStart:
        started_us[c] = e.t_us;
        active[c] = true;
        break;
      case Ev::kAcquireOk:
      case Ev::kAcquireFail:
      case Ev::kAcquireUnknown:
        if (e.type == Ev::kAcquireOk) ++acquired[c];
        if (started_us[c] != kNever) r.max_wait_ms = std::max(r.max_wait_ms, ToMs(e.t_us - started_us[c]));
        started_us[c] = kNever;
        break;
      default: break;
    }
  }
  // A request still waiting when the run ended waited until the end.
  const int64_t end_us = EffectiveEnd(o.ev, in);
  for (int64_t s : started_us)
    if (s != kNever) r.max_wait_ms = std::max(r.max_wait_ms, ToMs(end_us - s));
  double sum = 0, sum_sq = 0;
  for (size_t c = 0; c < acquired.size(); ++c) {
    if (!active[c]) continue;
    ++r.clients;
    sum += static_cast<double>(acquired[c]);
    sum_sq += static_cast<double>(acquired[c]) * static_cast<double>(acquired[c]);
  }
  r.jain_index = sum_sq > 0 ? sum * sum / (static_cast<double>(r.clients) * sum_sq) : 0;
  return r;
}

}  // namespace

SafetyResult CheckMutualExclusion(const History& h, const CheckInput& in) {
  return MutualExclusion(h, Ordered(h, in), in);
}
ResourceResult CheckResource(const History& h, const CheckInput& in) { return Resource(Ordered(h, in), in); }
LivenessResult CheckLiveness(const History& h, const CheckInput& in) { return Liveness(Ordered(h, in), in); }
LatencyResult CheckLatency(const History& h, const CheckInput& in) { return Latency(Ordered(h, in)); }
FairnessResult CheckFairness(const History& h, const CheckInput& in) { return Fairness(Ordered(h, in), in); }

uint32_t EventsCheckersRead() {
  uint32_t mask = 0;
  for (Ev e : {Ev::kAcquireStart, Ev::kAcquireOk, Ev::kAcquireFail, Ev::kAcquireUnknown, Ev::kEnter, Ev::kExit,
               Ev::kCrash, Ev::kReleaseStart, Ev::kReleaseOk, Ev::kReleaseFail, Ev::kReleaseUnknown, Ev::kWriteOk,
               Ev::kWriteRejected, Ev::kReadRejected, Ev::kOrder})
    mask |= History::EvBit(e);
  return mask;
}

CheckResult CheckAll(const History& h, const CheckInput& in) {
  const Ordered o(h, in);
  CheckResult r;
  r.safety = MutualExclusion(h, o, in);
  r.resource = Resource(o, in);
  r.liveness = Liveness(o, in);
  r.latency = Latency(o);
  r.fairness = Fairness(o, in);
  return r;
}

LatencySummary Summarize(std::vector<double> samples_ms) {
  LatencySummary s;
  if (samples_ms.empty()) return s;
  std::sort(samples_ms.begin(), samples_ms.end());
  size_t n = samples_ms.size();
  // Nearest rank ceil(q*n), in integers so that no rounding of q*n can move it.
  auto at_percent = [&](size_t percent) {
    size_t rank = (percent * n + 99) / 100;
    return samples_ms[std::max<size_t>(rank, 1) - 1];
  };
  s.count = static_cast<int64_t>(n);
  s.p50 = at_percent(50);
  s.p90 = at_percent(90);
  s.p99 = at_percent(99);
  s.max = samples_ms.back();
  s.mean = std::accumulate(samples_ms.begin(), samples_ms.end(), 0.0) / static_cast<double>(n);
  for (int permille : kCdfPermille) {
    const size_t rank = (static_cast<size_t>(permille) * n + 999) / 1000;
    s.cdf.push_back(samples_ms[std::max<size_t>(rank, 1) - 1]);
  }
  return s;
}


}  // namespace locklab
