// The real runtime's faults: the plan, and applying each kind.
#include "harness/real/redis_runtime_impl.h"

#include <algorithm>

namespace locklab {

Status RedisRuntime::Impl::PlanFault(const FaultAction& f) {
  const std::string name = FaultKindName(f.kind);
  if (ran) return Status::Invalid("fault " + name + ": faults must be planned before Run()");
  if (Status s = ValidateFault(f, FaultWorld{cfg.clients, cfg.nodes, cfg.with_replica}); !s.ok()) return s;
  if (NeedsServerControl(f.kind) && !servers)
    return Status::Invalid("fault " + name +
                           " needs control of the redis-server processes, but the servers given with --redis are "
                           "not locklab's: drop --redis to let locklab start its own servers");
  if (f.kind == FaultAction::Kind::kNodeClockJump && !servers->clock_shim_loaded())
    return Status::Invalid("fault " + name +
                           ": the clock shim (liblocklab_clockshim.so) was not found when the servers started; "
                           "build the locklab_clockshim target or set LOCKLAB_CLOCKSHIM");
  if (f.kind == FaultAction::Kind::kFailover) {
    if (failover_planned) return Status::Invalid("fault " + name + ": node 0 has one replica, so it can fail over once");
    failover_planned = true;
  }
  if (!f.on_send.empty()) {
    if (!net.AddTrigger(f)) return Status::Invalid("fault " + name + ": too many on_send faults");
    return Status::Ok();
  }
  if (f.kind == FaultAction::Kind::kDelayMessage) {
    if (!net.AddDelay(f)) return Status::Invalid("fault " + name + ": too many delayed messages");
    return Status::Ok();
  }
  planned.push_back(f);
  return Status::Ok();
}

void RedisRuntime::Impl::ArmFault(const FaultAction& f, int step, int64_t at_us) {
  auto t = std::make_unique<FaultTimer>(FaultTimer{this, f, step, nullptr});
  t->ev = event_new(base, -1, 0, &Impl::OnFaultEv, t.get());
  const timeval tv = Tv(at_us - TrueNowUs());
  event_add(t->ev, &tv);
  ++faults_pending;
  fault_timers.push_back(std::move(t));
}

void RedisRuntime::Impl::OnFaultEv(evutil_socket_t, short, void* arg) {
  auto* t = static_cast<FaultTimer*>(arg);
  --t->rt->faults_pending;
  t->rt->ApplyFault(t->f, t->step);
}

// A flat switch: one function per kind (two steps for node pauses and failovers).
void RedisRuntime::Impl::ApplyFault(const FaultAction& f, int step) {
  switch (f.kind) {
    case FaultAction::Kind::kPauseClient: return PauseClient(f);
    case FaultAction::Kind::kCrashClient: return CrashClient(f);
    case FaultAction::Kind::kClientClockJump: return JumpClientClock(f);
    case FaultAction::Kind::kCrashNode: return CrashNode(f);
    case FaultAction::Kind::kRestartNode: return RestartNode(f);
    case FaultAction::Kind::kPauseNode: return step == 0 ? PauseNode(f) : ResumeNode(f);
    case FaultAction::Kind::kNodeClockJump: return JumpNodeClock(f);
    case FaultAction::Kind::kPartition: return CutOff(f);
    case FaultAction::Kind::kFailover: return step == 0 ? BeginFailover(f) : FailoverSecondStep(f);
    case FaultAction::Kind::kDelayMessage: return;  // matched when the command is sent
  }
}

void RedisRuntime::Impl::FaultFailed(const FaultAction& f, const std::string& why) {
  const std::string name = FaultKindName(f.kind);
  Record(FaultFailedRecord(f, why));
  Note("fault " + name + " at " + Ms(TrueNowUs()) + " could not be applied: " + why);
}

void RedisRuntime::Impl::PauseClient(const FaultAction& f) {
  Client& c = *clients[static_cast<size_t>(f.target)];
  if (c.crashed) return;
  const int64_t now = TrueNowUs();
  const int64_t until = now + f.duration_us;
  if (c.paused && until <= c.paused_until_us) return;  // already paused for longer
  const std::string label = f.on_send.empty() ? std::string() : OnSendText(f);
  if (!c.paused) {
    c.pause_started_us = now;
    c.pause_label = label;
    Record(FaultStartRecord(f));
  } else if (c.pause_label.empty()) {
    c.pause_label = label;
  }
  c.paused = true;
  c.paused_until_us = until;
  c.pause_planned_us = until - c.pause_started_us;
  event_del(c.pause_end);
  const timeval tv = Tv(until - now);
  event_add(c.pause_end, &tv);
}

void RedisRuntime::Impl::CrashClient(const FaultAction& f) {
  Client& c = *clients[static_cast<size_t>(f.target)];
  if (c.crashed) return;
  c.crashed = true;
  c.paused = false;
  event_del(c.pause_end);
  for (const Item& item : c.held) {  // bounded by kMaxHeld
    if (item.deliver()) static_cast<CallRec*>(item.ptr)->in_queue = false;
    Drop(item);
  }
  c.held.clear();
  Record(FaultStartRecord(f));
  if (!f.on_send.empty())
    Note("crash client " + std::to_string(c.id) + " " + OnSendText(f) + ": applied at " + Ms(TrueNowUs()) +
         ", right after the command was handed to the network");
  if (c.has_main && !c.main_done && --mains_left == 0) event_base_loopbreak(base);
}

void RedisRuntime::Impl::JumpClientClock(const FaultAction& f) {
  clients[static_cast<size_t>(f.target)]->clock.jumps_us += f.delta_us;
  Record(FaultStartRecord(f));
}

void RedisRuntime::Impl::CrashNode(const FaultAction& f) {
  if (Status s = servers->Kill(ep_server[static_cast<size_t>(f.target)]); !s.ok())  // SIGKILL
    return FaultFailed(f, s.message());
  CloseEndpoint(f.target);
  Record(FaultStartRecord(f));
}

void RedisRuntime::Impl::RestartNode(const FaultAction& f) {
  const int s = ep_server[static_cast<size_t>(f.target)];
  CloseEndpoint(f.target);
  if (Status st = servers->Respawn(s); !st.ok()) return FaultFailed(f, st.message());
  Record(FaultStartRecord(f));
  // Wait for it from the loop (the other clients keep running); until it answers, commands
  // to it are refused (kError), as they would be by a real server that is starting.
  RestartPoll p;
  p.endpoint = f.target;
  p.server = s;
  p.started_us = TrueNowUs();
  restarts.push_back(p);
  const size_t idx = restarts.size() - 1;
  // The callback finds its poll by scanning `restarts` (a handful at most).
  restarts[idx].ev = event_new(base, -1, 0, &Impl::OnRestartPoll, reinterpret_cast<void*>(this));
  const timeval tv = Tv(kRestartPollUs);
  event_add(restarts[idx].ev, &tv);
  ++faults_pending;
}

void RedisRuntime::Impl::PauseNode(const FaultAction& f) {
  if (Status s = servers->Pause(ep_server[static_cast<size_t>(f.target)]); !s.ok())  // SIGSTOP
    return FaultFailed(f, s.message());
  Record(FaultStartRecord(f));
  ArmFault(f, 1, TrueNowUs() + f.duration_us);
}

void RedisRuntime::Impl::ResumeNode(const FaultAction& f) {
  if (Status s = servers->Resume(ep_server[static_cast<size_t>(f.target)]); !s.ok())  // SIGCONT
    return FaultFailed(f, s.message());
  Record(ResumeNodeRecord(f.target));
  Note("pause node " + std::to_string(f.target) + ": SIGSTOP at " + Ms(f.at_us) + " planned, SIGCONT after " +
       Ms(TrueNowUs() - f.at_us) + " (planned " + Ms(f.duration_us) + ")");
}

void RedisRuntime::Impl::JumpNodeClock(const FaultAction& f) {
  if (Status s = servers->JumpClock(ep_server[static_cast<size_t>(f.target)], f.delta_us); !s.ok())
    return FaultFailed(f, s.message());
  Record(FaultStartRecord(f));
}

void RedisRuntime::Impl::CutOff(const FaultAction& f) {
  const int64_t now = TrueNowUs();
  if (!net.Cut(f.target, f.node, now, f.duration_us)) return FaultFailed(f, "too many partitions");
  Record(FaultStartRecord(f));
  Note("partition client " + std::to_string(f.target) + " / node " + std::to_string(f.node) + " for " +
       Ms(f.duration_us) + " at " + Ms(now) +
       ": emulated in locklab, not in the kernel (requests dropped before they are written, replies "
       "discarded; both end as timeouts)");
}

void RedisRuntime::Impl::BeginFailover(const FaultAction& f) {
  if (Status s = servers->IsolateReplica(); !s.ok())  // SIGSTOP + CLIENT KILL TYPE replica
    return FaultFailed(f, s.message());
  Record(FaultStartRecord(f));
  if (f.duration_us > 0) return ArmFault(f, 1, TrueNowUs() + f.duration_us);
  FailoverSecondStep(f);
}

void RedisRuntime::Impl::PromoteReplica(const FaultAction& f) {
  const int64_t t0 = TrueNowUs();
  if (Status s = servers->PromoteReplica(); !s.ok()) return FaultFailed(f, s.message());
  const int r = servers->replica_index();
  ep_server[0] = r;
  ep_port[0] = servers->port(r);
  CloseEndpoint(0);  // commands on the dead master's connections: kTimeout
  if (Status s = LoadScripts("127.0.0.1", ep_port[0]); !s.ok())
    Note("failover: SCRIPT LOAD on the promoted replica: " + s.message());
  Record(PromoteReplicaRecord());
  Note("failover node 0: replica cut off at " + Ms(f.at_us) + " (planned), master killed and replica promoted at " +
       Ms(t0) + " (took " + Ms(TrueNowUs() - t0) + "); clients now use " + servers->address(r));
}

void RedisRuntime::Impl::OnPauseEnd(evutil_socket_t, short, void* arg) {
  auto* c = static_cast<Client*>(arg);
  Impl* impl = c->rt;
  if (c->crashed || !c->paused) return;
  c->paused = false;
  const int64_t applied = impl->TrueNowUs() - c->pause_started_us;
  impl->Record(ResumeClientRecord(c->id));  // what the simulator records; the applied length goes to Notes
  impl->Note("pause client " + std::to_string(c->id) + (c->pause_label.empty() ? "" : " " + c->pause_label) +
             ": planned " + Ms(c->pause_planned_us) + ", applied " + Ms(applied));
  c->pause_label.clear();
  // What came due during the pause runs now, in the order it came.
  std::deque<Item> held;
  held.swap(c->held);
  for (const Item& item : held) {
    if (item.deliver()) static_cast<CallRec*>(item.ptr)->in_queue = false;
    impl->PushReady(item);
  }
}

void RedisRuntime::Impl::OnRestartPoll(evutil_socket_t, short, void* arg) {
  auto* rt = static_cast<Impl*>(arg);
  const int64_t now = rt->TrueNowUs();
  for (auto& p : rt->restarts) {
    if (p.ev == nullptr || event_pending(p.ev, EV_TIMEOUT, nullptr)) continue;
    // This poll's timer fired (only fired timers are not pending).
    if (rt->servers->PingOnce(p.server)) {
      if (Status s = rt->LoadScripts("127.0.0.1", rt->servers->port(p.server)); !s.ok())
        rt->Note("restart node " + std::to_string(p.endpoint) + ": SCRIPT LOAD: " + s.message());
      rt->Record(NodeAnswersAgainRecord(p.endpoint, now - p.started_us));
      rt->Note("restart node " + std::to_string(p.endpoint) + ": answered PING " + Ms(now - p.started_us) +
               " after the restart began (commands in between were refused)");
      event_free(p.ev);
      p.ev = nullptr;
      --rt->faults_pending;
    } else if (now - p.started_us > kRestartWaitUs) {
      rt->Fail("redis runtime: node " + std::to_string(p.endpoint) + " did not answer within " + Ms(kRestartWaitUs) +
               " of its restart; its log ends with:\n" + rt->servers->LogTail(p.server));
      event_free(p.ev);
      p.ev = nullptr;
      --rt->faults_pending;
    } else {
      const timeval tv = Tv(kRestartPollUs);
      event_add(p.ev, &tv);
    }
  }
}


}  // namespace locklab
