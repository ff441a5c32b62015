#include "harness/real/process_registry.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace locklab {

namespace {

// ---------------------------------------------------------------------------------------------
// The process-wide registry of live children and their directories. Fixed-size arrays of atomics
// so that a signal handler can walk them (no locks, no allocation).

constexpr int kMaxPids = 4096;
constexpr int kMaxDirs = 256;
constexpr size_t kMaxDirLen = 240;

std::atomic<pid_t> g_pids[kMaxPids];
std::atomic<int> g_dir_used[kMaxDirs];  // 0 free, 1 being written, 2 valid
char g_dirs[kMaxDirs][kMaxDirLen];
std::atomic<bool> g_hooks_installed{false};
struct sigaction g_old_int, g_old_term;

}  // namespace

bool RegisterChildPid(pid_t pid) {
  for (auto& slot : g_pids) {
    pid_t expected = 0;
    if (slot.compare_exchange_strong(expected, pid)) return true;
  }
  return false;
}

bool IsChildPidRegistered(pid_t pid) {
  for (auto& slot : g_pids)
    if (slot.load() == pid) return true;
  return false;
}

void UnregisterChildPid(pid_t pid) {
  for (auto& slot : g_pids) {
    pid_t expected = pid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

int RegisterTempDir(const std::string& dir) {
  if (dir.size() >= kMaxDirLen) return -1;
  for (int i = 0; i < kMaxDirs; ++i) {
    int expected = 0;
    if (g_dir_used[i].compare_exchange_strong(expected, 1)) {
      std::memcpy(g_dirs[i], dir.c_str(), dir.size() + 1);
      g_dir_used[i].store(2);
      return i;
    }
  }
  return -1;
}

void UnregisterTempDir(int slot) {
  if (slot >= 0) g_dir_used[slot].store(0);
}

namespace {

// Removes a directory tree with raw syscalls only (async-signal-safe); depth-limited because
// our directories are two levels deep at most.
void RemoveTree(int parent_fd, const char* name, int depth) {
  int fd = static_cast<int>(syscall(SYS_openat, parent_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (fd >= 0) {
    alignas(8) char buf[4096];
    for (int rounds = 0; rounds < 1000; ++rounds) {
      long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        struct Dirent64 {
          uint64_t ino;
          int64_t off;
          unsigned short reclen;
          unsigned char type;
          char name[1];
        };
        auto* d = reinterpret_cast<Dirent64*>(buf + off);
        off += d->reclen;
        const char* child = d->name;
        if (child[0] == '.' && (child[1] == '\0' || (child[1] == '.' && child[2] == '\0'))) continue;
        if (d->type == DT_DIR) {
          if (depth > 0) RemoveTree(fd, child, depth - 1);
        } else {
          syscall(SYS_unlinkat, fd, child, 0);
        }
      }
    }
    syscall(SYS_close, fd);
  }
  syscall(SYS_unlinkat, parent_fd, name, AT_REMOVEDIR);
}

// Kills every registered server, waits for each, removes every registered directory.
// Async-signal-safe.
void KillAllRegistered() {
  for (auto& slot : g_pids) {
    pid_t pid = slot.load();
    if (pid > 0) kill(pid, SIGKILL);
  }
  for (auto& slot : g_pids) {
    pid_t pid = slot.exchange(0);
    if (pid > 0) waitpid(pid, nullptr, 0);
  }
  for (int i = 0; i < kMaxDirs; ++i) {
    int expected = 2;
    if (g_dir_used[i].compare_exchange_strong(expected, 1)) {
      RemoveTree(AT_FDCWD, g_dirs[i], 3);
      g_dir_used[i].store(0);
    }
  }
}

void OnTerminatingSignal(int sig, siginfo_t* info, void* ctx) {
  KillAllRegistered();
  // Somebody else wanted this signal too (a CLI's graceful stop): let it have it.
  const struct sigaction& old = sig == SIGINT ? g_old_int : g_old_term;
  if (old.sa_flags & SA_SIGINFO) {
    if (old.sa_sigaction != nullptr) {
      old.sa_sigaction(sig, info, ctx);
      return;
    }
  } else if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN) {
    old.sa_handler(sig);
    return;
  }
  _exit(128 + sig);
}

void AtExit() { KillAllRegistered(); }

}  // namespace

void InstallCleanupHooks() {
  bool expected = false;
  if (!g_hooks_installed.compare_exchange_strong(expected, true)) return;
  std::atexit(AtExit);
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = OnTerminatingSignal;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM}) {
    struct sigaction& old = sig == SIGINT ? g_old_int : g_old_term;
    sigaction(sig, nullptr, &old);
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN) continue;  // e.g. nohup
    sigaction(sig, &sa, nullptr);
  }
}


void RemoveTempDirNow(const std::string& dir) { RemoveTree(AT_FDCWD, dir.c_str(), 3); }

}  // namespace locklab
