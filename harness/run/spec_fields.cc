#include "harness/run/spec_fields.h"

#include <charconv>

namespace locklab {

std::string SpecField::flag() const {
  std::string f = std::string("--") + key;
  for (char& c : f)
    if (c == '_') c = '-';
  return f;
}

std::string SpecField::path() const { return in_faults ? std::string("faults.") + key : std::string(key); }

const std::vector<SpecField>& SpecFields() {
  // Captureless lambdas, so the table is plain data.
  static const std::vector<SpecField> all = {
      {"backend", false, "sim (deterministic simulator) or redis (real redis-server processes)",
       [](RunSpec& s) -> FieldPtr { return &s.backend; }},
      {"algorithm", false, "lock algorithm: NAME or NAME:opt=v,... (see `locklab list`)",
       [](RunSpec& s) -> FieldPtr { return &s.algorithm; }},
      {"retry", false, "retry policy between failed attempts (see `locklab list`)",
       [](RunSpec& s) -> FieldPtr { return &s.retry; }},
      {"workload", false, "counter (lost updates) or seckill (oversell)",
       [](RunSpec& s) -> FieldPtr { return &s.workload; }},
      {"clients", false, "concurrent clients, each with its own lock object and clocks",
       [](RunSpec& s) -> FieldPtr { return &s.clients; }},
      {"app_servers", false,
       "application servers the clients are spread over (client c on server c % app_servers); only the local "
       "algorithm looks at it",
       [](RunSpec& s) -> FieldPtr { return &s.app_servers; }},
      {"requests", false, "acquisitions attempted, in total over all clients",
       [](RunSpec& s) -> FieldPtr { return &s.requests; }},
      {"ttl_ms", false, "lock time-to-live, ms", [](RunSpec& s) -> FieldPtr { return &s.ttl_ms; }},
      {"hold_ms", false, "think time inside the critical section, ms",
       [](RunSpec& s) -> FieldPtr { return &s.hold_ms; }},
      {"hold_spread_ms", false,
       "holds of random length: each hold uniform in [hold_ms - this, hold_ms + this] ms, at most hold_ms (0: every "
       "hold is hold_ms)",
       [](RunSpec& s) -> FieldPtr { return &s.hold_spread_ms; },
       true},
      {"acquire_timeout_ms", false, "a request gives up acquiring after this long, ms",
       [](RunSpec& s) -> FieldPtr { return &s.acquire_timeout_ms; }},
      {"command_timeout_ms", false, "a command with no reply by then has an unknown outcome, ms",
       [](RunSpec& s) -> FieldPtr { return &s.command_timeout_ms; }},
      {"nodes", false, "Redis endpoints; 0 = what the algorithm needs (redlock: 5)",
       [](RunSpec& s) -> FieldPtr { return &s.nodes; }},
      {"replica", false, "endpoint 0 has an asynchronous replica (needed by the failover fault)",
       [](RunSpec& s) -> FieldPtr { return &s.replica; }},
      {"node_min_down_ms", false, "Redlock's delayed restart: a node that went down stays down at least this long, ms",
       [](RunSpec& s) -> FieldPtr { return &s.node_min_down_ms; }, true},
      {"failover_by", false,
       "who promotes node 0's replica in a failover fault: script (locklab, at the planned time) or sentinel "
       "(three real redis-sentinel notice the dead master and promote it; --backend redis only; implies --replica)",
       [](RunSpec& s) -> FieldPtr { return &s.failover_by; },
       true},
      {"stock", false, "seckill: initial stock", [](RunSpec& s) -> FieldPtr { return &s.stock; }},
      {"read_ratio", false,
       "share of requests, [0, 1], that only read the resource under a read lock (rwlock: readers share it, a "
       "writer excludes everyone; a write while a reader is inside is a stale read)",
       [](RunSpec& s) -> FieldPtr { return &s.read_ratio; },
       true},
      {"seed", false, "seed of every random choice (network, clocks, pauses, tokens)",
       [](RunSpec& s) -> FieldPtr { return &s.seed; }},
      {"profile", false,
       "simulator cost profile: default (harness/profiles/default.json, measured), legacy (the old fixed "
       "2 us per command, no client cost, +50 us path) or a profile FILE (`locklab calibrate`)",
       [](RunSpec& s) -> FieldPtr { return &s.profile; }},
      {"max_duration_ms", false, "hard cap on one run's true time, ms (the run fails past it)",
       [](RunSpec& s) -> FieldPtr { return &s.max_duration_ms; }},
      {"trace", false,
       "what the history keeps: commands (every Redis command too: timelines show them), locks (lock, "
       "workload and fault events) or none (only what the checkers read: fastest); the figures are the same",
       [](RunSpec& s) -> FieldPtr { return &s.trace; },
       true},
      {"gc_pause_ms", true, "length of each stop-the-world client pause, ms (0: off)",
       [](RunSpec& s) -> FieldPtr { return &s.faults.gc_pause_ms; }},
      {"gc_pause_rate", true, "pauses per client per second (Poisson, drawn from the seed)",
       [](RunSpec& s) -> FieldPtr { return &s.faults.gc_pause_rate; }},
      {"net_delay_ms", true, "mean one-way network delay per message, ms",
       [](RunSpec& s) -> FieldPtr { return &s.faults.net_delay_ms; }},
      {"net_dist", true, "delay distribution: constant, uniform ([0, 2*mean]) or long-tail",
       [](RunSpec& s) -> FieldPtr { return &s.faults.net_dist; }},
      {"net_loss", true, "probability that one message is lost (the caller times out), [0, 1)",
       [](RunSpec& s) -> FieldPtr { return &s.faults.net_loss; }},
      {"clock_skew_ms", true, "each client's wall clock offset, uniform in [-skew, +skew], ms",
       [](RunSpec& s) -> FieldPtr { return &s.faults.clock_skew_ms; }},
      {"clock_drift_ppm", true, "each client's clock rate error, uniform in [-drift, +drift], ppm",
       [](RunSpec& s) -> FieldPtr { return &s.faults.clock_drift_ppm; }},
  };
  return all;
}

const SpecField* FindSpecField(const std::string& key, bool in_faults) {
  for (const auto& f : SpecFields())
    if (f.in_faults == in_faults && key == f.key) return &f;
  return nullptr;
}

std::string DoubleText(double v) {
  char buf[64];
  // std::to_chars without a precision gives the shortest text that round-trips: stable bytes.
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string("nan");
}

std::string FieldText(const SpecField& f, const RunSpec& spec) {
  // get() wants a mutable spec only to share one accessor for reading and writing.
  FieldPtr p = f.get(const_cast<RunSpec&>(spec));
  return std::visit(
      [](auto* v) -> std::string {
        using T = std::remove_pointer_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>)
          return *v;
        else if constexpr (std::is_same_v<T, bool>)
          return *v ? "true" : "false";
        else if constexpr (std::is_same_v<T, double>)
          return DoubleText(*v);
        else
          return std::to_string(*v);
      },
      p);
}

bool FieldEquals(const SpecField& f, const RunSpec& a, const RunSpec& b) {
  FieldPtr pa = f.get(const_cast<RunSpec&>(a));
  FieldPtr pb = f.get(const_cast<RunSpec&>(b));
  return std::visit([&](auto* x) { return *x == *std::get<decltype(x)>(pb); }, pa);
}

}  // namespace locklab
