// The client measurements of Calibrate (calibrate.h): CPU of locklab's own real runtime.
#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "harness/real/calibrate_internal.h"
#include "harness/real/cpu_time.h"
#include "harness/real/redis_runtime.h"
#include "sim/history.h"

namespace locklab::calib {
namespace {

Task<void> CommandLoop(Env& env, Command cmd, int n) {
  for (int i = 0; i < n; ++i) co_await env.Send(0, cmd);
}

Task<void> SleepLoop(Env& env, int n) {
  for (int i = 0; i < n; ++i) co_await env.SleepUs(100);
}

// A retrying client's step: sleep, then one command.
Task<void> SleepCommandLoop(Env& env, Command cmd, int n) {
  for (int i = 0; i < n; ++i) {
    co_await env.SleepUs(100);
    co_await env.Send(0, cmd);
  }
}

// One run of `clients` clients doing `n` commands (or sleeps) each: its CPU in µs, from the
// start of Run() to its end (connections are made before).
// kHeldCommands: every request and reply is held for an injected delay (uniform, mean kHoldUs),
// as the real runtime applies --net-delay-ms: with a timer of its own in this process.
// kSleepCommands: each step a sleep and then a command, as a retrying client's.
enum class Load : uint8_t { kCommands, kSleeps, kHeldCommands, kSleepCommands };
constexpr int64_t kHoldUs = 50;

// One run of the real runtime against `address` (one node, 5 s command timeout, history traced,
// 60 s at most): `start` starts its clients, `check` judges it afterwards (may be empty). The CPU
// of Run() in µs (connections are made before); `blocks`, when given, gets how many times this
// thread (the runtime's loop) blocked during it.
Result<double> RuntimeRunCpuUs(const std::string& address, BackendConfig cfg, const std::function<void(Runtime&)>& start,
                               const std::function<Status(Runtime&)>& check = {}, double* blocks = nullptr) {
  cfg.nodes = 1;
  cfg.command_timeout_us = 5'000'000;
  Result<std::unique_ptr<Runtime>> made = MakeRedisRuntime(cfg, {address});
  if (!made.ok()) return made.status().Prefixed("real runtime");
  std::unique_ptr<Runtime> rt = std::move(made).value();
  History history;
  rt->set_history(&history);
  start(*rt);
  RuntimeLimits limits;
  limits.max_duration_us = 60'000'000;
  const double t0 = CpuUs(), b0 = ThreadBlocks();
  if (Status st = rt->Run(limits); !st.ok()) return st.Prefixed("real runtime run");
  const double cpu = CpuUs() - t0;
  if (blocks != nullptr) *blocks = ThreadBlocks() - b0;
  if (check)
    if (Status st = check(*rt); !st.ok()) return st;
  return cpu;
}

Result<double> RunCpuUs(const std::string& address, int clients, int n, Load load) {
  const bool sleeps = load == Load::kSleeps;
  BackendConfig cfg;
  cfg.clients = clients;
  if (load == Load::kHeldCommands) {  // uniform, as the retry study's: timers fire out of order
    cfg.net.dist = sim::NetModel::Dist::kUniform;
    cfg.net.mean_us = kHoldUs;
  }
  const auto start = [&](Runtime& rt) {
    for (int c = 0; c < clients; ++c) {
      Env& env = rt.env(c);
      Command get = Command::Plain({"GET", "calib:c" + std::to_string(c)});
      if (sleeps) {
        rt.StartClient(c, SleepLoop(env, n));
      } else if (load == Load::kSleepCommands) {
        rt.StartClient(c, SleepCommandLoop(env, std::move(get), n));
      } else {
        rt.StartClient(c, CommandLoop(env, std::move(get), n));
      }
    }
  };
  const auto check = [&](Runtime& rt) {
    if (!sleeps && rt.Commands().total < static_cast<int64_t>(clients) * n)
      return Status::Failed("real runtime: fewer commands ran than sent");
    return Status::Ok();
  };
  return RuntimeRunCpuUs(address, cfg, start, check);
}

// Each client, `n` times, sleeps base_us plus a random part below spread_us, then sends one GET.
struct SleepPlan {
  int n = 0;
  int64_t base_us = 0, spread_us = 1;
};
Task<void> SleepThenGet(Env& env, Command cmd, SleepPlan plan) {
  for (int i = 0; i < plan.n; ++i) {
    co_await env.SleepUs(plan.base_us + static_cast<int64_t>(env.Random() % static_cast<uint64_t>(plan.spread_us)));
    co_await env.Send(0, cmd);
  }
}

// The light load of client.wake_cpu_us: each client sleeps a random time (uniform over
// [0, 2 * mean gap]) `n` times and then sends one GET. With clients * kIdleEventsPerS far below
// what the loop can do, the process idles between events and wakes for nearly every one.
constexpr int64_t kIdleEventsPerS = 2000;
SleepPlan LightLoad(int clients, int n) {
  const int64_t mean_gap_us = static_cast<int64_t>(clients) * 1'000'000 / kIdleEventsPerS;
  return {n, 0, 2 * mean_gap_us + 1};
}

struct IdleRun {
  double cpu_us = 0, blocks = 0;
  std::vector<RedisRuntime::WakeSample> wakes;  // the loop's wake-ups for a timer after idling
};
// Every client on `plan`. With `passes`: every request and reply held for an injected delay
// (as kHeldCommands), the loop's passes recorded there (RedisRuntime::RecordPasses).
Result<IdleRun> IdleRunCost(const std::string& address, int clients, SleepPlan plan,
                            std::vector<RedisRuntime::PassSample>* passes = nullptr) {
  BackendConfig cfg;
  cfg.clients = clients;
  if (passes != nullptr) {
    cfg.net.dist = sim::NetModel::Dist::kUniform;
    cfg.net.mean_us = kHoldUs;
  }
  IdleRun out;
  const auto start = [&](Runtime& rt) {
    static_cast<RedisRuntime&>(rt).RecordWakes(&out.wakes);
    static_cast<RedisRuntime&>(rt).RecordPasses(passes);
    for (int c = 0; c < clients; ++c)
      rt.StartClient(c, SleepThenGet(rt.env(c), Command::Plain({"GET", "calib:c" + std::to_string(c)}), plan));
  };
  Result<double> cpu = RuntimeRunCpuUs(address, cfg, start, {}, &out.blocks);
  if (!cpu.ok()) return cpu.status();
  out.cpu_us = *cpu;
  return out;
}

Task<void> WakeLoop(Env& env, int samples, std::map<int, std::vector<double>>* late) {
  for (int idle_us : kWakeIdleUs) {
    const int n = idle_us >= 10'000 ? std::max(samples / 10, 2) : samples;
    for (int i = 0; i < n; ++i) {
      const double t0 = SteadyUs();
      co_await env.SleepUs(idle_us);
      (*late)[idle_us].push_back(SteadyUs() - t0 - idle_us);
    }
  }
}

// Pub/sub: `subscribers` clients wait for `n` messages each; one more client publishes them, one
// at a time, once every subscription is confirmed (bounded wait: 5 s). With `herd`, each
// subscriber acts on every message as a woken lock waiter does (one GET: its attempt) and the
// next message goes out only once every subscriber has made it (the publisher polls every 50 µs,
// 5 s at most per message); without it the subscribers only wait again.
struct Herd {
  int confirmed = 0;
  int64_t attempts = 0;
  int64_t polls = 0;  // the publisher's sleeps while a herd ran
};

Task<void> Subscriber(Env& env, int n, bool herd, Herd* h) {
  if (!co_await env.Subscribe(0, "calib:msg")) co_return;
  ++h->confirmed;
  const Command attempt = Command::Plain({"GET", "calib:c" + std::to_string(env.client_id())});
  for (int i = 0; i < n; ++i) {
    if (!co_await env.WaitMessage(5'000'000)) co_return;
    if (!herd) continue;
    co_await env.Send(0, attempt);
    ++h->attempts;
  }
}

Task<void> Publisher(Env& env, int n, int subscribers, bool herd, Herd* h) {
  for (int i = 0; i < 5000 && h->confirmed < subscribers; ++i) co_await env.SleepUs(1000);
  for (int i = 0; i < n; ++i) {
    co_await env.Send(0, Command::Of("PUBLISH", "calib:msg", "m"));
    const int64_t want = static_cast<int64_t>(subscribers) * (i + 1);
    for (int w = 0; herd && w < 100'000 && h->attempts < want; ++w) {
      co_await env.SleepUs(50);
      ++h->polls;
    }
  }
}

// The run's CPU less the publisher's polls (at `timer_us` each, measured before).
Result<double> MessageRunCpuUs(const std::string& address, int subscribers, int n, bool herd, double timer_us) {
  BackendConfig cfg;
  cfg.clients = subscribers + 1;
  Herd h;
  const auto start = [&](Runtime& rt) {
    for (int c = 0; c < subscribers; ++c) rt.StartClient(c, Subscriber(rt.env(c), n, herd, &h));
    rt.StartClient(subscribers, Publisher(rt.env(subscribers), n, subscribers, herd, &h));
  };
  const auto check = [&](Runtime&) {
    if (h.confirmed < subscribers) return Status::Failed("real runtime: subscriptions not confirmed");
    if (herd && h.attempts < static_cast<int64_t>(subscribers) * n)
      return Status::Failed("real runtime: the subscribers did not act on every message");
    return Status::Ok();
  };
  Result<double> cpu = RuntimeRunCpuUs(address, cfg, start, check);
  if (!cpu.ok()) return cpu;
  return *cpu - static_cast<double>(h.polls) * timer_us;
}

// The two runs of a sample, m1 and m2 steps each (`run(m)`): their results, the smaller first.
template <class T>
Result<std::pair<T, T>> TwoRuns(int m1, int m2, const std::function<Result<T>(int m)>& run) {
  Result<T> small = run(m1);
  if (!small.ok()) return small.status();
  Result<T> large = run(m2);
  if (!large.ok()) return large.status();
  return std::pair<T, T>{std::move(*small), std::move(*large)};
}

// The CPU per extra step of two runs' CPUs (client_m1 and client_m2 steps each), over `per` (the
// clients taking the steps): what the fixed costs of a run (connections, start-up) leave.
double PerExtraStepUs(const Sizes& sizes, double per, const std::pair<double, double>& cpu_us) {
  return (cpu_us.second - cpu_us.first) / (per * (sizes.client_m2 - sizes.client_m1));
}

// The same of two runs made by `run(m)`.
Result<double> PerExtraStepUs(const Sizes& sizes, double per, const std::function<Result<double>(int m)>& run) {
  Result<std::pair<double, double>> two = TwoRuns<double>(sizes.client_m1, sizes.client_m2, run);
  if (!two.ok()) return two.status();
  return PerExtraStepUs(sizes, per, *two);
}

}  // namespace

int NearestWakeIdleUs(double idle_us) {
  int best = kWakeIdleUs[0];
  for (int row : kWakeIdleUs)
    if (std::abs(std::log(idle_us / row)) < std::abs(std::log(idle_us / best))) best = row;
  return best;
}

Status ClientMessages(const std::string& address, const Sizes& sizes, ClientSamples* out) {
  for (const bool herd : {false, true}) {
    const double timer_us = out->timer_alone_us.empty() ? 0.0 : out->timer_alone_us.back();
    Result<double> per_publish = PerExtraStepUs(
        sizes, 1, [&](int m) { return MessageRunCpuUs(address, sizes.message_subscribers, m, herd, timer_us); });
    if (!per_publish.ok()) return per_publish.status();
    (herd ? out->herd_publish_cpu_us : out->publish_cpu_us).push_back(*per_publish);
  }
  return Status::Ok();
}

Status ClientIdle(const std::string& address, const Sizes& sizes, ClientSamples* out) {
  Result<std::pair<IdleRun, IdleRun>> two = TwoRuns<IdleRun>(
      sizes.idle_m1, sizes.idle_m2, [&](int m) { return IdleRunCost(address, sizes.clients, LightLoad(sizes.clients, m)); });
  if (!two.ok()) return two.status();
  const auto& [small, large] = *two;
  const double steps = static_cast<double>(sizes.clients) * (sizes.idle_m2 - sizes.idle_m1);
  const double blocks = large.blocks - small.blocks;
  if (blocks <= 0) return Status::Failed("the real runtime's loop never blocked in the light load");
  out->idle_step_cpu_us.push_back((large.cpu_us - small.cpu_us) / steps);
  out->idle_step_blocks.push_back(blocks / steps);
  for (const IdleRun* run : {&small, &large})
    for (const RedisRuntime::WakeSample& w : run->wakes) out->crowd_wake_late_us[NearestWakeIdleUs(w.idle_us)].push_back(w.late_us);
  // Once more with its messages held, its passes recorded (a run of its own: recording costs
  // two system calls a pass, which the runs above must not pay).
  std::vector<RedisRuntime::PassSample> passes;
  Result<IdleRun> held = IdleRunCost(address, sizes.clients, LightLoad(sizes.clients, sizes.idle_m2), &passes);
  if (!held.ok()) return held.status();
  for (const RedisRuntime::PassSample& p : passes)
    if (out->passes.size() < RedisRuntime::kMaxPassSamples) out->passes.push_back(p);
  return Status::Ok();
}

// The waves: every client sleeps idle_ms (cold) or 10 ms (warm) and up to 1 ms more, so that the
// timers fall due together as a retry wave's do, then sends one held GET; cold_rounds times.
Status ClientCold(const std::string& address, const Sizes& sizes, ClientSamples* out) {
  out->cold_idle_ms = sizes.cold_idle_ms;
  for (auto [idle_us, passes] : {std::pair{int64_t{sizes.cold_idle_ms} * 1000, &out->cold_passes},
                                 std::pair{int64_t{10'000}, &out->warm_passes}}) {
    Result<IdleRun> run = IdleRunCost(address, sizes.clients, {sizes.cold_rounds, idle_us, 1000}, passes);
    if (!run.ok()) return run.status();
  }
  return Status::Ok();
}

Status ClientWake(const std::string& address, const Sizes& sizes, ClientSamples* out) {
  BackendConfig cfg;
  cfg.clients = 1;
  const auto start = [&](Runtime& rt) { rt.StartClient(0, WakeLoop(rt.env(0), sizes.wake_samples, &out->wake_late_us)); };
  Result<double> cpu = RuntimeRunCpuUs(address, cfg, start);
  return cpu.ok() ? Status::Ok() : cpu.status();
}

// Each load's two runs are made twice, the pair in order and then in reverse order, and each run's
// smaller CPU kept before their difference is taken: the VM slows this process's CPU for stretches
// (a load's CPU per extra step came out at about twice its usual value in 5 of 30 pairs measured
// one after another), and interference only adds to a run's CPU. Measured once, a slowed plain
// load gave a timer's CPU below 0 (clamped to 0) in 2 of 13 quick calibrations. (Keeping the
// smaller difference instead would favour a slowed shorter run.)
Status ClientPair(const std::string& address, const Sizes& sizes, ClientSamples* out) {
  constexpr Load kOrder[] = {Load::kCommands, Load::kSleeps, Load::kHeldCommands, Load::kSleepCommands};
  constexpr size_t kLoads = std::size(kOrder);
  constexpr double kNone = std::numeric_limits<double>::infinity();
  std::pair<double, double> cpu_us[kLoads];  // each load's smaller CPU at client_m1 and client_m2 steps
  std::fill(std::begin(cpu_us), std::end(cpu_us), std::pair{kNone, kNone});
  for (size_t k = 0; k < 2 * kLoads; ++k) {
    const size_t i = k < kLoads ? k : 2 * kLoads - 1 - k;  // kOrder's loads, then back again
    Result<std::pair<double, double>> two = TwoRuns<double>(
        sizes.client_m1, sizes.client_m2, [&](int m) { return RunCpuUs(address, sizes.clients, m, kOrder[i]); });
    if (!two.ok()) return two.status();
    auto& [small, large] = cpu_us[i];
    small = std::min(small, two->first);
    large = std::min(large, two->second);
  }
  double per_op_us[kLoads];
  for (size_t i = 0; i < kLoads; ++i) per_op_us[i] = PerExtraStepUs(sizes, static_cast<double>(sizes.clients), cpu_us[i]);
  out->per_command_us.push_back(per_op_us[0]);
  out->timer_alone_us.push_back(per_op_us[1]);
  out->timer_us.push_back(per_op_us[3] - per_op_us[0]);
  // Two held messages per command (its request and its reply).
  out->hold_us.push_back((per_op_us[2] - per_op_us[0]) / 2);
  return Status::Ok();
}

}  // namespace locklab::calib
