#include "harness/real/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "harness/real/real_clock.h"
#include "harness/real/redis_server.h"  // ForkManagedChild

extern char** environ;

namespace locklab {
namespace {
int64_t NowUs() { return MonotonicNowUs(); }
}  // namespace

Status ChildProcess::Start(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
                           const std::string& stderr_path) {
  if (argv.empty()) return Status::Invalid("no program");
  std::set<std::string> overridden;
  for (const auto& e : extra_env) overridden.insert(e.substr(0, e.find('=')));
  std::vector<std::string> env_strings = extra_env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string s(*e);
    if (overridden.count(s.substr(0, s.find('='))) == 0) env_strings.push_back(s);
  }
  std::vector<char*> av, ev;
  for (const auto& a : argv) av.push_back(const_cast<char*>(a.c_str()));
  av.push_back(nullptr);
  for (const auto& e : env_strings) ev.push_back(const_cast<char*>(e.c_str()));
  ev.push_back(nullptr);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Status::Failed(std::string("pipe: ") + std::strerror(errno));
  const int err_fd = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t pid = ForkManagedChild(null_fd);
  if (pid == 0) {
    dup2(fds[1], 1);
    if (err_fd >= 0) dup2(err_fd, 2);
    execvpe(av[0], av.data(), ev.data());
    _exit(127);
  }
  close(fds[1]);
  if (err_fd >= 0) close(err_fd);
  if (null_fd >= 0) close(null_fd);
  if (pid < 0) {
    const Status failed = Status::Failed(std::string("fork: ") + std::strerror(errno));
    close(fds[0]);
    return failed;
  }
  pid_ = pid;
  out_fd_ = fds[0];
  fcntl(out_fd_, F_SETFL, fcntl(out_fd_, F_GETFL) | O_NONBLOCK);
  return Status::Ok();
}

void ChildProcess::Signal(int sig) {
  if (pid_ > 0) kill(pid_, sig);
}

bool ChildProcess::ReadLine(std::string* line, int64_t deadline_us) {
  for (int i = 0; i < 1'000'000; ++i) {
    const size_t nl = buf_.find('\n');
    if (nl != std::string::npos) {
      *line = buf_.substr(0, nl);
      buf_.erase(0, nl + 1);
      return true;
    }
    if (eof_ || !Fill(deadline_us)) return false;
  }
  return false;
}

bool ChildProcess::Finish(int64_t deadline_us, std::string* rest, int* status) {
  bool in_time = true;
  for (int i = 0; i < 1'000'000 && !eof_; ++i) {
    if (!Fill(deadline_us)) {
      if (!eof_) in_time = false;
      break;
    }
  }
  if (!in_time) {
    Signal(SIGCONT);
    Signal(SIGTERM);
    const int64_t grace = NowUs() + 2'000'000;
    for (int i = 0; i < 10'000 && !eof_; ++i)
      if (!Fill(grace)) break;
  }
  *rest += buf_;
  buf_.clear();
  *status = Reap(in_time ? deadline_us : NowUs() + 2'000'000);
  if (*status < 0) {
    Kill();
    *status = 128 + SIGKILL;
    in_time = false;
  }
  return in_time;
}

void ChildProcess::Kill() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = 0;
  }
  if (out_fd_ >= 0) {
    close(out_fd_);
    out_fd_ = -1;
  }
}

bool ChildProcess::Fill(int64_t deadline_us) {
  if (out_fd_ < 0) {
    eof_ = true;
    return false;
  }
  for (int i = 0; i < 100'000; ++i) {
    char chunk[65536];
    const ssize_t n = read(out_fd_, chunk, sizeof chunk);
    if (n > 0) {
      buf_.append(chunk, static_cast<size_t>(n));
      return true;
    }
    if (n == 0) {
      eof_ = true;
      return false;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      eof_ = true;
      return false;
    }
    const int64_t left_us = deadline_us - NowUs();
    if (left_us <= 0) return false;
    pollfd p{out_fd_, POLLIN, 0};
    poll(&p, 1, static_cast<int>(std::min<int64_t>(left_us / 1000 + 1, 1000)));
  }
  return false;
}

int ChildProcess::Reap(int64_t deadline_us) {
  if (pid_ <= 0) return -1;
  for (int i = 0; i < 1'000'000; ++i) {
    int st = 0;
    const pid_t r = waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      pid_ = 0;
      if (out_fd_ >= 0) {
        close(out_fd_);
        out_fd_ = -1;
      }
      return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
    }
    if (r < 0 && errno != EINTR) return -1;
    if (NowUs() >= deadline_us) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return -1;
}

std::string ReadWholeFile(const std::string& path, bool* ok) {
  std::ifstream f(path, std::ios::binary);
  if (ok != nullptr) *ok = static_cast<bool>(f);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string TailOnOneLine(const std::string& s, int lines) {
  size_t pos = s.size();
  while (pos > 0 && (s[pos - 1] == '\n' || s[pos - 1] == ' ')) --pos;
  const size_t end = pos;
  for (int n = 0; n < lines && pos > 0; ++n) {
    const size_t nl = s.rfind('\n', pos - 1);
    pos = nl == std::string::npos ? 0 : nl;
    if (nl == std::string::npos) break;
  }
  std::string t = s.substr(pos, end - pos);
  while (!t.empty() && t.front() == '\n') t.erase(t.begin());
  for (char& c : t)
    if (c == '\n') c = '|';
  return t;
}

}  // namespace locklab
