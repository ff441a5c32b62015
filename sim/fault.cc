#include "sim/fault.h"

#include <cstdio>
#include <string>

#include "sim/scripts.h"

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
  for (int i = 0; i < FaultAction::kKindCount; ++i) {
    auto k = static_cast<FaultAction::Kind>(i);
    if (name == FaultKindName(k)) {
      *out = k;
      return true;
    }
  }
  return false;
}

bool TargetsClient(FaultAction::Kind k) {
  using K = FaultAction::Kind;
  return k == K::kPauseClient || k == K::kCrashClient || k == K::kClientClockJump || k == K::kPartition ||
         k == K::kDelayMessage;
}

std::string MatchCommandName(const std::string& name) {
  for (int s = 1; s < static_cast<int>(Script::kCount); ++s)
    if (ScriptName(static_cast<Script>(s)) == name) return name;
  std::string upper = name;
  for (char& ch : upper)
    if (ch >= 'a' && ch <= 'z') ch = static_cast<char>(ch - 'a' + 'A');
  return upper;
}

std::string OnSendText(const FaultAction& f) {
  const int n = f.occurrence;
  const int tens = n % 100, ones = n % 10;
  const char* suffix = (tens >= 11 && tens <= 13) ? "th" : ones == 1 ? "st" : ones == 2 ? "nd" : ones == 3 ? "rd" : "th";
  return "on its " + std::to_string(n) + suffix + " " +
         (f.on_send == "*" ? std::string("command") : MatchCommandName(f.on_send));
}

Status ValidateFault(const FaultAction& f, const FaultWorld& world) {
  using K = FaultAction::Kind;
  const std::string fault = std::string("fault ") + FaultKindName(f.kind);
  const bool on_client = TargetsClient(f.kind);
  const int limit = on_client ? world.clients : world.nodes;
  if (f.target < 0 || f.target >= limit)
    return Status::Invalid(fault + ": target " + std::to_string(f.target) + " out of range (" + std::to_string(limit) +
                           (on_client ? " clients)" : " nodes)"));
  if (f.kind == K::kPartition && (f.node < 0 || f.node >= world.nodes))
    return Status::Invalid(fault + ": node " + std::to_string(f.node) + " out of range (" +
                           std::to_string(world.nodes) + " nodes)");
  if (f.at_us < 0 || f.duration_us < 0 || f.jitter_us < 0) return Status::Invalid(fault + ": negative time");
  if (f.jitter_us > 0 && (!f.on_send.empty() || f.kind == K::kDelayMessage))
    return Status::Invalid(fault + ": jitter_ms applies only to a fault planned at a time (at_ms)");
  if (f.kind == K::kFailover && !world.with_replica) return Status::Invalid(fault + " needs replica=true (--replica)");
  if (f.kind == K::kFailover && f.target != 0) return Status::Invalid(fault + ": only node 0 has a replica");
  if (f.kind == K::kDelayMessage && (f.command.empty() || f.occurrence < 1))
    return Status::Invalid(fault + " needs command=NAME and occurrence >= 1");
  if (!f.on_send.empty() && f.kind != K::kPauseClient && f.kind != K::kCrashClient)
    return Status::Invalid(fault + ": on_send applies only to pause_client and crash_client");
  if (!f.on_send.empty() && f.occurrence < 1) return Status::Invalid(fault + ": on_send needs occurrence >= 1");
  return Status::Ok();
}

namespace {

// Whole ms as they are; a time aligned to the µs (a shrunk schedule's) with its fraction.
std::string Ms(int64_t us) {
  if (us % 1000 == 0) return std::to_string(us / 1000) + " ms";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(us) / 1000.0);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();  // a '.' with a non-zero digit after it is left
  return s + " ms";
}
std::string Node(int node) { return "node " + std::to_string(node); }
std::string WithLabel(std::string detail, const std::string& label) {
  return label.empty() ? detail : detail + " " + label;
}

}  // namespace

int64_t FaultValueUs(const FaultAction& f) { return f.duration_us != 0 ? f.duration_us : f.delta_us; }

FaultRecord FaultStartRecord(const FaultAction& f) {
  using K = FaultAction::Kind;
  const std::string label = f.on_send.empty() ? std::string() : OnSendText(f);
  FaultRecord r{TargetsClient(f.kind) ? f.target : -1, Ev::kFault, FaultValueUs(f), ""};
  switch (f.kind) {
    case K::kPauseClient:
      r.type = Ev::kPauseStart;
      r.detail = WithLabel("pause " + Ms(f.duration_us), label);
      break;
    case K::kCrashClient:
      r.type = Ev::kCrash;
      r.detail = WithLabel("crash", label);
      break;
    case K::kClientClockJump: r.detail = "wall clock jumps " + Ms(f.delta_us); break;
    case K::kCrashNode: r.detail = Node(f.target) + " crashes (data lost)"; break;
    case K::kRestartNode: r.detail = Node(f.target) + " restarts empty"; break;
    case K::kPauseNode: r.detail = Node(f.target) + " pauses " + Ms(f.duration_us); break;
    case K::kNodeClockJump: r.detail = Node(f.target) + " wall clock jumps " + Ms(f.delta_us); break;
    case K::kPartition: r.detail = "cut off from " + Node(f.node) + " for " + Ms(f.duration_us); break;
    case K::kFailover: r.detail = "node 0's replica is cut off from its master"; break;
    case K::kDelayMessage: r.detail = "delay_message"; break;  // recorded by no runtime
  }
  return r;
}

FaultRecord ResumeClientRecord(int client) { return {client, Ev::kPauseEnd, 0, "resume"}; }
FaultRecord ResumeNodeRecord(int node) { return {-1, Ev::kFault, 0, Node(node) + " resumes"}; }
FaultRecord FailoverIgnoredRecord(const FaultAction& f) {
  return {-1, Ev::kFault, FaultValueUs(f), "failover ignored: node 0 has no replica"};
}
FaultRecord FaultFailedRecord(const FaultAction& f, const std::string& why) {
  return {-1, Ev::kFault, 0, std::string(FaultKindName(f.kind)) + " failed: " + why};
}

FaultRecord NodeAnswersAgainRecord(int node, int64_t after_us) {
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.1f ms", static_cast<double>(after_us) / 1000.0);
  return {-1, Ev::kFault, node, Node(node) + " answers again after restart (" + ms + ")"};
}

FaultRecord PromoteReplicaRecord() {
  return {-1, Ev::kFault, 0, "node 0's master crashes; its replica is promoted in its place (unreplicated writes lost)"};
}

}  // namespace locklab
