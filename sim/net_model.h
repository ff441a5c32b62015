// The network both runtimes emulate: one-way delays drawn from a distribution, loss,
// partitions, the extra delay of chosen messages (delay_message) and the faults a client's
// n-th command triggers (on_send). The simulator applies it in virtual time; the real runtime
// holds messages in the process for the drawn delays.
//
// Contract: one Network per run, fed from one random stream (seed * 2 + 1). Each message's
// trip takes exactly two draws, delay then loss (Hop): the simulator's reports replay byte for
// byte only if every caller keeps that order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/fault.h"
#include "sim/rng.h"

namespace locklab::sim {

// One-way network delay added to every message (each direction), and loss.
struct NetModel {
  enum class Dist : uint8_t { kConstant, kUniform, kLongTail };
  Dist dist = Dist::kConstant;
  int64_t mean_us = 0;  // constant: exactly this; uniform: [0, 2*mean]; long tail: lognormal
                        // (sigma 1) with this mean, capped at 20x the mean
  double loss = 0;      // probability that one message (request or reply) is lost -> timeout
};
const char* NetDistName(NetModel::Dist d);
// "long-tail" -> kLongTail; false when unknown.
bool ParseNetDist(const std::string& name, NetModel::Dist* out);

// One delay drawn from the model (the long tail draws even when the mean is 0).
int64_t DrawDelayUs(const NetModel& model, Rng& rng);

class Network {
 public:
  // Limits of the plan (over one, Add* refuses with false).
  static constexpr size_t kMaxPartitions = 100'000;
  static constexpr size_t kMaxDelays = 100'000;
  static constexpr size_t kMaxTriggers = 100'000;

  Network(const NetModel& model, uint64_t seed) : model_(model), rng_(seed * 2 + 1) {}
  const NetModel& model() const { return model_; }

  // One message between `client` and `node` (an endpoint index) leaving at true time `t_us`:
  // delay drawn first, then loss, then the partitions in force at t_us.
  struct Hop {
    int64_t delay_us = 0;
    bool lost = false;         // the network lost it
    bool partitioned = false;  // client and node are cut off at t_us
    bool dropped() const { return lost || partitioned; }
  };
  Hop Draw(int client, int node, int64_t t_us);

  // kPartition from `from_us` for duration_us.
  bool Cut(int client, int node, int64_t from_us, int64_t duration_us);
  bool Partitioned(int client, int node, int64_t t_us) const;

  // kDelayMessage: the fault `f` (validated) is matched against f.target's commands.
  bool AddDelay(const FaultAction& f);
  bool has_delays() const { return !delays_.empty(); }
  // Counts `client`'s command named `name` (Command::Name()) in each of its matchers and
  // returns the extra delay of those it completes; *matched (optional): the index of the last
  // one, else -1.
  int64_t ExtraDelayUs(int client, const std::string& name, int* matched);
  const FaultAction& delay(int index) const { return delays_[static_cast<size_t>(index)].fault; }

  // on_send: the client fault `f` (validated, f.on_send set) fires on f.target's command.
  bool AddTrigger(const FaultAction& f);
  bool has_triggers() const { return !triggers_.empty(); }
  // The faults that `client`'s command named `name` fires now, in plan order, each at most once
  // (a crash's duration is 0): appended to *fired.
  void FireTriggers(int client, const std::string& name, std::vector<FaultAction>* fired);

  // The delay_message and on_send faults whose occurrence-th command never came, in plan order,
  // one line each ("delay_message DEL of client 0, occurrence 2: it sent 1"): such a fault did
  // not happen in the run, which a per-fault rate must leave out.
  std::vector<std::string> Unfired() const;

 private:
  struct Partition {
    int client, node;
    int64_t from_us, to_us;
  };
  struct Matcher {
    FaultAction fault;
    std::string name;  // MatchCommandName of the fault's command (or on_send), or "*"
    int seen = 0;
  };
  static bool Matches(const Matcher& m, int client, const std::string& name) {
    return m.fault.target == client && (m.name == "*" || m.name == name);
  }

  NetModel model_;
  Rng rng_;
  std::vector<Partition> partitions_;
  std::vector<Matcher> delays_;
  std::vector<Matcher> triggers_;
};

}  // namespace locklab::sim
