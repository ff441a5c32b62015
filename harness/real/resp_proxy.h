// RespProxy: a fault proxy for other people's Redis clients (`locklab proxy`). It listens on a
// loopback port, forwards every connection to one upstream redis-server, and applies a fault plan
// written with the fault kinds and fields of runs (sim/fault.h, --fault KIND:k=v,...), where a
// fault's `target` is a connection, numbered from 0 in the order the proxy accepted them:
//
//   delay_message:target=C,command=SET,occurrence=N,duration_ms=D
//       the N-th SET that connection C sends reaches the server D ms late ("*" = any command);
//       the commands after it wait behind it (a connection's commands stay in order)
//   pause_client:target=C,at_ms=T,duration_ms=D   (or on_send=NAME,occurrence=N instead of at_ms)
//       everything of connection C is held in both directions for D ms (its replies included);
//       with on_send the command that triggers it still reaches the server, its reply waits
//   partition:target=C,at_ms=T,duration_ms=D
//       what C sends and what the server answers it is dropped for D ms, then the connection is
//       cut (a byte stream cannot go on after lost messages; the client must reconnect)
//   crash_client:target=C,at_ms=T                 (or on_send=NAME,occurrence=N)
//       the connection is cut (both sides closed); with on_send, after the command went up
//
// The proxy speaks RESP only to find command boundaries and names (multibulk arrays and inline
// commands); replies are forwarded as bytes. Each fault, when it has been applied, is reported
// as one JSON line: what was asked and what was measured (a delay's actual lateness, a hold's
// actual length, bytes dropped). Times are ms from the proxy's start.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "algorithms/status.h"
#include "sim/fault.h"

namespace locklab {

struct ProxyOptions {
  int listen_port = 0;  // 127.0.0.1; 0: a free port (RespProxy::port() says which)
  std::string upstream_host = "127.0.0.1";
  int upstream_port = 0;
  std::vector<FaultAction> faults;
  int64_t max_duration_ms = 3'600'000;  // the proxy stops after this long
  int max_connections = 10'000;         // accepted over its life; more are refused (closed)
};

// Invalid (one line, "fault KIND: ...") when a fault is not one the proxy applies or is not valid.
Status ValidateProxyFaults(const ProxyOptions& o);

class RespProxy {
 public:
  // Binds the listening port (Invalid when it cannot: in use, bad upstream) and runs the proxy on
  // a thread of its own until Stop(), the destructor, or max_duration_ms.
  static Result<std::unique_ptr<RespProxy>> Start(const ProxyOptions& o);
  ~RespProxy();
  RespProxy(const RespProxy&) = delete;
  RespProxy& operator=(const RespProxy&) = delete;

  int port() const { return port_; }
  // The fault reports so far, one JSON object each (thread-safe).
  std::vector<std::string> Reports() const;
  // Waits until the proxy has stopped (max_duration_ms), or until `stop` becomes true.
  void Wait(const std::atomic<bool>& stop);
  void Stop();
  bool stopped() const { return done_.load(); }

  struct Impl;

 private:
  RespProxy() = default;
  void Serve();  // the proxy's thread: the event loop until Stop() or the time limit
  int port_ = 0;
  std::unique_ptr<Impl> impl_;
  std::thread thread_;
  std::atomic<bool> stop_{false}, done_{false};
  mutable std::mutex reports_mu_;
  std::vector<std::string> reports_;
  friend struct Impl;
};

// RESP framing of what a client sends: the length in bytes of the first complete command in
// `data` (0: not complete yet; -1: not RESP) and its name upper-cased (the first word).
int64_t NextRespCommand(std::string_view data, std::string* name);

}  // namespace locklab
