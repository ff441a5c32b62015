// The real runtime's commands: from StartCall through the emulated network to the reply,
// deadlines, and the pooled records that carry them.
#include "harness/real/redis_runtime_impl.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <limits>

#include "harness/real/hiredis_reply.h"
#include "harness/real/resp.h"
#include "sim/scripts.h"

namespace locklab {

// Commands.

void RedisRuntime::Impl::CountCommand(int client, const Command& cmd) {
  ++cmd_total;
  ++cmd_by_client[static_cast<size_t>(client)];
  ++cmd_by_name[cmd.Name()];
}

void RedisRuntime::Impl::Hop(int client, int endpoint, Leg leg, int64_t extra_us, CallRec* rec,
                             std::function<void()> arrive) {
  const sim::Network::Hop hop = net.Draw(client, endpoint, TrueNowUs());
  if (hop.dropped()) {
    if (hop.partitioned) {
      ++partition_drops;
    } else {
      ++(leg == Leg::kRequest ? lost_requests : leg == Leg::kReply ? lost_replies : messages_lost);
    }
    if (rec != nullptr) TryFree(rec);
    return;
  }
  if (leg == Leg::kMessage) ++messages_received;
  const int64_t delay = hop.delay_us + extra_us;
  if (delay <= 0) {
    arrive();
    return;
  }
  if (rec != nullptr) rec->hold_pending = true;
  const uint64_t seq = rec != nullptr ? rec->seq : 0;
  After(delay, [this, rec, seq, delay, leg, client, start = TrueNowUs(), arrive = std::move(arrive)] {
    if (leg == Leg::kReply) {  // a held reply's callback: a step of the pass
      ++pass_steps[kStepHeldReply];
      if (loop_log != nullptr) LoopLog('H', client, "");
    }
    const int64_t applied = TrueNowUs() - start;
    ++net_holds;
    net_planned_sum_us += delay;
    net_applied_sum_us += applied;
    net_late_max_us = std::max(net_late_max_us, applied - delay);
    if (rec != nullptr) rec->hold_pending = false;
    arrive();
    if (rec != nullptr && rec->seq == seq) TryFree(rec);  // it may have timed out meanwhile
  });
}

void RedisRuntime::Impl::StartCall(int client, PendingCall* call) {
  if (!net.has_triggers()) {
    StartCallInner(client, call);
    return;
  }
  const std::string name = call->cmd.Name();  // the command moves into the runtime's record
  StartCallInner(client, call);
  FireTriggers(client, name);
}

void RedisRuntime::Impl::FireTriggers(int client, const std::string& name) {
  // The command has been handed to the network (written, held for its delay, or lost): the
  // fault applies now, so that its reply, like everything else of the client, is held (pause)
  // or dropped (crash). ApplyFault never resumes anything, so this is safe inside StartCall.
  std::vector<FaultAction> fired;
  net.FireTriggers(client, name, &fired);
  for (const FaultAction& f : fired) ApplyFault(f, 0);
}

void RedisRuntime::Impl::StartCallInner(int client, PendingCall* call) {
  CountCommand(client, call->cmd);
  CallRec* rec = AllocRec();
  rec->client = client;
  rec->endpoint = call->node;
  rec->call = call;
  rec->cmd = std::move(call->cmd);
  rec->start_us = TrueNowUs();
  // A BLPOP or a WAIT may wait its own timeout at the node: the command timeout counts from after it.
  int64_t block_ms = -1;
  const bool blpop = sim::BlpopTimeoutMs(rec->cmd, &block_ms);
  const bool wait = !blpop && sim::WaitTimeoutMs(rec->cmd, &block_ms);
  if ((blpop || wait) && block_ms > 0) {
    int64_t at = rec->start_us + cfg.command_timeout_us;
    if (block_ms > std::numeric_limits<int64_t>::max() / 1000 || __builtin_add_overflow(at, block_ms * 1000, &at))
      at = std::numeric_limits<int64_t>::max() / 2;
    AddLongDeadline(rec, at);
  } else {
    deadlines.push_back(Deadline{rec->start_us + cfg.command_timeout_us, rec, rec->seq});
    if (!deadline_armed) ArmDeadline(cfg.command_timeout_us);
  }
  if (live_calls() > kMaxInFlight) {
    Fail("redis runtime: more than " + std::to_string(kMaxInFlight) + " commands in flight");
    Decide(rec, Reply::Error("ERR locklab: too many commands in flight"), /*direct=*/false);
    return;
  }
  if (rec->endpoint < 0 || rec->endpoint >= cfg.nodes) {
    Decide(rec, Reply::Error("ERR locklab: no node " + std::to_string(rec->endpoint)), /*direct=*/false);
    return;
  }
  if (blpop && block_ms == 0) {  // Redis would block this connection forever: refused, as by the simulator
    Decide(rec, Reply::Error(sim::kBlockForeverError), /*direct=*/false);
    return;
  }
  if (wait && block_ms == 0 && std::strtoll(std::string(rec->cmd.argv[1]).c_str(), nullptr, 10) > 0) {  // likewise
    Decide(rec, Reply::Error(sim::kWaitForeverError), /*direct=*/false);
    return;
  }
  int64_t extra_us = 0;
  if (net.has_delays()) extra_us = net.ExtraDelayUs(client, rec->cmd.Name(), &rec->matcher);
  // Send completes nothing at once: its errors are deferred through the ready queue.
  Hop(client, rec->endpoint, Leg::kRequest, extra_us, rec, [this, rec] { Send(rec); });
}

void RedisRuntime::Impl::Send(CallRec* rec) {
  if (rec->matcher >= 0) {
    const FaultAction& m = net.delay(rec->matcher);
    const int64_t applied = TrueNowUs() - rec->start_us;
    Note("delayed-message " + MatchCommandName(m.command) + " (client " + std::to_string(m.target) + ", occurrence " +
         std::to_string(m.occurrence) + "): planned " + Ms(m.duration_us) + " extra, applied " + Ms(applied) +
         " (held in locklab before writing it to the socket)");
  }
  Conn& conn = clients[static_cast<size_t>(rec->client)]->conns[static_cast<size_t>(rec->endpoint)];
  if (Status s = EnsureConnected(conn); !s.ok()) {
    Decide(rec, Reply::Error("ERR locklab: " + s.message()), /*direct=*/false);
    return;
  }
  if (!Write(rec, conn, /*eval=*/shas[static_cast<size_t>(rec->cmd.script)].empty())) {
    Decide(rec, Reply::Error("ERR locklab: the connection to " + ServerName(rec->endpoint) + " is closing"),
           /*direct=*/false);
  }
}

bool RedisRuntime::Impl::Write(CallRec* rec, Conn& conn, bool eval) {
  if (conn.ac == nullptr) return false;
  const Command& cmd = rec->cmd;
  // Encoded here into a buffer kept between commands (hiredis's own formatter allocates per word).
  std::string& out = resp_buf;
  out.clear();
  if (cmd.script != Script::kNone) {
    AppendRespArrayHeader(&out, cmd.argv.size() + 3);
    AppendRespWord(&out, eval ? "EVAL" : "EVALSHA");
    AppendRespWord(&out, eval ? std::string_view(sim::GetScript(cmd.script).lua)
                              : std::string_view(shas[static_cast<size_t>(cmd.script)]));
    char numkeys[24];
    const auto r = std::to_chars(numkeys, numkeys + sizeof numkeys, cmd.num_keys);
    AppendRespWord(&out, std::string_view(numkeys, static_cast<size_t>(r.ptr - numkeys)));
  } else {
    AppendRespArrayHeader(&out, cmd.argv.size());
  }
  for (const auto& a : cmd.argv) AppendRespWord(&out, a);
  if (redisAsyncFormattedCommand(conn.ac, &Impl::OnReply, rec, out.data(), out.size()) != REDIS_OK) return false;
  rec->hiredis_pending = true;
  ++pass_steps[kStepWrite];
  if (loop_log != nullptr) LoopLog('W', rec->client, cmd.script != Script::kNone ? "script" : cmd.Name().c_str());
  WriteSoon(conn);
  return true;
}


void RedisRuntime::Impl::OnReply(redisAsyncContext* ac, void* r, void* privdata) {
  auto* rec = static_cast<CallRec*>(privdata);
  Impl* rt = rec->rt;
  rec->hiredis_pending = false;
  if (r == nullptr) {
    // The connection is gone. If it had been established the command may have run.
    if (!rec->decided) {
      const bool maybe_ran = (ac->c.flags & REDIS_CONNECTED) != 0;
      rt->Decide(rec,
                 maybe_ran ? Reply::Timeout()
                           : Reply::Error("ERR locklab: cannot connect to " + rt->ServerName(rec->endpoint)),
                 /*direct=*/false);  // we may be inside hiredis tearing the context down
    }
    rt->TryFree(rec);
    return;
  }
  Reply reply = FromHiredis(static_cast<redisReply*>(r));
  ++rt->pass_steps[kStepRead];
  if (rt->loop_log != nullptr) rt->LoopLog('R', rec->client, ToString(reply).c_str());
  if (rec->cmd.script != Script::kNone && !rec->retried_eval && reply.is_error() &&
      reply.str.rfind("NOSCRIPT", 0) == 0) {
    // The server lost its script cache (restarted, promoted): run the text, which reloads it.
    rec->retried_eval = true;
    Conn* conn = static_cast<Conn*>(ac->data);
    if (conn->ac == ac && rt->Write(rec, *conn, /*eval=*/true)) return;
  }
  rt->OnNodeReply(rec, std::move(reply));
}

void RedisRuntime::Impl::OnNodeReply(CallRec* rec, Reply reply) {
  if (history != nullptr && running && cfg.trace_commands) {
    Log(rec->client, Ev::kCommand, rec->endpoint, rec->cmd.ToString() + " -> " + ToString(reply));
  }
  if (rec->decided) {  // too late: the caller already has its timeout
    TryFree(rec);
    return;
  }
  rec->held_reply = std::move(reply);
  Hop(rec->client, rec->endpoint, Leg::kReply, 0, rec, [this, rec] {
    if (!rec->decided) Decide(rec, std::move(rec->held_reply), /*direct=*/true);  // else: timed out while held
  });
}

void RedisRuntime::Impl::Decide(CallRec* rec, Reply reply, bool direct) {
  if (rec->decided) return;
  rec->decided = true;
  rec->reply = std::move(reply);
  Dispatch(Item{Item::kDeliver, rec->client, rec}, direct);
}

void RedisRuntime::Impl::Deliver(CallRec* rec) {
  PendingCall* call = rec->call;
  rec->call = nullptr;
  rec->delivered = true;
  Reply r = std::move(rec->reply);
  TryFree(rec);  // before resuming: the coroutine may start the next command at once
  if (call != nullptr) call->Finish(std::move(r));
}

void RedisRuntime::Impl::ArmDeadline(int64_t in_us) {
  deadline_armed = true;
  const timeval tv = Tv(in_us);
  event_add(deadline_ev, &tv);
}

void RedisRuntime::Impl::OnDeadline(evutil_socket_t, short, void* arg) {
  auto* rt = static_cast<Impl*>(arg);
  rt->deadline_armed = false;
  const int64_t now = rt->TrueNowUs();
  while (!rt->deadlines.empty() && rt->deadlines.front().at_us <= now) {
    const Deadline d = rt->deadlines.front();
    rt->deadlines.pop_front();
    if (d.rec->seq == d.seq && !d.rec->decided) rt->Decide(d.rec, Reply::Timeout(), /*direct=*/true);
  }
  // Entries of finished commands wait for their deadline here; keep the queue near the number
  // of commands actually in flight.
  if (rt->deadlines.size() > 1'000'000 && rt->deadlines.size() > 4 * rt->live_calls()) {
    std::erase_if(rt->deadlines, IsStale);
  }
  // Entries of commands already answered need no timer: drop them from the front, so that the
  // timer is armed for a command still in flight (not once per finished command).
  for (size_t n = rt->deadlines.size(); n > 0 && IsStale(rt->deadlines.front()); --n) rt->deadlines.pop_front();
  if (!rt->deadlines.empty()) rt->ArmDeadline(rt->deadlines.front().at_us - now);
}

void RedisRuntime::Impl::AddLongDeadline(CallRec* rec, int64_t at_us) {
  auto later = [](const Deadline& a, const Deadline& b) { return a.at_us > b.at_us; };
  long_deadlines.push_back(Deadline{at_us, rec, rec->seq});
  std::push_heap(long_deadlines.begin(), long_deadlines.end(), later);
  if (long_armed_at < 0 || at_us < long_armed_at) {
    long_armed_at = at_us;
    const timeval tv = Tv(at_us - TrueNowUs());
    event_add(long_deadline_ev, &tv);
  }
}

void RedisRuntime::Impl::OnLongDeadline(evutil_socket_t, short, void* arg) {
  auto* rt = static_cast<Impl*>(arg);
  auto later = [](const Deadline& a, const Deadline& b) { return a.at_us > b.at_us; };
  rt->long_armed_at = -1;
  auto& heap = rt->long_deadlines;
  while (!heap.empty() && heap.front().at_us <= rt->TrueNowUs()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const Deadline d = heap.back();
    heap.pop_back();
    if (d.rec->seq == d.seq && !d.rec->decided) rt->Decide(d.rec, Reply::Timeout(), /*direct=*/true);
  }
  // Entries of BLPOPs answered early wait here for their deadline; keep the heap near the
  // number of commands in flight.
  if (heap.size() > 100'000 && heap.size() > 4 * rt->live_calls()) {
    std::erase_if(heap, IsStale);
    std::make_heap(heap.begin(), heap.end(), later);
  }
  if (!heap.empty() && (rt->long_armed_at < 0 || heap.front().at_us < rt->long_armed_at)) {
    rt->long_armed_at = heap.front().at_us;
    const timeval tv = Tv(heap.front().at_us - rt->TrueNowUs());
    event_add(rt->long_deadline_ev, &tv);
  }
}

void RedisRuntime::Impl::TryFree(CallRec* rec) {
  if (rec->delivered && !rec->hiredis_pending && !rec->hold_pending && !rec->in_queue) FreeRec(rec);
}

RedisRuntime::Impl::CallRec* RedisRuntime::Impl::AllocRec() {
  CallRec* rec;
  if (!free_recs.empty()) {
    rec = free_recs.back();
    free_recs.pop_back();
  } else {
    pool.push_back(std::make_unique<CallRec>());
    rec = pool.back().get();
    rec->rt = this;
  }
  rec->seq = next_seq++;
  return rec;
}

void RedisRuntime::Impl::FreeRec(CallRec* rec) {
  *rec = CallRec();  // not held: TryFree waits for hold_pending to clear
  rec->rt = this;
  free_recs.push_back(rec);
}


}  // namespace locklab
