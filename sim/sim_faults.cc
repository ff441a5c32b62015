// The simulator's faults: one function per kind (the plan is sim/fault.h, the records each
// writes are FaultStartRecord & co. there).
#include <algorithm>

#include "sim/simulator_impl.h"

namespace locklab::sim {

Simulator::NodeState& Simulator::NodeAt(int endpoint) {
  return *nodes_[static_cast<size_t>(endpoint_[static_cast<size_t>(endpoint)])];
}

void Simulator::OnFault(uint32_t id) {
  const Fault f = faults_[id];  // a copy: the handlers plan follow-up steps into faults_
  const FaultAction& a = f.action;
  switch (f.step) {
    case kResumeClient: return ResumeClient(a.target);
    case kResumeNode: return ResumeNode(a.target);
    case kPromote: return PromoteReplica();
    default: break;
  }
  switch (a.kind) {
    case FaultAction::Kind::kPauseClient: return PauseClient(a);
    case FaultAction::Kind::kCrashClient: return CrashClient(a);
    case FaultAction::Kind::kClientClockJump:
      clients_[static_cast<size_t>(a.target)]->clock.jumps_us += a.delta_us;
      return Report(FaultStartRecord(a));
    case FaultAction::Kind::kCrashNode: return CrashNode(a);
    case FaultAction::Kind::kRestartNode: return RestartNode(a);
    case FaultAction::Kind::kPauseNode: return PauseNode(a);
    case FaultAction::Kind::kNodeClockJump: return JumpNodeClock(a);
    case FaultAction::Kind::kPartition:
      net_.Cut(a.target, a.node, now_us_, a.duration_us);
      return Report(FaultStartRecord(a));
    case FaultAction::Kind::kFailover: return BeginFailover(a);
    case FaultAction::Kind::kDelayMessage: return;  // matched when sent (Network)
  }
}

void Simulator::PauseClient(const FaultAction& f) {
  Process& p = *clients_[static_cast<size_t>(f.target)];
  if (p.crashed) return;
  const int64_t until = now_us_ + f.duration_us;
  if (until <= p.paused_until_us) return;  // already paused for longer
  const bool was_paused = now_us_ < p.paused_until_us;
  p.paused_until_us = until;
  pauses_end_us_ = std::max(pauses_end_us_, until);
  if (!was_paused) Report(FaultStartRecord(f));
  FaultAction end;
  end.target = f.target;
  PushFault(end, kResumeClient, until);
}

void Simulator::ResumeClient(int client) {
  Process& p = *clients_[static_cast<size_t>(client)];
  if (!p.crashed && p.paused_until_us == now_us_) Report(ResumeClientRecord(client));
}

void Simulator::CrashClient(const FaultAction& f) {
  Process& p = *clients_[static_cast<size_t>(f.target)];
  if (p.crashed) return;
  p.crashed = true;
  ++crashed_clients_;
  if (!p.main_done && p.main.valid()) --mains_left_;
  for (auto& node : nodes_) node->tx.Close(f.target);  // its connections close: MULTI and WATCHes go
  Report(FaultStartRecord(f));
}

void Simulator::CrashNode(const FaultAction& f) {
  NodeState& n = NodeAt(f.target);
  DropConnections(endpoint_[static_cast<size_t>(f.target)]);
  n.up = false;
  n.store.Clear();
  n.tx.Clear();
  n.woff.clear();
  StopExpireCycle(endpoint_[static_cast<size_t>(f.target)]);
  if (&n == nodes_[0].get()) ++repl_generation_;
  Report(FaultStartRecord(f));
}

void Simulator::RestartNode(const FaultAction& f) {
  NodeState& n = NodeAt(f.target);
  DropConnections(endpoint_[static_cast<size_t>(f.target)]);
  n.up = true;
  n.store.Clear();
  n.tx.Clear();
  n.woff.clear();
  n.busy_until_ns = now_us_ * 1000;
  StartExpireCycle(endpoint_[static_cast<size_t>(f.target)]);
  Report(FaultStartRecord(f));
}

void Simulator::PauseNode(const FaultAction& f) {
  NodeState& n = NodeAt(f.target);
  n.paused_until_us = std::max(n.paused_until_us, now_us_ + f.duration_us);
  Report(FaultStartRecord(f));
  FaultAction end;
  end.target = f.target;
  PushFault(end, kResumeNode, n.paused_until_us);
}

void Simulator::ResumeNode(int endpoint) {
  if (NodeAt(endpoint).paused_until_us == now_us_) Report(ResumeNodeRecord(endpoint));
}

void Simulator::JumpNodeClock(const FaultAction& f) {
  NodeState& n = NodeAt(f.target);
  n.clock.jumps_us += f.delta_us;
  for (const auto& [client, conn] : n.conns)  // parked BLPOPs time out by this clock
    if (conn.parked != kNoCall) ScheduleBlockTimeout(conn.parked);
  Report(FaultStartRecord(f));
}

void Simulator::BeginFailover(const FaultAction& f) {
  if (!config_.with_replica || endpoint_[0] != 0) {
    Report(FailoverIgnoredRecord(f));
    return;
  }
  // First the replica is cut off: replication in flight and later writes never reach it.
  repl_cut_ = true;
  ++repl_generation_;
  Report(FaultStartRecord(f));
  PushFault(FaultAction(), kPromote, now_us_ + f.duration_us);
}

void Simulator::PromoteReplica() {
  NodeState& master = *nodes_[0];
  DropConnections(0);
  master.up = false;
  master.store.Clear();
  master.tx.Clear();
  master.woff.clear();
  StopExpireCycle(0);
  endpoint_[0] = static_cast<int>(nodes_.size() - 1);
  StartExpireCycle(endpoint_[0]);
  Report(PromoteReplicaRecord());
}

}  // namespace locklab::sim
