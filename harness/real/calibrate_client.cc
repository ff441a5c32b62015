// The client measurements of Calibrate (calibrate.h): CPU of locklab's own real runtime.
#include <sys/resource.h>

#include <memory>
#include <string>
#include <vector>

#include "harness/real/calibrate_internal.h"
#include "harness/real/redis_runtime.h"
#include "sim/history.h"

namespace locklab::calib {
namespace {

double CpuUs() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto us = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) * 1e6 + static_cast<double>(tv.tv_usec); };
  return us(ru.ru_utime) + us(ru.ru_stime);
}

Task<void> CommandLoop(Env& env, Command cmd, int n) {
  for (int i = 0; i < n; ++i) co_await env.Send(0, cmd);
}

Task<void> SleepLoop(Env& env, int n) {
  for (int i = 0; i < n; ++i) co_await env.SleepUs(100);
}

// One run of `clients` clients doing `n` commands (or sleeps) each: its CPU in µs, from the
// start of Run() to its end (connections are made before).
Result<double> RunCpuUs(const std::string& address, int clients, int n, bool sleeps) {
  BackendConfig cfg;
  cfg.clients = clients;
  cfg.nodes = 1;
  cfg.command_timeout_us = 5'000'000;
  Result<std::unique_ptr<Runtime>> made = MakeRedisRuntime(cfg, {address});
  if (!made.ok()) return made.status().Prefixed("real runtime");
  std::unique_ptr<Runtime> rt = std::move(made).value();
  History history;
  rt->set_history(&history);
  for (int c = 0; c < clients; ++c) {
    Env& env = rt->env(c);
    rt->StartClient(c, sleeps ? SleepLoop(env, n) : CommandLoop(env, Command::Plain({"GET", "calib:c" + std::to_string(c)}), n));
  }
  RuntimeLimits limits;
  limits.max_duration_us = 60'000'000;
  const double t0 = CpuUs();
  if (Status st = rt->Run(limits); !st.ok()) return st.Prefixed("real runtime run");
  const double cpu = CpuUs() - t0;
  if (!sleeps && rt->Commands().total < static_cast<int64_t>(clients) * n)
    return Status::Failed("real runtime: fewer commands ran than sent");
  return cpu;
}

}  // namespace

Status ClientPair(const std::string& address, const Sizes& sizes, ClientSamples* out) {
  for (bool sleeps : {false, true}) {
    Result<double> small = RunCpuUs(address, sizes.clients, sizes.client_m1, sleeps);
    if (!small.ok()) return small.status();
    Result<double> large = RunCpuUs(address, sizes.clients, sizes.client_m2, sleeps);
    if (!large.ok()) return large.status();
    const double extra = static_cast<double>(sizes.clients) * (sizes.client_m2 - sizes.client_m1);
    (sleeps ? out->timer_us : out->per_command_us).push_back((*large - *small) / extra);
  }
  return Status::Ok();
}

}  // namespace locklab::calib
