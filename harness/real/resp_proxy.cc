// RespProxy: see resp_proxy.h.
#include "harness/real/resp_proxy.h"

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>

#include "harness/real/real_clock.h"

namespace locklab {
namespace {

using K = FaultAction::Kind;
constexpr int64_t kMaxInlineBytes = 64 * 1024;
constexpr int64_t kMaxWords = 1024 * 1024;
constexpr int64_t kTickUs = 20'000;  // how often the loop looks at Stop() and the time limit

// "12\r\n" at data[pos...]: the number, pos moved past the CRLF; false when not complete or bad.
// *bad is set when the bytes can never be a number.
bool ReadNumber(std::string_view data, size_t* pos, int64_t* out, bool* bad) {
  const size_t crlf = data.find("\r\n", *pos);
  if (crlf == std::string_view::npos) {
    *bad = data.size() - *pos > 20;
    return false;
  }
  int64_t v = 0;
  if (crlf == *pos || crlf - *pos > 18) return *bad = true, false;
  for (size_t i = *pos; i < crlf; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(data[i]))) return *bad = true, false;
    v = v * 10 + (data[i] - '0');
  }
  *out = v;
  *pos = crlf + 2;
  return true;
}

std::string Upper(std::string_view s) {
  std::string u(s);
  for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return u;
}

int64_t InlineCommand(std::string_view data, std::string* name) {
  const size_t nl = data.find('\n');
  if (nl == std::string_view::npos) return static_cast<int64_t>(data.size()) > kMaxInlineBytes ? -1 : 0;
  std::string_view line = data.substr(0, nl);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  const size_t start = line.find_first_not_of(' ');
  line = start == std::string_view::npos ? std::string_view() : line.substr(start);
  *name = Upper(line.substr(0, line.find(' ')));
  return static_cast<int64_t>(nl + 1);
}

}  // namespace

int64_t NextRespCommand(std::string_view data, std::string* name) {
  if (data.empty()) return 0;
  if (data[0] != '*') return InlineCommand(data, name);
  size_t pos = 1;
  int64_t words = 0;
  bool bad = false;
  if (!ReadNumber(data, &pos, &words, &bad)) return bad ? -1 : 0;
  if (words < 1 || words > kMaxWords) return -1;
  for (int64_t i = 0; i < words; ++i) {
    if (pos >= data.size()) return 0;
    if (data[pos] != '$') return -1;
    ++pos;
    int64_t len = 0;
    if (!ReadNumber(data, &pos, &len, &bad)) return bad ? -1 : 0;
    if (data.size() < pos + static_cast<size_t>(len) + 2) return 0;
    if (data.compare(pos + static_cast<size_t>(len), 2, "\r\n") != 0) return -1;
    if (i == 0) *name = Upper(data.substr(pos, static_cast<size_t>(len)));
    pos += static_cast<size_t>(len) + 2;
  }
  return static_cast<int64_t>(pos);
}

Status ValidateProxyFaults(const ProxyOptions& o) {
  FaultWorld world;
  world.clients = o.max_connections;
  world.nodes = 1;
  for (const FaultAction& f : o.faults) {
    LOCKLAB_RETURN_IF_ERROR(ValidateFault(f, world));
    if (f.kind != K::kDelayMessage && f.kind != K::kPauseClient && f.kind != K::kPartition &&
        f.kind != K::kCrashClient)
      return Status::Invalid(std::string("fault ") + FaultKindName(f.kind) +
                             ": the proxy applies delay_message, pause_client, partition and crash_client");
    if (f.jitter_us != 0)
      return Status::Invalid(std::string("fault ") + FaultKindName(f.kind) + ": the proxy takes no jitter_ms (no seed)");
  }
  if (o.upstream_port < 1 || o.upstream_port > 65535) return Status::Invalid("--upstream: give HOST:PORT");
  if (o.listen_port < 0 || o.listen_port > 65535) return Status::Invalid("--port: 0 to 65535");
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------

struct ProxyConn;

struct RespProxy::Impl {
  RespProxy* owner = nullptr;
  ProxyOptions o;
  event_base* base = nullptr;
  evconnlistener* listener = nullptr;
  event* tick = nullptr;
  std::vector<event*> fault_timers;
  std::vector<std::unique_ptr<ProxyConn>> conns;
  std::vector<bool> fired;  // per fault
  sockaddr_in upstream{};
  int64_t start_us = 0;

  double Ms(int64_t us) const { return static_cast<double>(us - start_us) / 1000.0; }
  void Report(nlohmann::json j) {
    j["t_ms"] = std::round(Ms(MonotonicNowUs()) * 1000) / 1000;
    std::lock_guard<std::mutex> lock(owner->reports_mu_);
    owner->reports_.push_back(j.dump());
  }
  nlohmann::json FaultJson(size_t f) const {
    const FaultAction& a = o.faults[f];
    nlohmann::json j = {{"fault", FaultKindName(a.kind)}, {"conn", a.target}};
    if (a.kind == K::kDelayMessage) j["command"] = a.command;
    if (a.kind == K::kDelayMessage || !a.on_send.empty()) j["occurrence"] = a.occurrence;
    if (!a.on_send.empty()) j["on_send"] = a.on_send;
    if (a.kind != K::kCrashClient) j["asked_ms"] = static_cast<double>(a.duration_us) / 1000.0;
    return j;
  }
  void Accept(evutil_socket_t fd);
  void FireTimed(size_t f);
  void Cleanup();
};

// A command on its way up: when it came, when it may go, the fault that delays it or that it triggers.
struct Pending {
  std::string bytes;
  int64_t received_us = 0;
  int64_t release_us = 0;
  int delay_fault = -1;
  int trigger_fault = -1;
};

struct ProxyConn {
  RespProxy::Impl* px = nullptr;
  int id = 0;
  bufferevent* down = nullptr;  // the client's side
  bufferevent* up = nullptr;    // the server's side
  event* timer = nullptr;
  std::string parse_buf;
  std::deque<Pending> queue;
  std::map<std::string, int> sent_by_name;
  int sent_total = 0;
  int64_t hold_until_us = 0, hold_start_us = 0;
  int hold_fault = -1;
  int64_t drop_until_us = 0, dropped_bytes = 0;
  int drop_fault = -1;

  bool closed() const { return down == nullptr && up == nullptr; }
  void Cut(const char* why);
  void CutAfterFlush();
  void OnDownRead();
  void OnUpRead();
  void Pump();
  void Tick();
  void Apply(size_t f, int64_t now_us);
  void ArmTimer(int64_t at_us);
  int MatchDelay(const std::string& name, int occurrence_of_name) const;
  int MatchTrigger(const std::string& name, int occurrence_of_name) const;
};

void ProxyConn::ArmTimer(int64_t at_us) {
  const int64_t wait_us = std::max<int64_t>(0, at_us - MonotonicNowUs());
  timeval tv{static_cast<time_t>(wait_us / 1'000'000), static_cast<suseconds_t>(wait_us % 1'000'000)};
  evtimer_add(timer, &tv);
}

void ProxyConn::Cut(const char* why) {
  if (down != nullptr) bufferevent_free(down);
  if (up != nullptr) bufferevent_free(up);
  down = up = nullptr;
  queue.clear();
  evtimer_del(timer);
  if (why != nullptr) px->Report({{"conn", id}, {"cut", why}});
}

// A crash after a command went up: both sides close once the command has been written to the
// server (it reaches the server; its reply is never seen); meanwhile nothing more is read.
void ProxyConn::CutAfterFlush() {
  if (down != nullptr) bufferevent_disable(down, EV_READ);
  queue.clear();
  evtimer_del(timer);
  if (up == nullptr || evbuffer_get_length(bufferevent_get_output(up)) == 0) return Cut(nullptr);
  bufferevent_disable(up, EV_READ);
  bufferevent_setcb(
      up, nullptr,
      [](bufferevent*, void* arg) {
        auto* c = static_cast<ProxyConn*>(arg);
        if (c->up != nullptr && evbuffer_get_length(bufferevent_get_output(c->up)) == 0) c->Cut(nullptr);
      },
      [](bufferevent*, short what, void* arg) {
        if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) static_cast<ProxyConn*>(arg)->Cut(nullptr);
      },
      this);
}

// A command name matches a fault's as Command::Name() would (MatchCommandName), "*" any.
bool NameMatches(const std::string& wanted, const std::string& name) {
  return wanted == "*" || Upper(wanted) == name;
}

int ProxyConn::MatchDelay(const std::string& name, int nth_of_name) const {
  const auto& faults = px->o.faults;
  for (size_t f = 0; f < faults.size(); ++f) {
    const FaultAction& a = faults[f];
    if (a.kind != K::kDelayMessage || a.target != id || px->fired[f] || !NameMatches(a.command, name)) continue;
    if (a.occurrence == (a.command == "*" ? sent_total : nth_of_name)) return static_cast<int>(f);
  }
  return -1;
}

int ProxyConn::MatchTrigger(const std::string& name, int nth_of_name) const {
  const auto& faults = px->o.faults;
  for (size_t f = 0; f < faults.size(); ++f) {
    const FaultAction& a = faults[f];
    if (a.on_send.empty() || a.target != id || px->fired[f] || !NameMatches(a.on_send, name)) continue;
    if (a.occurrence == (a.on_send == "*" ? sent_total : nth_of_name)) return static_cast<int>(f);
  }
  return -1;
}

void ProxyConn::OnDownRead() {
  evbuffer* in = bufferevent_get_input(down);
  const size_t n = evbuffer_get_length(in);
  const int64_t now = MonotonicNowUs();
  if (now < drop_until_us) {  // a partition: what the client sends is lost
    dropped_bytes += static_cast<int64_t>(n);
    evbuffer_drain(in, n);
    return;
  }
  const size_t old = parse_buf.size();
  parse_buf.resize(old + n);
  evbuffer_remove(in, parse_buf.data() + old, n);
  size_t used = 0;
  // Bounded: every pass takes at least one byte of parse_buf.
  while (used < parse_buf.size()) {
    std::string name;
    const int64_t len = NextRespCommand(std::string_view(parse_buf).substr(used), &name);
    if (len == 0) break;
    if (len < 0) return Cut("the client sent something that is not RESP");
    Pending p;
    p.bytes = parse_buf.substr(used, static_cast<size_t>(len));
    used += static_cast<size_t>(len);
    const int nth = ++sent_by_name[name];
    ++sent_total;
    p.received_us = p.release_us = now;
    p.delay_fault = MatchDelay(name, nth);
    if (p.delay_fault >= 0) {
      px->fired[static_cast<size_t>(p.delay_fault)] = true;
      p.release_us = now + px->o.faults[static_cast<size_t>(p.delay_fault)].duration_us;
    }
    if (!queue.empty()) p.release_us = std::max(p.release_us, queue.back().release_us);  // in order
    p.trigger_fault = MatchTrigger(name, nth);
    if (p.trigger_fault >= 0) px->fired[static_cast<size_t>(p.trigger_fault)] = true;
    queue.push_back(std::move(p));
  }
  parse_buf.erase(0, used);
  Pump();
}

void ProxyConn::OnUpRead() {
  evbuffer* in = bufferevent_get_input(up);
  const int64_t now = MonotonicNowUs();
  if (now < drop_until_us) {
    dropped_bytes += static_cast<int64_t>(evbuffer_get_length(in));
    evbuffer_drain(in, evbuffer_get_length(in));
    return;
  }
  if (now < hold_until_us) return;  // held: Tick forwards it when the hold ends
  bufferevent_write_buffer(down, in);
}

// Sends what may go up now; arms the timer for what must wait.
void ProxyConn::Pump() {
  // Bounded by the queue, which only this loop shrinks.
  while (!closed() && !queue.empty()) {
    const int64_t now = MonotonicNowUs();
    if (now < hold_until_us) return ArmTimer(hold_until_us);
    Pending& p = queue.front();
    if (p.release_us > now) return ArmTimer(p.release_us);
    bufferevent_write(up, p.bytes.data(), p.bytes.size());
    if (p.delay_fault >= 0) {
      nlohmann::json j = px->FaultJson(static_cast<size_t>(p.delay_fault));
      j["measured_ms"] = std::round(static_cast<double>(now - p.received_us)) / 1000.0;
      px->Report(j);
    }
    const int trigger = p.trigger_fault;
    queue.pop_front();
    if (trigger >= 0) Apply(static_cast<size_t>(trigger), now);
  }
}

void ProxyConn::Apply(size_t f, int64_t now_us) {
  const FaultAction& a = px->o.faults[f];
  if (a.kind == K::kCrashClient) {
    px->Report(px->FaultJson(f));
    return CutAfterFlush();
  }
  if (a.kind == K::kPauseClient) {
    hold_start_us = now_us;
    hold_until_us = std::max(hold_until_us, now_us + a.duration_us);
    hold_fault = static_cast<int>(f);
  } else if (a.kind == K::kPartition) {
    drop_until_us = now_us + a.duration_us;
    drop_fault = static_cast<int>(f);
    queue.clear();  // what had not gone up yet is lost too
    evbuffer* in = bufferevent_get_input(up);
    dropped_bytes += static_cast<int64_t>(evbuffer_get_length(in));
    evbuffer_drain(in, evbuffer_get_length(in));
  }
  ArmTimer(std::max(hold_until_us, drop_until_us));
}

void ProxyConn::Tick() {
  const int64_t now = MonotonicNowUs();
  if (drop_fault >= 0 && now >= drop_until_us) {
    nlohmann::json j = px->FaultJson(static_cast<size_t>(drop_fault));
    j["measured_ms"] = std::round(static_cast<double>(now - (drop_until_us - px->o.faults[static_cast<size_t>(drop_fault)].duration_us))) / 1000.0;
    j["dropped_bytes"] = dropped_bytes;
    px->Report(j);
    drop_fault = -1;
    return Cut("the partition ended");
  }
  if (hold_fault >= 0 && now >= hold_until_us) {
    nlohmann::json j = px->FaultJson(static_cast<size_t>(hold_fault));
    j["measured_ms"] = std::round(static_cast<double>(now - hold_start_us)) / 1000.0;
    px->Report(j);
    hold_fault = -1;
    if (up != nullptr && down != nullptr) bufferevent_write_buffer(down, bufferevent_get_input(up));
  }
  // A timer may fire a little early: what has not ended yet is looked at again.
  if (hold_fault >= 0 || drop_fault >= 0) ArmTimer(std::max(hold_until_us, drop_until_us));
  Pump();
}

// ---------------------------------------------------------------------------------------------
// libevent callbacks

void OnDownReadCb(bufferevent*, void* arg) { static_cast<ProxyConn*>(arg)->OnDownRead(); }
void OnUpReadCb(bufferevent*, void* arg) { static_cast<ProxyConn*>(arg)->OnUpRead(); }
void OnConnTimerCb(evutil_socket_t, short, void* arg) { static_cast<ProxyConn*>(arg)->Tick(); }
void OnEventCb(bufferevent* bev, short what, void* arg) {
  auto* c = static_cast<ProxyConn*>(arg);
  if (what & BEV_EVENT_CONNECTED) return;
  if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
    c->Cut(bev == c->down ? "the client closed the connection" : "the server closed the connection");
}

void RespProxy::Impl::Accept(evutil_socket_t fd) {
  if (static_cast<int>(conns.size()) >= o.max_connections) {
    evutil_closesocket(fd);
    return;
  }
  auto c = std::make_unique<ProxyConn>();
  c->px = this;
  c->id = static_cast<int>(conns.size());
  c->timer = evtimer_new(base, &OnConnTimerCb, c.get());
  c->down = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
  c->up = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
  bufferevent_setcb(c->down, &OnDownReadCb, nullptr, &OnEventCb, c.get());
  bufferevent_setcb(c->up, &OnUpReadCb, nullptr, &OnEventCb, c.get());
  ProxyConn* raw = c.get();
  conns.push_back(std::move(c));
  if (bufferevent_socket_connect(raw->up, reinterpret_cast<sockaddr*>(&upstream), sizeof(upstream)) != 0)
    return raw->Cut("cannot connect to the server");
  evutil_make_socket_closeonexec(bufferevent_getfd(raw->up));
  evutil_make_socket_nonblocking(fd);
  bufferevent_enable(raw->down, EV_READ | EV_WRITE);
  bufferevent_enable(raw->up, EV_READ | EV_WRITE);
  Report({{"conn", raw->id}, {"accepted", true}});
}

void RespProxy::Impl::FireTimed(size_t f) {
  const FaultAction& a = o.faults[f];
  fired[f] = true;
  if (a.target >= static_cast<int>(conns.size()) || conns[static_cast<size_t>(a.target)]->closed()) {
    nlohmann::json j = FaultJson(f);
    j["skipped"] = "no open connection " + std::to_string(a.target) + " at " + std::to_string(a.at_us / 1000) + " ms";
    return Report(j);
  }
  conns[static_cast<size_t>(a.target)]->Apply(f, MonotonicNowUs());
}

void RespProxy::Impl::Cleanup() {
  for (auto& c : conns) {
    c->Cut(nullptr);
    event_free(c->timer);
  }
  conns.clear();
  for (event* e : fault_timers) event_free(e);
  if (tick != nullptr) event_free(tick);
  if (listener != nullptr) evconnlistener_free(listener);
  if (base != nullptr) event_base_free(base);
}

namespace {

struct FaultTimerArg {
  RespProxy::Impl* px;
  size_t fault;
};

void OnAcceptCb(evconnlistener*, evutil_socket_t fd, sockaddr*, int, void* arg) {
  static_cast<RespProxy::Impl*>(arg)->Accept(fd);
}

Status ParseUpstream(const ProxyOptions& o, sockaddr_in* out) {
  out->sin_family = AF_INET;
  out->sin_port = htons(static_cast<uint16_t>(o.upstream_port));
  const std::string host = o.upstream_host == "localhost" ? "127.0.0.1" : o.upstream_host;
  if (inet_pton(AF_INET, host.c_str(), &out->sin_addr) != 1 || (ntohl(out->sin_addr.s_addr) >> 24) != 127)
    return Status::Invalid("--upstream " + o.upstream_host + ": a loopback IPv4 address (127.x.x.x or localhost)");
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<RespProxy>> RespProxy::Start(const ProxyOptions& o) {
  LOCKLAB_RETURN_IF_ERROR(ValidateProxyFaults(o));
  std::unique_ptr<RespProxy> p(new RespProxy());
  p->impl_ = std::make_unique<Impl>();
  Impl& im = *p->impl_;
  im.owner = p.get();
  im.o = o;
  im.fired.assign(o.faults.size(), false);
  LOCKLAB_RETURN_IF_ERROR(ParseUpstream(o, &im.upstream));
  event_config* ec = event_config_new();
  event_config_set_flag(ec, EVENT_BASE_FLAG_NO_CACHE_TIME);  // timers from a fresh clock, µs precise
  event_config_set_flag(ec, EVENT_BASE_FLAG_PRECISE_TIMER);
  im.base = event_base_new_with_config(ec);
  event_config_free(ec);
  if (im.base == nullptr) return Status::Failed("proxy: cannot create the libevent loop");
  sockaddr_in listen_addr{};
  listen_addr.sin_family = AF_INET;
  listen_addr.sin_port = htons(static_cast<uint16_t>(o.listen_port));
  listen_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // Close-on-exec (the accepted sockets too): a child process started meanwhile must not keep a
  // connection open after the proxy cuts it.
  im.listener = evconnlistener_new_bind(im.base, &OnAcceptCb, &im,
                                        LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC, 64,
                                        reinterpret_cast<sockaddr*>(&listen_addr), sizeof(listen_addr));
  if (im.listener == nullptr) {
    im.Cleanup();
    im.base = nullptr;
    return Status::Invalid("--port " + std::to_string(o.listen_port) + ": cannot listen on 127.0.0.1 (" +
                           std::strerror(errno) + ")");
  }
  sockaddr_in bound{};
  socklen_t len = sizeof(bound);
  getsockname(evconnlistener_get_fd(im.listener), reinterpret_cast<sockaddr*>(&bound), &len);
  p->port_ = ntohs(bound.sin_port);
  p->thread_ = std::thread([raw = p.get()] { raw->Serve(); });
  return p;
}

void RespProxy::Serve() {
  Impl& im = *impl_;
  im.start_us = MonotonicNowUs();
  std::vector<std::unique_ptr<FaultTimerArg>> args;
  for (size_t f = 0; f < im.o.faults.size(); ++f) {
    const FaultAction& a = im.o.faults[f];
    if (a.kind == K::kDelayMessage || !a.on_send.empty()) continue;
    args.push_back(std::make_unique<FaultTimerArg>(FaultTimerArg{&im, f}));
    event* e = evtimer_new(
        im.base, [](evutil_socket_t, short, void* arg) {
          auto* t = static_cast<FaultTimerArg*>(arg);
          t->px->FireTimed(t->fault);
        },
        args.back().get());
    timeval tv{static_cast<time_t>(a.at_us / 1'000'000), static_cast<suseconds_t>(a.at_us % 1'000'000)};
    evtimer_add(e, &tv);
    im.fault_timers.push_back(e);
  }
  im.tick = event_new(
      im.base, -1, EV_PERSIST,
      [](evutil_socket_t, short, void* arg) {
        auto* self = static_cast<RespProxy*>(arg);
        const Impl& i = *self->impl_;
        if (self->stop_.load() || MonotonicNowUs() - i.start_us > i.o.max_duration_ms * 1000)
          event_base_loopbreak(i.base);
      },
      this);
  timeval tick_tv{0, static_cast<suseconds_t>(kTickUs)};
  evtimer_add(im.tick, &tick_tv);
  event_base_dispatch(im.base);
  im.Cleanup();
  done_.store(true);
}

RespProxy::~RespProxy() {
  Stop();
  if (thread_.joinable()) thread_.join();
}

void RespProxy::Stop() { stop_.store(true); }

void RespProxy::Wait(const std::atomic<bool>& stop) {
  // Bounded by max_duration_ms: the loop then stops by itself and done_ turns true.
  while (!done_.load() && !stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

std::vector<std::string> RespProxy::Reports() const {
  std::lock_guard<std::mutex> lock(reports_mu_);
  return reports_;
}

}  // namespace locklab
