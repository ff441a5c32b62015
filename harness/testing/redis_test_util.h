// Test helpers shared by the real-Redis tests: starting servers and runtimes with a test
// failure naming the error, and is one of our redis-servers still alive?
#pragma once

#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "harness/real/redis_runtime.h"
#include "harness/real/redis_server.h"
#include "harness/testing/runtime_test_util.h"

namespace locklab {

// Our servers, or a test failure (naming the error) and nullptr.
inline std::unique_ptr<RedisServers> StartServers(const RedisServerOptions& options) {
  Result<std::unique_ptr<RedisServers>> s = RedisServers::Start(options);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? std::move(s).value() : nullptr;
}

// A RedisRuntime (MakeRedisRuntime), or a test failure (naming the error) and nullptr.
inline std::unique_ptr<Runtime> MakeRedis(const BackendConfig& cfg, const std::vector<std::string>& endpoints = {}) {
  Result<std::unique_ptr<Runtime>> rt = MakeRedisRuntime(cfg, endpoints);
  EXPECT_TRUE(rt.ok()) << rt.status().message();
  return rt.ok() ? std::move(rt).value() : nullptr;
}

// Server i's reply to argv, or a test failure and "".
inline std::string MustQuery(const RedisServers& s, int i, const std::vector<std::string>& argv) {
  const Result<std::string> out = s.Query(i, argv);
  EXPECT_TRUE(out.ok()) << out.status().message();
  return out.ok() ? *out : std::string();
}

// Any live (not zombie) redis-server working in `dir` (ours chdir to their --dir under it;
// their command line is no help: redis-server rewrites its process title).
inline bool AnyServerIn(const std::string& dir) {
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return false;
  bool found = false;
  while (dirent* d = readdir(proc)) {
    if (d->d_name[0] < '0' || d->d_name[0] > '9') continue;
    const std::string base = std::string("/proc/") + d->d_name;
    char cwd[4096];
    const ssize_t n = readlink((base + "/cwd").c_str(), cwd, sizeof cwd - 1);
    if (n <= 0 || std::string(cwd, static_cast<size_t>(n)).rfind(dir, 0) != 0) continue;
    std::ifstream st(base + "/stat");
    std::string line;
    std::getline(st, line);
    const size_t paren = line.rfind(')');
    if (line.find("(redis-server)") != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z')
      found = true;
  }
  closedir(proc);
  return found;
}

}  // namespace locklab
