#include "sim/net_model.h"

#include <algorithm>
#include <cmath>

namespace locklab::sim {

const char* NetDistName(NetModel::Dist d) {
  switch (d) {
    case NetModel::Dist::kConstant: return "constant";
    case NetModel::Dist::kUniform: return "uniform";
    case NetModel::Dist::kLongTail: return "long-tail";
  }
  return "?";
}

bool ParseNetDist(const std::string& name, NetModel::Dist* out) {
  for (auto d : {NetModel::Dist::kConstant, NetModel::Dist::kUniform, NetModel::Dist::kLongTail})
    if (name == NetDistName(d)) {
      *out = d;
      return true;
    }
  return false;
}

int64_t DrawDelayUs(const NetModel& model, Rng& rng) {
  const int64_t mean = model.mean_us;
  switch (model.dist) {
    case NetModel::Dist::kConstant: return mean;
    case NetModel::Dist::kUniform: return mean <= 0 ? 0 : rng.Uniform(0, 2 * mean);
    case NetModel::Dist::kLongTail: {
      // Lognormal with sigma 1 and the given mean, capped at 20x the mean.
      double v = static_cast<double>(mean) * std::exp(rng.Normal() - 0.5);
      return std::min<int64_t>(static_cast<int64_t>(v), 20 * mean);
    }
  }
  return mean;
}

Network::Hop Network::Draw(int client, int node, int64_t t_us) {
  Hop h;
  h.delay_us = DrawDelayUs(model_, rng_);
  h.lost = rng_.Chance(model_.loss);
  h.partitioned = Partitioned(client, node, t_us);
  return h;
}

bool Network::Cut(int client, int node, int64_t from_us, int64_t duration_us) {
  if (partitions_.size() >= kMaxPartitions) return false;
  partitions_.push_back(Partition{client, node, from_us, from_us + duration_us});
  return true;
}

bool Network::Partitioned(int client, int node, int64_t t_us) const {
  for (const auto& p : partitions_)  // bounded by kMaxPartitions
    if (p.client == client && p.node == node && t_us >= p.from_us && t_us < p.to_us) return true;
  return false;
}

bool Network::AddDelay(const FaultAction& f) {
  if (delays_.size() >= kMaxDelays) return false;
  delays_.push_back(Matcher{f, MatchCommandName(f.command), 0});
  return true;
}

int64_t Network::ExtraDelayUs(int client, const std::string& name, int* matched) {
  int64_t extra = 0;
  if (matched != nullptr) *matched = -1;
  for (size_t i = 0; i < delays_.size(); ++i) {
    Matcher& m = delays_[i];
    if (!Matches(m, client, name) || ++m.seen != m.fault.occurrence) continue;
    extra += m.fault.duration_us;
    if (matched != nullptr) *matched = static_cast<int>(i);
  }
  return extra;
}

bool Network::AddTrigger(const FaultAction& f) {
  if (triggers_.size() >= kMaxTriggers) return false;
  triggers_.push_back(Matcher{f, MatchCommandName(f.on_send), 0});
  if (f.kind == FaultAction::Kind::kCrashClient) triggers_.back().fault.duration_us = 0;
  triggers_.back().fault.delta_us = 0;
  return true;
}

void Network::FireTriggers(int client, const std::string& name, std::vector<FaultAction>* fired) {
  for (Matcher& t : triggers_) {
    if (!Matches(t, client, name)) continue;
    if (++t.seen != t.fault.occurrence) continue;  // fires once: `seen` only grows
    fired->push_back(t.fault);
  }
}

std::vector<std::string> Network::Unfired() const {
  std::vector<std::string> out;
  auto add = [&out](const Matcher& m, const std::string& what) {
    if (m.seen >= m.fault.occurrence) return;
    out.push_back(what + " of client " + std::to_string(m.fault.target) + ", occurrence " +
                  std::to_string(m.fault.occurrence) + ": it sent " + std::to_string(m.seen));
  };
  for (const Matcher& m : delays_) add(m, "delay_message " + m.name);
  for (const Matcher& m : triggers_) add(m, std::string(FaultKindName(m.fault.kind)) + " on_send " + m.name);
  return out;
}

}  // namespace locklab::sim
