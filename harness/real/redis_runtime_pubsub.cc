// The real runtime's pub/sub: SUBSCRIBE on a connection of its own, published messages through
// the emulated network and the client's gate, WaitMessage.
#include "harness/real/redis_runtime_impl.h"

#include <algorithm>

#include "harness/real/hiredis_reply.h"

namespace locklab {

// Pub/sub.
void RedisRuntime::Impl::StartSubscribe(int client, SubscribeCall* call) {
  using State = SubRec::State;
  Client& c = *clients[static_cast<size_t>(client)];
  auto finish_soon = [&](bool ok) {  // from the loop, never from inside this call
    call->ok = ok;
    PushReady(Item{Item::kResume, client, call->waiter.address()});
  };
  if (call->node < 0 || call->node >= cfg.nodes) return finish_soon(false);
  SubRec* rec = nullptr;
  SubRec* spare = nullptr;
  int active = 0;
  for (auto& r : c.subs) {
    if (r->state != State::kNone) ++active;
    if (r->endpoint == call->node && r->channel == call->channel) {
      rec = r.get();
    } else if (spare == nullptr && r->state == State::kNone && r->callers.empty() && !r->in_hiredis) {
      spare = r.get();
    }
  }
  const int64_t deadline = TrueNowUs() + cfg.command_timeout_us;
  if (rec != nullptr && rec->state == State::kConfirmed) return finish_soon(true);
  if (rec != nullptr && rec->state == State::kPending) {  // shares the SUBSCRIBE on its way
    rec->callers.emplace_back(call, deadline);
    ArmSubDeadline(rec);
    return;
  }
  if (active >= Env::kMaxSubscriptions) return finish_soon(false);
  if (rec == nullptr) rec = spare;
  if (rec == nullptr) {
    c.subs.push_back(std::make_unique<SubRec>());
    rec = c.subs.back().get();
    rec->rt = this;
    rec->client = client;
    rec->deadline_ev = event_new(base, -1, 0, &Impl::OnSubDeadlineEv, rec);
  }
  rec->endpoint = call->node;
  rec->channel = call->channel;
  rec->state = State::kPending;
  ++rec->gen;
  rec->callers.emplace_back(call, deadline);
  ArmSubDeadline(rec);
  CountCommand(client, Command::Of("SUBSCRIBE", rec->channel));
  // On the network like a command (a dropped one: its deadline decides).
  Hop(client, rec->endpoint, Leg::kRequest, 0, nullptr, [this, rec, gen = rec->gen] {
    if (rec->gen == gen) SendSubscribe(rec);
  });
}

void RedisRuntime::Impl::SendSubscribe(SubRec* rec) {
  Conn& conn = clients[static_cast<size_t>(rec->client)]->sub_conns[static_cast<size_t>(rec->endpoint)];
  const char* words[2] = {"SUBSCRIBE", rec->channel.data()};
  const size_t lens[2] = {9, rec->channel.size()};
  if (!EnsureConnected(conn).ok() ||
      redisAsyncCommandArgv(conn.ac, &Impl::OnSubReply, rec, 2, words, lens) != REDIS_OK) {
    FailSubscription(rec);
    return;
  }
  rec->in_hiredis = true;
  WriteSoon(conn);
}

// The subscription cannot be made, or its connection is gone: callers waiting get false.
void RedisRuntime::Impl::FailSubscription(SubRec* rec) {
  rec->state = SubRec::State::kNone;
  ++rec->gen;
  if (!rec->callers.empty())
    Dispatch(Item{Item::kSubscribed, rec->client, rec, static_cast<uint64_t>(rec->gen) << 1}, /*direct=*/false);
}

void RedisRuntime::Impl::ArmSubDeadline(SubRec* rec) {
  event_del(rec->deadline_ev);
  if (rec->callers.empty()) return;
  int64_t first = rec->callers.front().second;
  for (const auto& c : rec->callers) first = std::min(first, c.second);
  const timeval tv = Tv(first - TrueNowUs());
  event_add(rec->deadline_ev, &tv);
}

void RedisRuntime::Impl::OnSubDeadlineEv(evutil_socket_t, short, void* arg) {
  auto* rec = static_cast<SubRec*>(arg);
  rec->rt->Dispatch(Item{Item::kSubDeadline, rec->client, rec}, /*direct=*/true);
}

void RedisRuntime::Impl::FinishSubscribers(SubRec* rec, bool ok, bool only_due) {
  // Collect first: a resumed caller may subscribe again.
  std::vector<SubscribeCall*> done;
  const int64_t now = TrueNowUs();
  for (auto it = rec->callers.begin(); it != rec->callers.end();) {
    if (!only_due || it->second <= now) {
      done.push_back(it->first);
      it = rec->callers.erase(it);
    } else {
      ++it;
    }
  }
  ArmSubDeadline(rec);
  for (SubscribeCall* call : done) call->Finish(ok);
}

void RedisRuntime::Impl::OnSubReply(redisAsyncContext* ac, void* r, void* privdata) {
  auto* rec = static_cast<SubRec*>(privdata);
  Impl* rt = rec->rt;
  if (r == nullptr) {  // the subscription connection is gone (lost, closed, or never made)
    rec->in_hiredis = false;
    if (rt->run_over || rec->state == SubRec::State::kNone) return;
    if (rec->state == SubRec::State::kConfirmed) {
      ++rt->subscriptions_lost;
      rt->Note("subscription of client " + std::to_string(rec->client) + " to '" + rec->channel + "' on " +
               rt->ServerName(rec->endpoint) + " lost at " + Ms(rt->TrueNowUs()) +
               ": its connection closed; no more messages on it (waiters time out)");
    }
    rt->FailSubscription(rec);  // deferred: we may be inside hiredis tearing the context down
    return;
  }
  const auto* reply = static_cast<const redisReply*>(r);
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 3 || reply->element[0]->type != REDIS_REPLY_STRING) return;
  const std::string kind(reply->element[0]->str, reply->element[0]->len);
  if (kind == "message") {
    rt->OnPubMessage(rec->client, rec->endpoint);
    return;
  }
  if (kind != "subscribe" || rt->run_over) return;
  rt->Log(rec->client, Ev::kCommand, rec->endpoint,
          Command::Of("SUBSCRIBE", rec->channel).ToString() + " -> " + ToString(FromHiredis(reply)));
  // The confirmation travels back like a reply.
  const Item item{Item::kSubscribed, rec->client, rec, (static_cast<uint64_t>(rec->gen) << 1) | 1};
  rt->Hop(rec->client, rec->endpoint, Leg::kReply, 0, nullptr, [rt, item] { rt->Dispatch(item, /*direct=*/true); });
  (void)ac;
}

void RedisRuntime::Impl::OnPubMessage(int client, int endpoint) {
  if (run_over) return;
  const Item item{Item::kMessage, client};
  Hop(client, endpoint, Leg::kMessage, 0, nullptr, [this, item] { Dispatch(item, /*direct=*/true); });
}

// Through the gate: wake the longest waiting WaitMessage, or queue the message.
void RedisRuntime::Impl::OnMessageItem(int client) {
  Client& c = *clients[static_cast<size_t>(client)];
  if (!c.waiters.empty()) {
    const Client::Waiter w = c.waiters.front();
    c.waiters.pop_front();
    if (w.timer != nullptr) {
      wait_timers.erase(w.timer);
      event_free(w.timer->ev);
      delete w.timer;
    }
    w.wait->Finish(true);
    return;
  }
  if (c.queued_messages < Env::kMaxQueuedMessages) {
    ++c.queued_messages;
  } else {
    ++messages_dropped;
  }
}

void RedisRuntime::Impl::StartWaitMessage(int client, MessageWait* wait) {
  Client& c = *clients[static_cast<size_t>(client)];
  if (c.queued_messages > 0 || wait->timeout_us <= 0) {
    wait->got = c.queued_messages > 0;
    if (wait->got) --c.queued_messages;
    PushReady(Item{Item::kResume, client, wait->waiter.address()});
    return;
  }
  // A timer of the client, on its monotonic clock (as StartSleep).
  const int64_t true_us = OnClientClockUs(client, wait->timeout_us);
  auto* t = new WaitTimer{this, client, ++c.next_waiter, nullptr};
  t->ev = event_new(base, -1, 0, &Impl::OnWaitTimer, t);
  wait_timers.insert(t);
  const timeval tv = Tv(true_us);
  event_add(t->ev, &tv);
  c.waiters.push_back(Client::Waiter{t->id, wait, t});
}

void RedisRuntime::Impl::OnWaitTimer(evutil_socket_t, short, void* arg) {
  auto* t = static_cast<WaitTimer*>(arg);
  Impl* rt = t->rt;
  const Item item{Item::kWaitTimeout, t->client, nullptr, t->id};
  for (auto& w : rt->clients[static_cast<size_t>(t->client)]->waiters)
    if (w.id == t->id) w.timer = nullptr;
  rt->wait_timers.erase(t);
  event_free(t->ev);
  delete t;
  rt->Dispatch(item, /*direct=*/true);
}


}  // namespace locklab
