// ChildProcess: one program locklab runs and waits for (the peer drivers, redis-benchmark):
// stdin /dev/null, stdout a pipe to us, stderr a file. It dies with locklab (PR_SET_PDEATHSIG,
// see ForkManagedChild) and sits in its own process group, so a terminal's Ctrl-C reaches locklab
// only, and locklab's exit kills it. The destructor kills and reaps it. Every wait has a deadline.
// Also two small helpers for what such a child leaves behind (files, the tail of its stderr).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/status.h"

namespace locklab {

class ChildProcess {
 public:
  ChildProcess() = default;
  ~ChildProcess() { Kill(); }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Starts argv[0] (looked up in PATH) with this environment plus `extra_env` ("K=V", which
  // override). Failed when it cannot (a program that does not exist exits with 127).
  Status Start(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
               const std::string& stderr_path);

  pid_t pid() const { return pid_; }
  void Signal(int sig);

  // One line of stdout (without the newline), waiting until deadline_us (CLOCK_MONOTONIC). false
  // at the end of the output or when the deadline passes.
  bool ReadLine(std::string* line, int64_t deadline_us);

  // Reads stdout to its end and reaps the child, until deadline_us; past it, SIGCONT + SIGTERM
  // (the drivers write their logs on SIGTERM), SIGKILL 2 s later. *status: the exit status, or
  // 128 + signal. false when the deadline passed.
  bool Finish(int64_t deadline_us, std::string* rest, int* status);

  void Kill();

 private:
  bool Fill(int64_t deadline_us);  // reads what is there; false on timeout or end of output
  int Reap(int64_t deadline_us);   // the exit status, 128 + signal, or -1 if still running

  pid_t pid_ = 0;
  int out_fd_ = -1;
  bool eof_ = false;
  std::string buf_;
};

// The whole file ("" when it cannot be read; *ok says which, when given).
std::string ReadWholeFile(const std::string& path, bool* ok = nullptr);

// The last `lines` lines of `s` on one line ('|' between them), for one-line error messages.
std::string TailOnOneLine(const std::string& s, int lines);

}  // namespace locklab
