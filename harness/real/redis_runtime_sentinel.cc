// The real runtime's Sentinel mode (BackendConfig::failover_by_sentinel): three redis-sentinel
// watch node 0 and its replica; the clients' endpoint 0 is the master Sentinel names, and it
// moves when a sentinel announces +switch-master. A failover fault cuts the replica off (as the
// scripted one does), then only kills the master: Sentinel promotes the replica by itself.
#include <sstream>

#include "harness/real/redis_runtime_impl.h"

namespace locklab {

namespace {

// What the runtime listens to on every sentinel: the failover's steps, in the order they come.
constexpr const char* kSentinelChannels[] = {"+odown", "+failover-state-wait-promotion", "+promoted-slave",
                                             "+switch-master", "-failover-abort-no-good-slave"};
constexpr int kChannelCount = static_cast<int>(sizeof kSentinelChannels / sizeof kSentinelChannels[0]);

}  // namespace

Status RedisRuntime::Impl::StartSentinels() {
  SentinelOptions opt;
  if (cpu_split) opt.cpus = cpu_split->servers;
  Result<std::unique_ptr<Sentinels>> started =
      Sentinels::Start(opt, servers->dir(), servers->port(0), servers->port(servers->replica_index()));
  if (!started.ok()) return started.status().Prefixed("redis runtime (Sentinel mode)");
  sentinels = std::move(started).value();
  std::string host;
  int port = 0;
  if (Status s = sentinels->MasterAddress(&host, &port); !s.ok())
    return s.Prefixed("redis runtime: SENTINEL get-master-addr-by-name");
  if (port != servers->port(0)) {
    return Status::Failed("redis runtime: Sentinel names " + host + ":" + std::to_string(port) +
                          " as the master, not node 0 (" + servers->address(0) + ")");
  }
  ep_host[0] = host;
  ep_port[0] = port;
  std::string ports;
  for (int i = 0; i < sentinels->count(); ++i) ports += (i ? ", " : "") + std::to_string(sentinels->port(i));
  Note("Sentinel mode: " + std::to_string(sentinels->count()) + " redis-sentinel on 127.0.0.1 ports " + ports +
       " (quorum " + std::to_string(opt.quorum) + ", down-after " + std::to_string(opt.down_after_ms) +
       " ms, failover-timeout " + std::to_string(opt.failover_timeout_ms) +
       " ms); node 0 found through SENTINEL get-master-addr-by-name at " + host + ":" + std::to_string(port));
  return Status::Ok();
}

Status RedisRuntime::Impl::SubscribeSentinels() {
  for (int i = 0; i < sentinels->count(); ++i) {
    redisAsyncContext* ac = redisAsyncConnect("127.0.0.1", sentinels->port(i));
    if (ac == nullptr || ac->err) {
      const Status failed = Status::Failed("redis runtime: cannot connect to sentinel " + std::to_string(i) + ": " +
                                           (ac != nullptr ? ac->errstr : "out of memory"));
      if (ac != nullptr) redisAsyncFree(ac);
      return failed;
    }
    auto sub = std::make_unique<SentinelSub>();
    sub->rt = this;
    sub->index = i;
    sub->ac = ac;
    ac->data = sub.get();
    Attach(ac);
    redisAsyncSetConnectCallback(ac, &Impl::OnSentinelConnect);
    redisAsyncSetDisconnectCallback(ac, &Impl::OnSentinelDisconnect);
    std::vector<const char*> argv = {"SUBSCRIBE"};
    for (const char* ch : kSentinelChannels) argv.push_back(ch);
    redisAsyncCommandArgv(ac, &Impl::OnSentinelReply, sub.get(), static_cast<int>(argv.size()), argv.data(), nullptr);
    sentinel_subs.push_back(std::move(sub));
  }
  const int64_t deadline = MonoNowUs() + kConnectWaitUs;
  event* tick = event_new(base, -1, EV_PERSIST, [](evutil_socket_t, short, void*) {}, nullptr);
  const timeval tv = Tv(50'000);
  event_add(tick, &tv);  // wakes the loop so that the deadline is checked
  auto all_confirmed = [&] {
    for (const auto& s : sentinel_subs)
      if (s->ac == nullptr || s->confirmed < kChannelCount) return false;
    return true;
  };
  while (!all_confirmed() && MonoNowUs() < deadline) event_base_loop(base, EVLOOP_ONCE);
  event_free(tick);
  if (!all_confirmed()) return Status::Failed("redis runtime: the sentinels did not confirm SUBSCRIBE in time");
  return Status::Ok();
}

void RedisRuntime::Impl::CloseSentinelSubs() {
  for (auto& s : sentinel_subs) {
    if (s->ac == nullptr) continue;
    redisAsyncContext* ac = s->ac;
    s->ac = nullptr;
    redisAsyncFree(ac);  // its subscription callbacks run with NULL
  }
}

void RedisRuntime::Impl::OnSentinelConnect(const redisAsyncContext* ac, int status) {
  auto* sub = static_cast<SentinelSub*>(ac->data);
  if (status != REDIS_OK && sub->ac == ac) sub->ac = nullptr;  // hiredis frees it after this callback
}

void RedisRuntime::Impl::OnSentinelDisconnect(const redisAsyncContext* ac, int) {
  auto* sub = static_cast<SentinelSub*>(ac->data);
  if (sub->ac == ac) sub->ac = nullptr;
}

void RedisRuntime::Impl::OnSentinelReply(redisAsyncContext*, void* r, void* privdata) {
  auto* sub = static_cast<SentinelSub*>(privdata);
  const auto* reply = static_cast<const redisReply*>(r);
  if (reply == nullptr || reply->type != REDIS_REPLY_ARRAY || reply->elements < 3) return;
  const redisReply* kind = reply->element[0];
  if (kind->type != REDIS_REPLY_STRING) return;
  const std::string k(kind->str, kind->len);
  if (k == "subscribe") {
    ++sub->confirmed;
  } else if (k == "message" && reply->element[1]->type == REDIS_REPLY_STRING &&
             reply->element[2]->type == REDIS_REPLY_STRING) {
    sub->rt->OnSentinelEvent(sub->index, std::string(reply->element[1]->str, reply->element[1]->len),
                             std::string(reply->element[2]->str, reply->element[2]->len));
  }
}

void RedisRuntime::Impl::OnSentinelEvent(int sentinel, const std::string& channel, const std::string& payload) {
  if (!running) return;
  SentinelFailover& fo = sentinel_fo;
  const int64_t now = TrueNowUs();
  auto first = [&](int64_t* t) {
    if (*t < 0 && fo.killed_us >= 0) *t = now;
  };
  if (channel == "+odown") {
    first(&fo.odown_us);
  } else if (channel == "+failover-state-wait-promotion") {
    first(&fo.promote_sent_us);
  } else if (channel == "+promoted-slave") {
    first(&fo.promoted_us);
  } else if (channel == "-failover-abort-no-good-slave") {
    Note("sentinel " + std::to_string(sentinel) + " at " + Ms(now) + ": -failover-abort-no-good-slave " + payload);
  } else if (channel == "+switch-master") {
    // "<name> <old-ip> <old-port> <new-ip> <new-port>"
    std::istringstream in(payload);
    std::string name, old_host, old_port, host;
    int port = 0;
    if (!(in >> name >> old_host >> old_port >> host >> port) || name != sentinels->options().master_name) return;
    if (host == ep_host[0] && port == ep_port[0]) return;  // another sentinel said it first: followed
    if (fo.switch_from < 0) fo.switch_from = sentinel;
    // Not from inside hiredis's callback: FollowSwitch frees the clients' contexts.
    After(0, [this, host, port] { FollowSwitch(host, port); });
  }
}

void RedisRuntime::Impl::KillMasterForSentinel(const FaultAction& f) {
  const int master = ep_server[0];
  if (master < 0) return FaultFailed(f, "node 0's master is not one of locklab's servers");
  if (Status s = servers->KillMasterResumeReplica(master); !s.ok()) return FaultFailed(f, s.message());
  sentinel_fo.killed_us = TrueNowUs();
  sentinel_fo.at_us = f.at_us;
  CloseEndpoint(0);  // commands on the dead master's connections: kTimeout; reconnects are refused
  Record(FaultRecord{-1, Ev::kFault, 0, "node 0's master crashes; Redis Sentinel is to promote its replica"});
  ++faults_pending;
  sentinel_fo.deadline_ev = event_new(base, -1, 0, &Impl::OnSentinelDeadline, this);
  const timeval tv = Tv(kSentinelWaitUs);
  event_add(sentinel_fo.deadline_ev, &tv);
}

void RedisRuntime::Impl::OnSentinelDeadline(evutil_socket_t, short, void* arg) {
  auto* rt = static_cast<Impl*>(arg);
  --rt->faults_pending;
  rt->Fail("redis runtime: Redis Sentinel did not promote node 0's replica within " + Ms(kSentinelWaitUs) +
           " of the master's death; sentinel 0's log ends with:\n" + rt->sentinels->LogTail(0));
}

void RedisRuntime::Impl::FollowSwitch(const std::string& host, int port) {
  if (host == ep_host[0] && port == ep_port[0]) return;
  SentinelFailover& fo = sentinel_fo;
  const int64_t now = TrueNowUs();
  int server = -1;
  for (int i = 0; i < servers->count(); ++i)
    if (servers->port(i) == port) server = i;
  if (server < 0) return Fail("redis runtime: Sentinel switched node 0 to " + host + ":" + std::to_string(port) +
                              ", which is none of locklab's servers");
  ep_host[0] = host;
  ep_port[0] = port;
  ep_server[0] = server;
  CloseEndpoint(0);  // every client reconnects to the new master on its next command
  if (Status s = LoadScripts(host, port); !s.ok()) Note("failover: SCRIPT LOAD on the promoted replica: " + s.message());
  const std::string where = host + ":" + std::to_string(port);
  if (fo.killed_us < 0 || fo.switch_us >= 0) {
    Note("Sentinel switched node 0 to " + where + " at " + Ms(now) + " by itself (no failover fault asked for it)");
    return;
  }
  fo.switch_us = now;
  if (fo.deadline_ev != nullptr) {
    event_free(fo.deadline_ev);  // frees a pending timer too
    fo.deadline_ev = nullptr;
    --faults_pending;
  }
  Record(FaultRecord{-1, Ev::kFault, now - fo.killed_us,
                     "Redis Sentinel promoted node 0's replica (+switch-master " + Ms(now - fo.killed_us) +
                         " after the master died; unreplicated writes lost)"});
  auto after = [&](int64_t t) { return t < 0 ? std::string("not seen") : Ms(t - fo.killed_us); };
  Note("failover node 0 by Redis Sentinel: replica cut off at " + Ms(fo.at_us) + " (planned), master killed at " +
       Ms(fo.killed_us) + "; then +odown after " + after(fo.odown_us) + ", REPLICAOF NO ONE sent after " +
       after(fo.promote_sent_us) + ", +promoted-slave after " + after(fo.promoted_us) + ", +switch-master after " +
       after(fo.switch_us) + " (first from sentinel " + std::to_string(fo.switch_from) + "); clients now use " + where);
}

}  // namespace locklab
