// Test helper shared by the real-Redis tests: is one of our redis-servers still alive?
#pragma once

#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace locklab {

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
