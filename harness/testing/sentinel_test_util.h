// Test helpers for Sentinel mode: is a process still alive, and is any redis-server or
// redis-sentinel of ours still running in a directory?
#pragma once

#include <dirent.h>
#include <sys/types.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace locklab {

// Alive = exists and is not a zombie (a container's PID 1 may never reap orphans).
inline bool ProcessAlive(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

// Any live redis-server or redis-sentinel working under `dir` (ours chdir to their own directory
// under it; their command line is no help: both rewrite their process title).
inline bool AnyRedisProcessIn(const std::string& dir) {
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return false;
  bool found = false;
  for (int n = 0; n < 1'000'000; ++n) {
    const dirent* d = readdir(proc);
    if (d == nullptr) break;
    if (d->d_name[0] < '0' || d->d_name[0] > '9') continue;
    const std::string base = std::string("/proc/") + d->d_name;
    char cwd[4096];
    const ssize_t len = readlink((base + "/cwd").c_str(), cwd, sizeof cwd - 1);
    if (len <= 0 || std::string(cwd, static_cast<size_t>(len)).rfind(dir, 0) != 0) continue;
    std::ifstream st(base + "/stat");
    std::string line;
    std::getline(st, line);
    const bool ours = line.find("(redis-server)") != std::string::npos || line.find("(redis-sentinel)") != std::string::npos;
    if (ours && ProcessAlive(static_cast<pid_t>(std::stol(d->d_name)))) found = true;
  }
  closedir(proc);
  return found;
}

}  // namespace locklab
