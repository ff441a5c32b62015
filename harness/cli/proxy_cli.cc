#include "harness/cli/proxy_cli.h"

#include <csignal>
#include <cstdio>
#include <thread>

#include "harness/cli/cli.h"
#include "harness/real/resp_proxy.h"
#include "harness/run/config.h"

namespace locklab {
namespace {

std::atomic<bool> g_stop{false};

void OnSignal(int) { g_stop.store(true); }

Result<ProxyOptions> BuildOptions(const ProxyFlags& f) {
  ProxyOptions o;
  const size_t colon = f.upstream.rfind(':');
  if (colon == std::string::npos) return Status::Invalid("--upstream " + f.upstream + ": give HOST:PORT");
  o.upstream_host = f.upstream.substr(0, colon);
  try {
    size_t used = 0;
    o.upstream_port = std::stoi(f.upstream.substr(colon + 1), &used);
    if (used != f.upstream.size() - colon - 1) throw std::invalid_argument("port");
  } catch (const std::exception&) {
    return Status::Invalid("--upstream " + f.upstream + ": the port is not a number");
  }
  o.listen_port = f.port;
  o.max_duration_ms = f.duration_ms;
  for (const std::string& text : f.faults) {
    Result<FaultAction> a = ParseFaultFlag(text);
    if (!a.ok()) return a.status();
    o.faults.push_back(*a);
  }
  LOCKLAB_RETURN_IF_ERROR(ValidateProxyFaults(o));
  return o;
}

}  // namespace

void AddProxyFlags(CLI::App* app, ProxyFlags* f) {
  app->add_option("--upstream", f->upstream, "the redis-server to forward to (loopback)")
      ->required()
      ->type_name("HOST:PORT");
  app->add_option("--port", f->port, "listen on 127.0.0.1:PORT (0: a free port, printed)")->capture_default_str();
  app->add_option("--fault", f->faults,
                  "KIND:k=v,... (repeatable): delay_message, pause_client, partition, crash_client; "
                  "target = connection number")
      ->type_name("SPEC")
      ->allow_extra_args(false);
  app->add_option("--duration-ms", f->duration_ms, "stop after this long")->type_name("MS")->capture_default_str();
  app->footer(
      "\nFaults (target = the connection's number, 0 = the first the proxy accepted):\n"
      "  delay_message:target=C,command=SET,occurrence=N,duration_ms=D   the N-th SET of C reaches the server D ms late\n"
      "  pause_client:target=C,at_ms=T,duration_ms=D                     hold C's traffic both ways for D ms\n"
      "  pause_client:target=C,on_send=SET,occurrence=N,duration_ms=D    ... right after its N-th SET went up\n"
      "  partition:target=C,at_ms=T,duration_ms=D                        drop C's traffic for D ms, then cut it\n"
      "  crash_client:target=C,at_ms=T (or on_send=NAME,occurrence=N)    cut C's connection\n"
      "Example:\n"
      "  locklab proxy --upstream 127.0.0.1:6379 --port 7000 \\\n"
      "      --fault delay_message:target=0,command=EVALSHA,occurrence=1,duration_ms=1500\n"
      "  (then point the client library at 127.0.0.1:7000: its first release arrives 1.5 s late)\n"
      "Exit status: 0 stopped (SIGINT, SIGTERM or --duration-ms), 2 bad input.\n");
}

ProxyCli::ProxyCli(CLI::App& app)
    : sub_(app.add_subcommand("proxy", "a RESP fault proxy between any client library and a redis-server")) {
  AddProxyFlags(sub_, &flags_);
}

int ProxyCommand(const ProxyFlags& f) {
  Result<ProxyOptions> o = BuildOptions(f);
  if (!o.ok()) return BadInput(o.status().message());
  if (f.duration_ms <= 0) return BadInput("--duration-ms: give a positive number");
  Result<std::unique_ptr<RespProxy>> started = RespProxy::Start(*o);
  if (!started.ok()) return BadInput(started.status().message());
  std::unique_ptr<RespProxy> proxy = std::move(started).value();
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  std::printf("{\"listening\": \"127.0.0.1:%d\", \"upstream\": \"%s\", \"faults\": %zu}\n", proxy->port(),
              f.upstream.c_str(), o->faults.size());
  std::fflush(stdout);
  size_t printed = 0;
  // Bounded by --duration-ms: the proxy then stops by itself.
  while (!g_stop.load() && !proxy->stopped()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const std::vector<std::string> reports = proxy->Reports();
    for (; printed < reports.size(); ++printed) std::printf("%s\n", reports[printed].c_str());
    std::fflush(stdout);
  }
  proxy.reset();
  return kExitOk;
}

}  // namespace locklab
