// The node measurements of Calibrate (calibrate.h): blocking hiredis connections to one
// redis-server, pipelined batches timed end to end.
#include <unistd.h>

#include <algorithm>
#include <tuple>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "harness/real/calibrate_internal.h"
#include "harness/real/cpu_time.h"
#include "sim/scripts.h"

namespace locklab::calib {
namespace {

using Argv = std::vector<std::string>;
constexpr int kIoTimeoutS = 5;
constexpr int kFitCalls[] = {0, 1, 4, 16};

Status Append(redisContext* c, const Argv& argv) {
  std::vector<const char*> words;
  std::vector<size_t> lens;
  for (const std::string& w : argv) {
    words.push_back(w.data());
    lens.push_back(w.size());
  }
  if (redisAppendCommandArgv(c, static_cast<int>(argv.size()), words.data(), lens.data()) != REDIS_OK)
    return Status::Failed(std::string("cannot format ") + argv[0] + ": " + c->errstr);
  return Status::Ok();
}

// Reads n replies; an error reply or an I/O failure (incl. the 5 s timeout) is Failed.
Status ReadReplies(redisContext* c, int n, const std::string& what) {
  for (int i = 0; i < n; ++i) {
    void* raw = nullptr;
    if (redisGetReply(c, &raw) != REDIS_OK || raw == nullptr)
      return Status::Failed(what + ": " + (c->errstr[0] != '\0' ? c->errstr : "no reply"));
    auto* r = static_cast<redisReply*>(raw);
    const bool error = r->type == REDIS_REPLY_ERROR;
    const std::string text = error ? std::string(r->str, r->len) : "";
    freeReplyObject(r);
    if (error) return Status::Failed(what + ": " + text);
  }
  return Status::Ok();
}

// Formats every command into the output buffer first (not timed), then times from the first
// write to the last reply: µs for the whole batch.
Result<double> TimedBatch(const Conn& c, const std::vector<Argv>& cmds, const std::string& what) {
  for (const Argv& a : cmds)
    if (Status s = Append(c.get(), a); !s.ok()) return s;
  const double t0 = SteadyUs();
  if (Status s = ReadReplies(c.get(), static_cast<int>(cmds.size()), what); !s.ok()) return s;
  return SteadyUs() - t0;
}

std::string InfoField(const std::string& info, const std::string& field) {
  const size_t at = info.find(field + ":");
  if (at == std::string::npos) return "";
  const size_t from = at + field.size() + 1;
  return info.substr(from, info.find_first_of("\r\n", from) - from);
}

}  // namespace

Sizes Sizes::Quick() {
  Sizes s;
  s.drivers = 20;
  s.batch = 200;
  s.batches = 3;
  s.pings = 200;
  s.script_batch = 100;
  s.publish_batch = 50;
  s.waiters = 50;
  s.blpop_samples = 2;
  s.clients = 20;
  s.message_subscribers = 20;
  s.client_m1 = 10;
  s.client_m2 = 60;
  s.wake_samples = 20;
  s.client_pairs = 1;
  s.replica_pairs = 50;
  s.idle_ms = {0, 50};
  s.idle_samples = 1;
  s.cold_idle_ms = 1000;
  s.cold_rounds = 2;
  return s;
}

Sizes Sizes::Fewer(const Sizes& many, int n) {
  Sizes s = many;
  s.drivers = n;
  s.clients = n;
  s.message_subscribers = n;
  return s;
}

Result<Conn> Connect(int port) {
  const timeval tv{kIoTimeoutS, 0};
  Conn c{std::unique_ptr<redisContext, Conn::Free>(redisConnectWithTimeout("127.0.0.1", port, tv))};
  if (!c.ctx) return Status::Failed("cannot connect to 127.0.0.1:" + std::to_string(port));
  if (c.ctx->err != 0) return Status::Failed("cannot connect to 127.0.0.1:" + std::to_string(port) + ": " + c.ctx->errstr);
  if (redisSetTimeout(c.get(), tv) != REDIS_OK) return Status::Failed("cannot set a socket timeout");
  return c;
}

Result<std::string> Query(const Conn& c, const Argv& argv) {
  if (Status s = Append(c.get(), argv); !s.ok()) return s;
  void* raw = nullptr;
  if (redisGetReply(c.get(), &raw) != REDIS_OK || raw == nullptr)
    return Status::Failed(argv[0] + ": " + (c.get()->errstr[0] != '\0' ? c.get()->errstr : "no reply"));
  auto* r = static_cast<redisReply*>(raw);
  std::string text = r->type == REDIS_REPLY_INTEGER ? std::to_string(r->integer)
                     : r->str != nullptr           ? std::string(r->str, r->len)
                                                   : "";
  const bool error = r->type == REDIS_REPLY_ERROR;
  freeReplyObject(r);
  if (error) return Status::Failed(argv[0] + ": " + text);
  return text;
}

Result<double> NodeBench::ServerCpuUs() {
  Result<std::string> info = Query(main_, {"INFO", "cpu"});
  if (!info.ok()) return info.status();
  const std::string user = InfoField(*info, "used_cpu_user_main_thread");
  const std::string sys = InfoField(*info, "used_cpu_sys_main_thread");
  if (user.empty() || sys.empty()) return Status::Failed("INFO cpu has no used_cpu_*_main_thread (redis-server < 6.2?)");
  return (std::atof(user.c_str()) + std::atof(sys.c_str())) * 1e6;
}

Result<std::pair<double, double>> NodeBench::Lockstep(int rounds, const std::function<Argv(int, int)>& make,
                                                      const std::string& what, size_t in_flight) {
  in_flight = std::min(in_flight, drivers_.size());
  Result<double> cpu0 = ServerCpuUs();
  if (!cpu0.ok()) return cpu0.status();
  const double t0 = SteadyUs();
  for (int r = 0; r < rounds; ++r) {
    for (size_t d = 0; d < in_flight; ++d) {
      redisContext* c = drivers_[d].get();
      if (Status s = Append(c, make(static_cast<int>(d), r)); !s.ok()) return s;
      int done = 0;
      for (int tries = 0; done == 0 && tries < 1000; ++tries)
        if (redisBufferWrite(c, &done) != REDIS_OK) return Status::Failed(what + ": " + c->errstr);
      if (done == 0) return Status::Failed(what + ": could not send");
    }
    for (size_t d = 0; d < in_flight; ++d)
      if (Status s = ReadReplies(drivers_[d].get(), 1, what); !s.ok()) return s;
  }
  const double wall = SteadyUs() - t0;
  Result<double> cpu1 = ServerCpuUs();
  if (!cpu1.ok()) return cpu1.status();
  const double n = static_cast<double>(rounds) * static_cast<double>(in_flight);
  return std::make_pair((*cpu1 - *cpu0 - info_cost_us_) / n, wall / n);
}

Result<double> NodeBench::OneAtATime(const Argv& argv, int n, const std::string& what) {
  Result<double> cpu0 = ServerCpuUs();
  if (!cpu0.ok()) return cpu0.status();
  for (int i = 0; i < n; ++i)
    if (Result<std::string> r = Query(main_, argv); !r.ok()) return r.status().Prefixed(what);
  Result<double> cpu1 = ServerCpuUs();
  if (!cpu1.ok()) return cpu1.status();
  return (*cpu1 - *cpu0 - info_cost_us_) / n;
}

Status NodeBench::Setup() {
  Result<Conn> main = Connect(port_);
  if (!main.ok()) return main.status();
  main_ = std::move(*main);
  if (Result<std::string> r = Query(main_, {"FLUSHALL"}); !r.ok()) return r.status();
  // One INFO's own CPU, as two back to back see it (the smallest of 20).
  double least = 1e18;
  for (int i = 0; i < 20; ++i) {
    Result<double> a = ServerCpuUs(), b = ServerCpuUs();
    if (!a.ok() || !b.ok()) return a.ok() ? b.status() : a.status();
    least = std::min(least, *b - *a);
  }
  info_cost_us_ = out_->info_cost_us = least;
  for (int calls : kFitCalls) {
    std::string lua;
    for (int i = 0; i < calls; ++i) lua += "redis.call('GET', KEYS[1]) ";
    Result<std::string> sha = Query(main_, {"SCRIPT", "LOAD", lua + "return 1"});
    if (!sha.ok()) return sha.status();
    fit_sha_[calls] = *sha;
  }
  for (const sim::ScriptDef& def : sim::Scripts()) {
    Result<std::string> sha = Query(main_, {"SCRIPT", "LOAD", def.lua});
    if (!sha.ok()) return sha.status();
    if (*sha != sim::ScriptSha1(def.id)) return Status::Failed("SCRIPT LOAD gave an unexpected sha for a script");
  }
  for (auto [pool, n, what] : {std::tuple{&drivers_, sizes_.drivers, "driver"}, {&waiters_, sizes_.waiters, "BLPOP client"},
                               {&subscribers_, sizes_.subscribers, "subscriber"}}) {
    for (int i = 0; i < n; ++i) {
      Result<Conn> c = Connect(port_);
      if (!c.ok()) return c.status().Prefixed(what);
      pool->push_back(std::move(*c));
    }
  }
  return Subscribe();
}

// Subscriber i listens on calib:ch<subscribers>, and the first 10 on calib:ch10 too; each
// channel then reaches exactly the subscribers meant for it.
Status NodeBench::Subscribe() {
  const std::string all = "calib:ch" + std::to_string(sizes_.subscribers);
  for (size_t i = 0; i < subscribers_.size(); ++i) {
    const Argv sub = i < 10 ? Argv{"SUBSCRIBE", all, "calib:ch10"} : Argv{"SUBSCRIBE", all};
    if (Status s = Append(subscribers_[i].get(), sub); !s.ok()) return s;
    if (Status s = ReadReplies(subscribers_[i].get(), static_cast<int>(sub.size()) - 1, "SUBSCRIBE"); !s.ok()) return s;
  }
  for (int n : {10, sizes_.subscribers}) {
    Result<std::string> got = Query(main_, {"PUBLISH", "calib:ch" + std::to_string(n), "probe"});
    if (!got.ok()) return got.status();
    if (*got != std::to_string(n)) return Status::Failed("PUBLISH reached " + *got + " subscribers, not " + std::to_string(n));
    for (int i = 0; i < n; ++i)
      if (Status s = Drain(subscribers_[static_cast<size_t>(i)], 1); !s.ok()) return s;
  }
  return Status::Ok();
}

Status NodeBench::Drain(const Conn& c, int replies) { return ReadReplies(c.get(), replies, "subscriber message"); }

// Per sample: SET PX / GET / DEL with 1, 10 and D commands in flight at once; server CPU per
// command = command_us + wake_us / in-flight (the event loop wakes once per group it reads).
Status NodeBench::Commands() {
  auto make = [](int d, int r) {
    const std::string key = "calib:k" + std::to_string(d);
    return r % 3 == 0 ? Argv{"SET", key, "v", "PX", "60000"} : r % 3 == 1 ? Argv{"GET", key} : Argv{"DEL", key};
  };
  std::vector<Argv> pipelined;
  for (int i = 0; i < sizes_.batch; ++i) pipelined.push_back(make(0, i));
  const int d = static_cast<int>(drivers_.size());
  for (int b = 0; b < sizes_.batches; ++b) {
    std::vector<double> xs, ys;
    for (int in_flight : {1, std::min(10, d), d}) {
      const int rounds = std::max(1, sizes_.batch / in_flight);
      Result<std::pair<double, double>> t = Lockstep(rounds, make, "SET/GET/DEL", static_cast<size_t>(in_flight));
      if (!t.ok()) return t.status();
      xs.push_back(1.0 / in_flight);
      ys.push_back(t->first);
      out_->command_by_in_flight_us[in_flight].push_back(t->first);
      if (in_flight == d) out_->command_wall_us.push_back(t->second);
    }
    const auto [per_command_us, per_wake_us] = FitLine(xs, ys);
    out_->command_us.push_back(per_command_us);
    out_->wake_us.push_back(per_wake_us);
    Result<double> p = TimedBatch(main_, pipelined, "pipelined SET/GET/DEL");
    if (!p.ok()) return p.status();
    out_->pipelined_command_us.push_back(*p / sizes_.batch);
  }
  return Status::Ok();
}

Status NodeBench::AfterIdle() {
  auto get = [](int d, int) { return Argv{"GET", "calib:k" + std::to_string(d)}; };
  const size_t all = drivers_.size();
  for (int idle_ms : sizes_.idle_ms) {
    for (int s = 0; s < sizes_.idle_samples; ++s) {
      if (idle_ms > 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(idle_ms));
      } else if (Result<std::pair<double, double>> warm = Lockstep(1, get, "GET", all); !warm.ok()) {
        return warm.status();
      }
      Result<std::pair<double, double>> t = Lockstep(1, get, "GET after idling", all);
      if (!t.ok()) return t.status();
      out_->command_after_idle_us[idle_ms].push_back(t->first);
    }
  }
  return Status::Ok();
}

Status NodeBench::Pings() {
  Result<double> cpu0 = ServerCpuUs();
  if (!cpu0.ok()) return cpu0.status();
  const double client0 = CpuUs();
  for (int i = 0; i < sizes_.pings; ++i) {
    const double t0 = SteadyUs();
    if (Result<std::string> r = Query(main_, {"PING"}); !r.ok()) return r.status();
    out_->ping_rtt_us.push_back(SteadyUs() - t0);
  }
  const double client = (CpuUs() - client0) / sizes_.pings;
  Result<double> cpu1 = ServerCpuUs();
  if (!cpu1.ok()) return cpu1.status();
  out_->ping_server_us.push_back((*cpu1 - *cpu0 - info_cost_us_) / sizes_.pings);
  out_->ping_client_us.push_back(client);
  return Status::Ok();
}

Status NodeBench::ScriptFit() {
  const int rounds = std::max(1, sizes_.script_batch / static_cast<int>(drivers_.size()));
  for (int b = 0; b < sizes_.batches; ++b) {
    std::vector<double> xs, ys;
    for (int calls : kFitCalls) {
      const Argv argv = {"EVALSHA", fit_sha_[calls], "1", "calib:sk"};
      Result<std::pair<double, double>> t = Lockstep(rounds, [&](int, int) { return argv; }, "EVALSHA", drivers_.size());
      if (!t.ok()) return t.status();
      xs.push_back(calls);
      ys.push_back(t->first);
      out_->script_by_calls_us[calls].push_back(ys.back());
    }
    const auto [a, b_us] = FitLine(xs, ys);
    out_->script_us.push_back(a);
    out_->script_call_us.push_back(b_us);
  }
  return Status::Ok();
}

Status NodeBench::LocklabScripts() {
  const int rounds = std::max(1, sizes_.script_batch / static_cast<int>(drivers_.size()));
  for (const sim::ScriptDef& def : sim::Scripts()) {
    Argv argv = {"EVALSHA", sim::ScriptSha1(def.id), std::to_string(def.num_keys)};
    for (int k = 0; k < def.num_keys; ++k) argv.push_back("calib:lk:" + std::to_string(k));
    for (int a = 0; a < def.num_args; ++a) argv.push_back("60000");
    const std::string name(ScriptName(def.id));
    Result<std::pair<double, double>> t = Lockstep(rounds, [&](int, int) { return argv; }, name, drivers_.size());
    if (!t.ok()) return t.status();
    out_->locklab_script_us[name].push_back(t->first);
    if (Result<std::string> r = Query(main_, {"FLUSHALL"}); !r.ok()) return r.status();
  }
  return Status::Ok();
}

Status NodeBench::Publish() {
  const int counts[] = {0, 10, sizes_.subscribers};
  for (int b = 0; b < sizes_.batches; ++b) {
    std::vector<double> xs, ys;
    for (int n : counts) {
      Result<double> cpu = OneAtATime({"PUBLISH", "calib:ch" + std::to_string(n), "x"}, sizes_.publish_batch, "PUBLISH");
      if (!cpu.ok()) return cpu.status();
      for (int i = 0; i < n; ++i)
        if (Status s = Drain(subscribers_[static_cast<size_t>(i)], sizes_.publish_batch); !s.ok()) return s;
      xs.push_back(n);
      ys.push_back(*cpu);
      out_->publish_by_receivers_us[n].push_back(ys.back());
    }
    out_->publish_base_us.push_back(ys[0]);
    out_->publish_per_receiver_us.push_back(FitLine(xs, ys).second);
  }
  return Status::Ok();
}

// Parks every waiter on BLPOP calib:q and waits (at most 5 s) until the server counts them all.
Status NodeBench::ParkWaiters() {
  for (const Conn& c : waiters_) {
    if (Status st = Append(c.get(), {"BLPOP", "calib:q", "10"}); !st.ok()) return st;
    int done = 0;
    for (int tries = 0; done == 0 && tries < 1000; ++tries)
      if (redisBufferWrite(c.get(), &done) != REDIS_OK) return Status::Failed(std::string("BLPOP: ") + c.get()->errstr);
    if (done == 0) return Status::Failed("BLPOP: could not send");
  }
  const double deadline_us = SteadyUs() + 5e6;
  for (;;) {
    Result<std::string> info = Query(main_, {"INFO", "clients"});
    if (!info.ok()) return info.status();
    if (InfoField(*info, "blocked_clients") == std::to_string(waiters_.size())) return Status::Ok();
    if (SteadyUs() > deadline_us) return Status::Failed("BLPOP: the clients did not all park within 5 s");
    usleep(200);
  }
}

Status NodeBench::Blpop() {
  const int w = static_cast<int>(waiters_.size());
  for (int s = 0; s < sizes_.blpop_samples; ++s) {
    if (Status st = ParkWaiters(); !st.ok()) return st;
    Result<double> serve = OneAtATime({"LPUSH", "calib:q", "x"}, w, "LPUSH to waiters");
    if (!serve.ok()) return serve.status();
    for (const Conn& c : waiters_)
      if (Status st = ReadReplies(c.get(), 1, "BLPOP reply"); !st.ok()) return st;
    Result<double> base = OneAtATime({"LPUSH", "calib:q0", "x"}, w, "LPUSH");
    if (!base.ok()) return base.status();
    if (Result<std::string> r = Query(main_, {"DEL", "calib:q0"}); !r.ok()) return r.status();
    out_->blpop_serve_us.push_back(*serve - *base);
  }
  return Status::Ok();
}

Status NodeBench::ResetStats() {
  Result<std::string> r = Query(main_, {"CONFIG", "RESETSTAT"});
  return r.ok() ? Status::Ok() : r.status();
}

// "cmdstat_get:calls=5,usec=12,usec_per_call=2.40,..." lines -> (calls, usec) added per command.
Status NodeBench::CollectStats() {
  Result<std::string> info = Query(main_, {"INFO", "commandstats"});
  if (!info.ok()) return info.status();
  size_t pos = 0;
  while ((pos = info->find("cmdstat_", pos)) != std::string::npos) {
    const size_t colon = info->find(':', pos);
    const size_t eol = info->find_first_of("\r\n", pos);
    if (colon == std::string::npos || colon > eol) break;
    std::string name = info->substr(pos + 8, colon - pos - 8);
    for (char& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    const std::string fields = info->substr(colon + 1, eol - colon - 1);
    auto num = [&](const std::string& key) {  // at: where key starts in `fields`
      const size_t at = ("," + fields).find("," + key + "=");
      return at == std::string::npos ? 0.0 : std::atof(fields.c_str() + at + key.size() + 1);
    };
    auto& [c, u] = out_->commandstats[name];
    c += num("calls");
    u += num("usec");
    pos = eol;
  }
  return Status::Ok();
}

double SteadyUs() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::pair<double, double> FitLine(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sx += x[i];
    sy += y[i];
    sxx += x[i] * x[i];
    sxy += x[i] * y[i];
  }
  const double den = n * sxx - sx * sx;
  const double b = den == 0 ? 0 : (n * sxy - sx * sy) / den;
  return {(sy - b * sx) / n, b};
}

}  // namespace locklab::calib
