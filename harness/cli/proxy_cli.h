// `locklab proxy`: the fault proxy (harness/real/resp_proxy.h) on the command line. It listens on
// 127.0.0.1, forwards to --upstream, applies the --fault plan (the fault kinds and fields of runs;
// target = a connection, numbered in the order the proxy accepts them) and prints one JSON line
// per accepted connection and per applied fault (what was asked, what was measured) on stdout
// until SIGINT/SIGTERM or --duration-ms. Exit 0 stopped; 2 bad input (one line on stderr).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace locklab {

struct ProxyFlags {
  std::string upstream;
  int port = 0;
  std::vector<std::string> faults;
  int64_t duration_ms = 3'600'000;
};

void AddProxyFlags(CLI::App* app, ProxyFlags* f);
int ProxyCommand(const ProxyFlags& f);

// `proxy` added to the locklab command.
class ProxyCli {
 public:
  explicit ProxyCli(CLI::App& app);
  bool parsed() const { return sub_->parsed(); }
  int Run() const { return ProxyCommand(flags_); }

 private:
  CLI::App* sub_ = nullptr;
  ProxyFlags flags_;
};

}  // namespace locklab
