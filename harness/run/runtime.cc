#include "harness/run/runtime.h"

namespace locklab {

const char* FaultKindName(FaultAction::Kind k) {
  switch (k) {
    case FaultAction::Kind::kPauseClient: return "pause_client";
    case FaultAction::Kind::kCrashClient: return "crash_client";
    case FaultAction::Kind::kClientClockJump: return "client_clock_jump";
    case FaultAction::Kind::kCrashNode: return "crash_node";
    case FaultAction::Kind::kRestartNode: return "restart_node";
    case FaultAction::Kind::kPauseNode: return "pause_node";
    case FaultAction::Kind::kNodeClockJump: return "node_clock_jump";
    case FaultAction::Kind::kPartition: return "partition";
    case FaultAction::Kind::kFailover: return "failover";
    case FaultAction::Kind::kDelayMessage: return "delay_message";
  }
  return "?";
}

bool ParseFaultKind(const std::string& name, FaultAction::Kind* out) {
  for (int i = 0; i <= static_cast<int>(FaultAction::Kind::kDelayMessage); ++i) {
    auto k = static_cast<FaultAction::Kind>(i);
    if (name == FaultKindName(k)) {
      *out = k;
      return true;
    }
  }
  return false;
}

const char* NetDistName(NetSetting::Dist d) {
  switch (d) {
    case NetSetting::Dist::kConstant: return "constant";
    case NetSetting::Dist::kUniform: return "uniform";
    case NetSetting::Dist::kLongTail: return "long-tail";
  }
  return "?";
}

bool ParseNetDist(const std::string& name, NetSetting::Dist* out) {
  for (auto d : {NetSetting::Dist::kConstant, NetSetting::Dist::kUniform, NetSetting::Dist::kLongTail})
    if (name == NetDistName(d)) {
      *out = d;
      return true;
    }
  return false;
}

}  // namespace locklab
