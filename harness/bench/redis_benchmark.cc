#include "harness/bench/redis_benchmark.h"

#include <cctype>
#include <cstdlib>

#include "harness/real/child_process.h"
#include "harness/real/real_clock.h"
#include "harness/real/redis_server.h"
#include "sim/scripts.h"

namespace locklab {

double ParseRedisBenchmarkRps(const std::string& output) {
  const std::string marker = " requests per second";
  const size_t at = output.rfind(marker);
  if (at == std::string::npos || at == 0) return -1;
  size_t start = at;
  while (start > 0 && (std::isdigit(static_cast<unsigned char>(output[start - 1])) || output[start - 1] == '.'))
    --start;
  if (start == at) return -1;
  return std::atof(output.substr(start, at - start).c_str());
}

Result<double> RedisBenchmarkRps(const RedisServers& servers, int index, int clients,
                                 const std::vector<std::string>& command) {
  std::vector<std::string> argv = {"redis-benchmark", "-h", "127.0.0.1", "-p", std::to_string(servers.port(index)),
                                   "-c", std::to_string(clients), "-n", clients == 1 ? "20000" : "100000",
                                   "-r", "100000", "-q"};
  argv.insert(argv.end(), command.begin(), command.end());
  ChildProcess c;
  const std::string err_path = servers.dir() + "/redis-benchmark.stderr";
  if (Status st = c.Start(argv, {}, err_path); !st.ok()) return st;
  std::string out;
  int status = -1;
  if (!c.Finish(MonotonicNowUs() + 60'000'000, &out, &status) || status != 0) {
    return Status::Failed(status == 127 ? "redis-benchmark not found (Debian package redis-tools)"
                                        : "redis-benchmark exited with status " + std::to_string(status) + ": " +
                                              TailOnOneLine(ReadWholeFile(err_path), 2));
  }
  const double rps = ParseRedisBenchmarkRps(out);
  if (rps <= 0) return Status::Failed("no rate in redis-benchmark's output");
  return rps;
}

PairLimit MeasurePairLimit(const RedisServers& servers, int index, int clients) {
  PairLimit l;
  l.clients = clients;
  const Result<std::string> loaded =
      servers.Query(index, {"SCRIPT", "LOAD", sim::GetScript(Script::kCompareAndDelete).lua});
  if (!loaded.ok()) {
    l.status = loaded.status().Prefixed("SCRIPT LOAD failed");
    return l;
  }
  const std::string& sha = *loaded;
  const Result<double> set =
      RedisBenchmarkRps(servers, index, clients, {"SET", "bench:__rand_int__", "tok", "NX", "PX", "10000"});
  if (!set.ok()) {
    l.status = set.status();
    return l;
  }
  l.set_rps = *set;
  const Result<double> release =
      RedisBenchmarkRps(servers, index, clients, {"EVALSHA", sha, "1", "bench:__rand_int__", "tok"});
  if (!release.ok()) {
    l.status = release.status();
    return l;
  }
  l.release_rps = *release;
  l.pair_rps = 1.0 / (1.0 / l.set_rps + 1.0 / l.release_rps);
  return l;
}

}  // namespace locklab
