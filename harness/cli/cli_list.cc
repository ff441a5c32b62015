#include "harness/cli/cli_list.h"

#include "algorithms/lock.h"
#include "algorithms/retry.h"
#include "harness/run/runtime.h"
#include "harness/run/spec_fields.h"

namespace locklab {
namespace {

std::string PadTo(std::string s, size_t w) {
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s + " ";
}

std::string OptionLines(const std::vector<OptionSpec>& options, const char* flag) {
  std::string out;
  for (const OptionSpec& o : options) {
    // One of the choices, or an integer in its range ("0..86400000").
    out.append("      ").append(flag).append(" ").append(o.name).append("=").append(o.ValuesText());
    out.append("  (default ").append(o.default_value).append(")  ").append(o.help).append("\n");
  }
  return out;
}

struct KindHelp {
  FaultAction::Kind kind;
  const char* fields;
  const char* help;
};
const KindHelp kKinds[] = {
    {FaultAction::Kind::kPauseClient, "at_ms,target,duration_ms",
     "freeze client `target` and its background tasks (a GC pause)"},
    {FaultAction::Kind::kPauseClient, "target,on_send,occurrence,duration_ms",
     "the same pause, fired right after client `target` sends its occurrence-th command named on_send "
     "(GET, SET, compare_and_delete, ...; * = any): the command still runs, its reply waits for the pause end "
     "(at_ms ignored)"},
    {FaultAction::Kind::kCrashClient, "at_ms,target", "client `target` stops forever without releasing"},
    {FaultAction::Kind::kCrashClient, "target,on_send,occurrence",
     "the same crash, right after client `target` sends its occurrence-th on_send command (* = any): the "
     "command still runs, its reply is never seen (at_ms ignored)"},
    {FaultAction::Kind::kClientClockJump, "at_ms,target,delta_ms",
     "client's wall clock jumps by delta_ms (may be negative)"},
    {FaultAction::Kind::kCrashNode, "at_ms,target", "node `target` (endpoint index) stops answering"},
    {FaultAction::Kind::kRestartNode, "at_ms,target", "node `target` comes back empty (no persistence)"},
    {FaultAction::Kind::kPauseNode, "at_ms,target,duration_ms", "node freezes (SIGSTOP on real Redis)"},
    {FaultAction::Kind::kNodeClockJump, "at_ms,target,delta_ms", "node's wall clock jumps: moves its key expiry"},
    {FaultAction::Kind::kPartition, "at_ms,target,node,duration_ms", "client `target` cannot reach node `node`"},
    {FaultAction::Kind::kFailover, "at_ms,target,duration_ms",
     "at at_ms node 0's replica is cut off; duration_ms later its master dies and the replica is promoted "
     "(writes in between are lost; needs --replica); with --failover-by sentinel only the master dies and three "
     "real redis-sentinel promote the replica"},
    {FaultAction::Kind::kDelayMessage, "target,command,occurrence,duration_ms",
     "the occurrence-th `command` (* = any) sent by client `target` gets duration_ms extra delay (at_ms ignored)"},
};

}  // namespace

std::string FaultKindsText(const std::string& indent) {
  std::string out;
  for (const KindHelp& k : kKinds)
    out += indent + PadTo(std::string(FaultKindName(k.kind)) + ":" + k.fields, 51) + k.help + "\n";
  out += indent + PadTo("...,jitter_ms=J", 51) + "a kind planned at_ms: the time is drawn from the seed in [at_ms, at_ms + J]\n";
  return out;
}

std::string ListText() {
  std::string out = "algorithms (--algorithm NAME or NAME:opt=v,...; --opt opt=v)\n";
  for (const AlgorithmInfo& a : Algorithms()) {
    out += "  " + PadTo(a.name, 13) + a.summary + "\n";
    if (a.nodes != 1) out += "      needs " + std::to_string(a.nodes) + " Redis nodes\n";
    if (!a.uses_ttl) out += "      no TTL: --ttl-ms does not apply\n";
    if (a.needs_replica) out += "      runs on a master with a replica (--replica is implied)\n";
    if (a.lock_free) out += "      seckill workload only: sells the stock kept in Redis, no lock\n";
    out += OptionLines(a.options, "--opt");
  }
  out += "\nretry policies (--retry NAME; --retry-opt opt=v)\n";
  for (const RetryInfo& r : RetryPolicies()) {
    out += "  " + PadTo(r.name, 13) + r.summary + "\n";
    out += OptionLines(r.options, "--retry-opt");
  }
  out += "\nworkloads (--workload NAME)\n";
  out +=
      "  " + PadTo("counter", 13) +
      "read the counter, think hold_ms, write value+1: a lost update (acknowledged writes > final value) is damage\n";
  out += "  " + PadTo("seckill", 13) +
         "read the stock, if > 0 think hold_ms, write stock-1 and record an order: oversell (orders > --stock) is "
         "damage\n";
  out += "  with fencing tokens (fencing, redlock:fence=on) the resource rejects reads and writes whose token is "
         "below the highest seen\n";
  out += "  reentrant:depth=N re-enters: N nested acquires and releases inside each critical section\n";
  out += "  semaphore:permits=N lets N clients hold at once: the checker counts N+1 holders as a violation\n";
  out += "\nfaults (all off by default; flags of `locklab run`, or the \"faults\" object of a config file)\n";
  for (const SpecField& f : SpecFields())
    if (f.in_faults) out += "  " + PadTo(f.flag(), 20) + f.help + "\n";
  out += "  " + PadTo("--fault KIND:k=v,...", 20) +
         "a planned fault (repeatable; \"faults.plan\" in a config file); times in ms of true time from the start:\n";
  out += FaultKindsText("    ");
  return out;
}

}  // namespace locklab
