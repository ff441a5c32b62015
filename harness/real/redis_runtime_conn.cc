// The real runtime's hiredis connections and its libevent adapter for them.
#include "harness/real/redis_runtime_impl.h"


namespace locklab {

void RedisRuntime::Impl::WriteSoon(Conn& conn) {
  if (!conn.connected) return;  // hiredis writes it once connected
  // Write now rather than on the next loop pass (saves a poll per command). Not from inside a
  // reply callback: a failed write frees the context, which hiredis 0.14 does not survive
  // there; those connections are flushed when the read handler returns.
  if (in_read > 0) {
    if (!conn.flush_pending) {
      conn.flush_pending = true;
      flush.push_back(&conn);
    }
  } else {
    redisAsyncHandleWrite(conn.ac);
  }
}

void RedisRuntime::Impl::FlushWrites() {
  // Bounded: each connection is in the list at most once.
  std::vector<Conn*> todo;
  todo.swap(flush);
  for (Conn* conn : todo) {
    conn->flush_pending = false;
    if (conn->ac != nullptr && conn->connected) redisAsyncHandleWrite(conn->ac);
  }
}

void RedisRuntime::Impl::AdRead(evutil_socket_t, short, void* arg) {
  auto* a = static_cast<Adapter*>(arg);
  Impl* rt = a->rt;
  ++rt->in_read;
  redisAsyncHandleRead(a->ac);  // may free the context, and `a` with it
  if (--rt->in_read != 0) return;
  if (!rt->flush.empty()) rt->FlushWrites();
  // The loop has just polled the sockets: what the replies made ready (a client's zero-length
  // sleep after its reply, say) runs now rather than one loop turn later.
  if (!rt->ready.empty()) rt->RunReadyBatch();
}

void RedisRuntime::Impl::AdWrite(evutil_socket_t, short, void* arg) {
  redisAsyncHandleWrite(static_cast<Adapter*>(arg)->ac);
}

void RedisRuntime::Impl::Attach(redisAsyncContext* ac) {
  auto* a = new Adapter{this, ac, nullptr, nullptr};
  a->rev = event_new(base, ac->c.fd, EV_READ | EV_PERSIST, &Impl::AdRead, a);
  a->wev = event_new(base, ac->c.fd, EV_WRITE, &Impl::AdWrite, a);
  ac->ev.data = a;
  ac->ev.addRead = [](void* p) { event_add(static_cast<Adapter*>(p)->rev, nullptr); };
  ac->ev.delRead = [](void* p) { event_del(static_cast<Adapter*>(p)->rev); };
  ac->ev.addWrite = [](void* p) { event_add(static_cast<Adapter*>(p)->wev, nullptr); };
  ac->ev.delWrite = [](void* p) { event_del(static_cast<Adapter*>(p)->wev); };
  ac->ev.cleanup = [](void* p) {
    auto* a = static_cast<Adapter*>(p);
    event_free(a->rev);
    event_free(a->wev);
    delete a;
  };
  event_add(a->rev, nullptr);
  event_add(a->wev, nullptr);  // the first write event completes the connect
}

Status RedisRuntime::Impl::EnsureConnected(Conn& conn) {
  if (conn.ac != nullptr) return Status::Ok();
  const std::string& host = ep_host[static_cast<size_t>(conn.endpoint)];
  const int port = ep_port[static_cast<size_t>(conn.endpoint)];
  redisAsyncContext* ac = redisAsyncConnect(host.c_str(), port);
  if (ac == nullptr) return Status::Failed("cannot connect to " + ServerName(conn.endpoint) + ": out of memory");
  if (ac->err) {
    const Status failed = Status::Failed("cannot connect to " + ServerName(conn.endpoint) + ": " + ac->errstr);
    redisAsyncFree(ac);
    return failed;
  }
  ac->data = &conn;
  Attach(ac);
  redisAsyncSetConnectCallback(ac, &Impl::OnConnect);
  redisAsyncSetDisconnectCallback(ac, &Impl::OnDisconnect);
  conn.ac = ac;
  conn.connected = false;
  return Status::Ok();
}

void RedisRuntime::Impl::OnConnect(const redisAsyncContext* ac, int status) {
  auto* conn = static_cast<Conn*>(ac->data);
  if (status == REDIS_OK) {
    conn->connected = true;
    if (!conn->sub) ++conn->rt->conn_ok;
    return;
  }
  if (conn->sub) {  // hiredis frees it after this callback; its subscriptions fail (OnSubReply)
    if (conn->ac == ac) {
      conn->ac = nullptr;
      conn->connected = false;
    }
    return;
  }
  ++conn->rt->conn_failed;
  if (conn->rt->first_conn_error.empty())
    conn->rt->first_conn_error = conn->rt->ServerName(conn->endpoint) + ": " + (ac->errstr != nullptr ? ac->errstr : "?");
  if (conn->ac == ac) {  // hiredis frees it after this callback
    conn->ac = nullptr;
    conn->connected = false;
  }
}

void RedisRuntime::Impl::OnDisconnect(const redisAsyncContext* ac, int) {
  auto* conn = static_cast<Conn*>(ac->data);
  if (conn->ac == ac) {
    conn->ac = nullptr;
    conn->connected = false;
  }
}

void RedisRuntime::Impl::CloseEndpoint(int endpoint) {
  CloseSubConns(endpoint);
  for (auto& c : clients) {
    Conn& conn = c->conns[static_cast<size_t>(endpoint)];
    if (conn.ac == nullptr) continue;
    redisAsyncContext* ac = conn.ac;
    conn.ac = nullptr;
    conn.connected = false;
    redisAsyncFree(ac);  // commands on it: OnReply(NULL) -> kTimeout (they may have run)
  }
}


std::string RedisRuntime::Impl::ServerName(int endpoint) const {
  if (endpoint < 0 || endpoint >= cfg.nodes) return "node " + std::to_string(endpoint);
  return "node " + std::to_string(endpoint) + " (" + ep_host[static_cast<size_t>(endpoint)] + ":" +
         std::to_string(ep_port[static_cast<size_t>(endpoint)]) + ")";
}


void RedisRuntime::Impl::CloseSubConns(int endpoint) {
  for (auto& c : clients)
    for (auto& conn : c->sub_conns) {
      if (conn.ac == nullptr || (endpoint >= 0 && conn.endpoint != endpoint)) continue;
      redisAsyncContext* ac = conn.ac;
      conn.ac = nullptr;
      conn.connected = false;
      redisAsyncFree(ac);  // its subscription callbacks run with NULL: no more messages
    }
}


}  // namespace locklab
