// RedisServers against Debian's redis-server: start/stop without orphans, the clock shim, faults.
#include "harness/real/redis_server.h"
#include "harness/testing/redis_test_util.h"

#include <dirent.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace locklab {
namespace {

// Alive = exists and is not a zombie (a container's PID 1 may never reap orphans).
bool Alive(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

bool DirExists(const std::string& dir) {
  struct stat st;
  return stat(dir.c_str(), &st) == 0;
}

std::string Q(RedisServers& s, int i, std::vector<std::string> argv) {
  return MustQuery(s, i, argv);
}

void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

TEST(RedisServers, StartAnswerStopLeavesNothing) {
  RedisServerOptions opt;
  opt.masters = 2;
  opt.with_replica = true;
  auto s = StartServers(opt);
  ASSERT_TRUE(s);
  ASSERT_EQ(s->count(), 3);
  EXPECT_EQ(s->replica_index(), 2);
  std::vector<pid_t> pids;
  for (int i = 0; i < s->count(); ++i) {
    EXPECT_EQ(Q(*s, i, {"PING"}), "PONG");
    EXPECT_NE(s->port(i), 0);
    pids.push_back(s->pid(i));
  }
  // Loopback only, no persistence.
  EXPECT_EQ(Q(*s, 0, {"CONFIG", "GET", "bind"}), "bind\n127.0.0.1");
  EXPECT_EQ(Q(*s, 0, {"CONFIG", "GET", "save"}), "save\n");
  EXPECT_EQ(Q(*s, 0, {"CONFIG", "GET", "appendonly"}), "appendonly\nno");
  EXPECT_NE(Q(*s, 2, {"INFO", "replication"}).find("role:slave"), std::string::npos);
  const std::string dir = s->dir();
  EXPECT_TRUE(DirExists(dir));
  EXPECT_TRUE(AnyServerIn(dir));
  s.reset();
  for (pid_t p : pids) EXPECT_FALSE(Alive(p)) << p;
  EXPECT_FALSE(AnyServerIn(dir));
  EXPECT_FALSE(DirExists(dir));
}

TEST(RedisServers, ClockShimJumpExpiresKeysAlsoByActiveExpiry) {
  auto s = StartServers(RedisServerOptions{});
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->clock_shim_loaded()) << "liblocklab_clockshim.so not found: build target locklab_clockshim";
  const int64_t t0 = std::stoll(Q(*s, 0, {"TIME"}).substr(0, 10));
  EXPECT_EQ(Q(*s, 0, {"SET", "k1", "v", "PX", "60000"}), "OK");
  EXPECT_EQ(Q(*s, 0, {"SET", "k2", "v", "PX", "60000"}), "OK");
  EXPECT_EQ(Q(*s, 0, {"DBSIZE"}), "2");
  ASSERT_TRUE(IsOk(s->JumpClock(0, 120'000'000)));
  const int64_t t1 = std::stoll(Q(*s, 0, {"TIME"}).substr(0, 10));
  EXPECT_GE(t1 - t0, 119);
  EXPECT_LE(t1 - t0, 125);
  // Without touching the keys: active expiry (10 times a second) must drop them.
  SleepMs(1000);
  EXPECT_EQ(Q(*s, 0, {"DBSIZE"}), "0");
  EXPECT_EQ(Q(*s, 0, {"EXISTS", "k1"}), "0");
  // And back: a key set now lives by the moved clock.
  ASSERT_TRUE(IsOk(s->SetClock(0, 0, 0)));
  const int64_t t2 = std::stoll(Q(*s, 0, {"TIME"}).substr(0, 10));
  EXPECT_LE(t2 - t0, 5);
}

TEST(RedisServers, RestartComesBackEmptyOnTheSamePort) {
  auto s = StartServers(RedisServerOptions{});
  ASSERT_TRUE(s);
  const int port = s->port(0);
  const pid_t before = s->pid(0);
  EXPECT_EQ(Q(*s, 0, {"SET", "k", "v"}), "OK");
  ASSERT_TRUE(IsOk(s->Restart(0)));
  EXPECT_EQ(s->port(0), port);
  EXPECT_NE(s->pid(0), before);
  EXPECT_FALSE(Alive(before));
  EXPECT_EQ(Q(*s, 0, {"EXISTS", "k"}), "0");
  ASSERT_TRUE(IsOk(s->Kill(0)));
  EXPECT_FALSE(s->Query(0, {"PING"}).ok());
  EXPECT_FALSE(s->PingOnce(0));
}

TEST(RedisServers, PauseFreezesResumeThaws) {
  auto s = StartServers(RedisServerOptions{});
  ASSERT_TRUE(s);
  ASSERT_TRUE(IsOk(s->Pause(0)));
  EXPECT_TRUE(s->paused(0));
  EXPECT_FALSE(s->Query(0, {"PING"}, 200'000).ok());
  ASSERT_TRUE(IsOk(s->Resume(0)));
  EXPECT_EQ(Q(*s, 0, {"PING"}), "PONG");
}

// The issue measured it: with the replica stopped AND its link killed on the master, a write
// acknowledged by the master is lost by the failover every time (5 of 5).
TEST(RedisServers, FailoverLosesTheUnreplicatedWrite) {
  int lost = 0;
  for (int round = 0; round < 5; ++round) {
    RedisServerOptions opt;
    opt.with_replica = true;
    auto s = StartServers(opt);
    ASSERT_TRUE(s);
    const int r = s->replica_index();
    EXPECT_EQ(Q(*s, 0, {"SET", "before", "1"}), "OK");
    for (int i = 0; i < 200 && Q(*s, r, {"EXISTS", "before"}) != "1"; ++i) SleepMs(5);
    ASSERT_TRUE(IsOk(s->IsolateReplica()));
    EXPECT_EQ(Q(*s, 0, {"SET", "lock", "A"}), "OK");  // acknowledged by the master only
    const pid_t master = s->pid(0);
    ASSERT_TRUE(IsOk(s->PromoteReplica()));
    EXPECT_FALSE(s->running(0));
    EXPECT_FALSE(Alive(master));
    EXPECT_NE(Q(*s, r, {"INFO", "replication"}).find("role:master"), std::string::npos);
    EXPECT_EQ(Q(*s, r, {"GET", "before"}), "1");
    if (Q(*s, r, {"EXISTS", "lock"}) == "0") ++lost;
    EXPECT_EQ(Q(*s, r, {"SET", "after", "1"}), "OK");  // the promoted replica takes writes
  }
  EXPECT_EQ(lost, 5);
}

// Reads the pids and directory a child process reports through a pipe.
struct ChildReport {
  std::vector<pid_t> pids;
  std::string dir;
};

ChildReport ReadReport(int fd) {
  ChildReport r;
  std::string all;
  char buf[512];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) all.append(buf, static_cast<size_t>(n));
  size_t nl = all.find('\n');
  if (nl == std::string::npos) return r;
  r.dir = all.substr(0, nl);
  std::string rest = all.substr(nl + 1);
  size_t pos = 0;
  while (pos < rest.size()) {
    size_t end = rest.find(' ', pos);
    if (end == std::string::npos) end = rest.size();
    if (end > pos) r.pids.push_back(static_cast<pid_t>(std::stol(rest.substr(pos, end - pos))));
    pos = end + 1;
  }
  return r;
}

// Runs `finish` in a child that has started two servers; returns what the child reported and
// its wait status.
ChildReport InChild(void (*finish)(), int* status) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  fflush(nullptr);
  pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    RedisServerOptions opt;
    opt.masters = 2;
    Result<std::unique_ptr<RedisServers>> started = RedisServers::Start(opt);
    if (!started.ok()) _exit(3);
    std::unique_ptr<RedisServers> s = std::move(started).value();
    std::string msg = s->dir() + "\n";
    for (int i = 0; i < s->count(); ++i) msg += std::to_string(s->pid(i)) + " ";
    if (write(fds[1], msg.data(), msg.size()) < 0) _exit(4);
    close(fds[1]);
    finish();
    _exit(5);  // not reached
  }
  close(fds[1]);
  ChildReport r = ReadReport(fds[0]);
  close(fds[0]);
  waitpid(child, status, 0);
  return r;
}

bool AllGoneWithin(const std::vector<pid_t>& pids, int ms) {
  for (int waited = 0; waited <= ms; waited += 10) {
    bool any = false;
    for (pid_t p : pids) any = any || Alive(p);
    if (!any) return true;
    SleepMs(10);
  }
  return false;
}

TEST(RedisServers, SigtermKillsServersAndExits143) {
  int status = 0;
  ChildReport r = InChild([] { raise(SIGTERM); }, &status);
  ASSERT_EQ(r.pids.size(), 2u);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  EXPECT_TRUE(AllGoneWithin(r.pids, 2000));
  EXPECT_FALSE(AnyServerIn(r.dir));
  EXPECT_FALSE(DirExists(r.dir));
}

TEST(RedisServers, ExitWithoutDestructorStillKillsServers) {
  int status = 0;
  ChildReport r = InChild([] { std::exit(0); }, &status);  // atexit hook
  ASSERT_EQ(r.pids.size(), 2u);
  EXPECT_TRUE(AllGoneWithin(r.pids, 2000));
  EXPECT_FALSE(DirExists(r.dir));
}

TEST(RedisServers, ParentDeathKillsServers) {
  // The orphaned servers are re-parented to us (not to PID 1), so that we can reap them.
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  int status = 0;
  ChildReport r = InChild([] { _exit(0); }, &status);  // no atexit, no destructor: PDEATHSIG
  ASSERT_EQ(r.pids.size(), 2u);
  EXPECT_TRUE(AllGoneWithin(r.pids, 2000));
  for (pid_t p : r.pids) waitpid(p, nullptr, 0);
  prctl(PR_SET_CHILD_SUBREAPER, 0);
  // (the directory is left behind in this case: nobody is left to remove it)
  std::string cmd = "rm -rf '" + r.dir + "'";
  if (r.dir.find("/locklab-redis-") != std::string::npos) {
    EXPECT_EQ(std::system(cmd.c_str()), 0);
  }
}

TEST(RedisServers, ParseHostPort) {
  std::string host;
  int port = 0;
  EXPECT_TRUE(ParseHostPort("127.0.0.1:6379", &host, &port));
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, 6379);
  EXPECT_FALSE(ParseHostPort("127.0.0.1", &host, &port));
  EXPECT_FALSE(ParseHostPort(":6379", &host, &port));
  EXPECT_FALSE(ParseHostPort("h:99999", &host, &port));
  EXPECT_FALSE(ParseHostPort("h:12a", &host, &port));
}

}  // namespace
}  // namespace locklab
