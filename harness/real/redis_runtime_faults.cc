// The real runtime's faults: the plan, and applying each kind.
#include "harness/real/redis_runtime_impl.h"

#include <algorithm>

namespace locklab {

// Faults.

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
    if (f.target != 0) return Status::Invalid("fault " + name + ": only node 0 has a replica");
    if (failover_planned) return Status::Invalid("fault " + name + ": node 0 has one replica, so it can fail over once");
    failover_planned = true;
  }
  if (!f.on_send.empty()) {
    triggers.push_back(Trigger{f, MatchCommandName(f.on_send), 0});
    return Status::Ok();
  }
  if (f.kind == FaultAction::Kind::kDelayMessage) {
    matchers.push_back(Matcher{f.target, MatchCommandName(f.command), f.occurrence, f.duration_us, 0});
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

void RedisRuntime::Impl::ApplyFault(const FaultAction& f, int step) {
  const std::string name = FaultKindName(f.kind);
  const int64_t now = TrueNowUs();
  auto failed = [&](const std::string& why) {
    Log(-1, Ev::kFault, 0, name + " failed: " + why);
    Note("fault " + name + " at " + Ms(now) + " could not be applied: " + why);
  };
  std::string err;
  switch (f.kind) {
    case FaultAction::Kind::kPauseClient: {
      Client& c = *clients[static_cast<size_t>(f.target)];
      if (c.crashed) return;
      const int64_t until = now + f.duration_us;
      if (c.paused && until <= c.paused_until_us) return;  // already paused for longer
      const std::string label = f.on_send.empty() ? std::string() : OnSendText(f);
      if (!c.paused) {
        c.pause_started_us = now;
        c.pause_label = label;
        Log(c.id, Ev::kPauseStart, f.duration_us,
            "pause " + std::to_string(f.duration_us / 1000) + " ms" + (label.empty() ? "" : " " + label));
      } else if (c.pause_label.empty()) {
        c.pause_label = label;
      }
      c.paused = true;
      c.paused_until_us = until;
      c.pause_planned_us = until - c.pause_started_us;
      event_del(c.pause_end);
      const timeval tv = Tv(until - now);
      event_add(c.pause_end, &tv);
      return;
    }
    case FaultAction::Kind::kCrashClient: {
      Client& c = *clients[static_cast<size_t>(f.target)];
      if (c.crashed) return;
      c.crashed = true;
      c.paused = false;
      event_del(c.pause_end);
      for (const Item& item : c.held) {
        if (item.deliver()) static_cast<CallRec*>(item.ptr)->in_queue = false;
        Drop(item);
      }
      c.held.clear();
      if (f.on_send.empty()) {
        Log(c.id, Ev::kCrash, 0, "crash");
      } else {
        Log(c.id, Ev::kCrash, 0, "crash " + OnSendText(f));
        Note("crash client " + std::to_string(c.id) + " " + OnSendText(f) + ": applied at " + Ms(now) +
             ", right after the command was handed to the network");
      }
      if (c.has_main && !c.main_done && --mains_left == 0) event_base_loopbreak(base);
      return;
    }
    case FaultAction::Kind::kClientClockJump: {
      Client& c = *clients[static_cast<size_t>(f.target)];
      c.jumps_us += f.delta_us;
      Log(c.id, Ev::kFault, f.delta_us, "wall clock jumps " + std::to_string(f.delta_us / 1000) + " ms");
      return;
    }
    case FaultAction::Kind::kCrashNode: {
      const int s = ep_server[static_cast<size_t>(f.target)];
      if (!servers->Kill(s, &err)) return failed(err);
      CloseEndpoint(f.target);
      Log(-1, Ev::kFault, f.target, "node " + std::to_string(f.target) + " crashes (SIGKILL, data lost)");
      return;
    }
    case FaultAction::Kind::kRestartNode: {
      const int s = ep_server[static_cast<size_t>(f.target)];
      CloseEndpoint(f.target);
      if (!servers->Respawn(s, &err)) return failed(err);
      Log(-1, Ev::kFault, f.target, "node " + std::to_string(f.target) + " restarts empty");
      // Wait for it from the loop (the other clients keep running); until it answers, commands
      // to it are refused (kError), as they would be by a real server that is starting.
      RestartPoll p;
      p.endpoint = f.target;
      p.server = s;
      p.started_us = now;
      restarts.push_back(p);
      const size_t idx = restarts.size() - 1;
      restarts[idx].ev = event_new(base, -1, 0, &Impl::OnRestartPoll, reinterpret_cast<void*>(this));
      // The callback finds its poll by scanning `restarts` (a handful at most).
      const timeval tv = Tv(kRestartPollUs);
      event_add(restarts[idx].ev, &tv);
      ++faults_pending;
      return;
    }
    case FaultAction::Kind::kPauseNode: {
      const int s = ep_server[static_cast<size_t>(f.target)];
      if (step == 0) {
        if (!servers->Pause(s, &err)) return failed(err);
        Log(-1, Ev::kFault, f.target,
            "node " + std::to_string(f.target) + " pauses " + std::to_string(f.duration_us / 1000) + " ms (SIGSTOP)");
        ArmFault(f, 1, now + f.duration_us);
      } else {
        if (!servers->Resume(s, &err)) return failed(err);
        Log(-1, Ev::kFault, f.target, "node " + std::to_string(f.target) + " resumes (SIGCONT)");
        Note("pause node " + std::to_string(f.target) + ": SIGSTOP at " + Ms(f.at_us) + " planned, SIGCONT after " +
             Ms(now - f.at_us) + " (planned " + Ms(f.duration_us) + ")");
      }
      return;
    }
    case FaultAction::Kind::kNodeClockJump: {
      const int s = ep_server[static_cast<size_t>(f.target)];
      if (!servers->JumpClock(s, f.delta_us, &err)) return failed(err);
      Log(-1, Ev::kFault, f.target,
          "node " + std::to_string(f.target) + " wall clock jumps " + std::to_string(f.delta_us / 1000) + " ms");
      return;
    }
    case FaultAction::Kind::kPartition: {
      partitions.push_back(Partition{f.target, f.node, now, now + f.duration_us});
      Log(f.target, Ev::kFault, f.node,
          "cut off from node " + std::to_string(f.node) + " for " + std::to_string(f.duration_us / 1000) + " ms");
      Note("partition client " + std::to_string(f.target) + " / node " + std::to_string(f.node) + " for " +
           Ms(f.duration_us) + " at " + Ms(now) +
           ": emulated in locklab, not in the kernel (requests dropped before they are written, replies "
           "discarded; both end as timeouts)");
      return;
    }
    case FaultAction::Kind::kFailover: {
      if (step == 0) {
        if (!servers->IsolateReplica(&err)) return failed(err);
        Log(-1, Ev::kFault, 0, "failover begins: node 0's replica is stopped and cut off (writes no longer replicate)");
        if (f.duration_us > 0) {
          ArmFault(f, 1, now + f.duration_us);
          return;
        }
      }
      const int64_t t0 = TrueNowUs();
      if (!servers->PromoteReplica(&err)) return failed(err);
      const int r = servers->replica_index();
      ep_server[0] = r;
      ep_port[0] = servers->port(r);
      CloseEndpoint(0);  // commands on the dead master's connections: kTimeout
      std::string sha_err;
      if (!LoadScripts("127.0.0.1", ep_port[0], &sha_err)) Note("failover: SCRIPT LOAD on the promoted replica: " + sha_err);
      Log(-1, Ev::kFault, 0,
          "failover: node 0's master is killed, its replica is promoted (unreplicated writes lost); node 0 is now " +
              servers->address(r));
      Note("failover node 0: replica cut off at " + Ms(f.at_us) + " (planned), master killed and replica promoted at " +
           Ms(t0) + " (took " + Ms(TrueNowUs() - t0) + "); clients now use " + servers->address(r));
      return;
    }
    case FaultAction::Kind::kDelayMessage:
      return;  // matched when the command is sent
  }
}

void RedisRuntime::Impl::OnPauseEnd(evutil_socket_t, short, void* arg) {
  auto* c = static_cast<Client*>(arg);
  Impl* impl = c->rt;
  if (c->crashed || !c->paused) return;
  c->paused = false;
  const int64_t applied = impl->TrueNowUs() - c->pause_started_us;
  impl->Log(c->id, Ev::kPauseEnd, applied, "resume");
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
      std::string err;
      if (!rt->LoadScripts("127.0.0.1", rt->servers->port(p.server), &err))
        rt->Note("restart node " + std::to_string(p.endpoint) + ": SCRIPT LOAD: " + err);
      rt->Log(-1, Ev::kFault, p.endpoint,
              "node " + std::to_string(p.endpoint) + " answers again after restart (" + Ms(now - p.started_us) + ")");
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
