// Sentinels against Debian's redis-sentinel: a real promotion, and no orphans on any exit path.
#include "harness/real/sentinel.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "harness/real/real_clock.h"
#include "harness/real/redis_server.h"
#include "harness/testing/redis_test_util.h"
#include "harness/testing/sentinel_test_util.h"

namespace locklab {
namespace {

void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

std::unique_ptr<Sentinels> StartSentinels(const RedisServers& s) {
  Result<std::unique_ptr<Sentinels>> started =
      Sentinels::Start(SentinelOptions{}, s.dir(), s.port(0), s.port(s.replica_index()));
  EXPECT_TRUE(started.ok()) << started.status().message();
  return started.ok() ? std::move(started).value() : nullptr;
}

TEST(Sentinels, PromoteTheReplicaForRealAndLeaveNothingRunning) {
  RedisServerOptions opt;
  opt.with_replica = true;
  auto servers = StartServers(opt);
  ASSERT_TRUE(servers);
  auto sentinels = StartSentinels(*servers);
  ASSERT_TRUE(sentinels);
  ASSERT_EQ(sentinels->count(), 3);
  std::string host;
  int port = 0;
  ASSERT_TRUE(sentinels->MasterAddress(&host, &port).ok());
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, servers->port(0));
  const int r = servers->replica_index();
  EXPECT_EQ(MustQuery(*servers, r, {"ROLE"}).substr(0, 5), "slave");

  // Nobody but Sentinel promotes: locklab only kills the master.
  const int64_t killed_us = MonotonicNowUs();
  ASSERT_TRUE(servers->Kill(0).ok());
  // Promoted: the replica says it is a master; announced: a sentinel logged +switch-master.
  int64_t promoted_us = -1;
  bool announced = false;
  for (int i = 0; i < 1000 && !(announced && promoted_us >= 0); ++i) {  // 10 s at most
    const Result<std::string> role = servers->Query(r, {"ROLE"});
    if (promoted_us < 0 && role.ok() && role->rfind("master", 0) == 0) promoted_us = MonotonicNowUs();
    for (int s = 0; s < sentinels->count(); ++s)
      announced = announced || sentinels->LogTail(s, 100).find("+switch-master") != std::string::npos;
    SleepMs(10);
  }
  ASSERT_GE(promoted_us, 0) << "Sentinel did not promote the replica; sentinel 0's log:\n" << sentinels->LogTail(0, 30);
  EXPECT_TRUE(announced);
  const double took_s = static_cast<double>(promoted_us - killed_us) / 1e6;
  EXPECT_LT(took_s, 10.0);
  std::printf("Sentinel promoted the replica %.3f s after the master died\n", took_s);
  // Every sentinel names the new master sooner or later (the others learn it from the leader).
  bool all_name_it = false;
  for (int i = 0; i < 500 && !all_name_it; ++i) {  // 5 s at most
    all_name_it = true;
    for (int s = 0; s < sentinels->count(); ++s) {
      const Result<std::string> a = sentinels->Query(s, {"SENTINEL", "GET-MASTER-ADDR-BY-NAME", "locklab"});
      all_name_it = all_name_it && a.ok() && *a == "127.0.0.1\n" + std::to_string(servers->port(r));
    }
    if (!all_name_it) SleepMs(10);
  }
  EXPECT_TRUE(all_name_it);

  std::vector<pid_t> pids;
  for (int i = 0; i < sentinels->count(); ++i) pids.push_back(sentinels->pid(i));
  pids.push_back(servers->pid(r));
  const std::string dir = servers->dir();
  EXPECT_TRUE(AnyRedisProcessIn(dir));  // the check sees them while they run
  sentinels.reset();
  servers.reset();
  for (pid_t p : pids) EXPECT_FALSE(ProcessAlive(p)) << p;
  EXPECT_FALSE(AnyRedisProcessIn(dir));
}

TEST(Sentinels, BadOptionsAndMissingBinaryFailBeforeStartingAnything) {
  SentinelOptions opt;
  opt.quorum = 4;
  EXPECT_TRUE(Sentinels::Start(opt, "/tmp", 1, 2).status().invalid());
  opt = SentinelOptions{};
  opt.sentinel_path = "/nonexistent/redis-sentinel";
  const Status s = Sentinels::Start(opt, "/tmp", 1, 2).status();
  EXPECT_FALSE(s.ok());
  EXPECT_FALSE(s.invalid());
  EXPECT_NE(s.message().find("redis-sentinel"), std::string::npos) << s.message();
}

TEST(Sentinels, SigtermKillsServersAndSentinels) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  fflush(nullptr);
  const pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    RedisServerOptions opt;
    opt.with_replica = true;
    Result<std::unique_ptr<RedisServers>> servers = RedisServers::Start(opt);
    if (!servers.ok()) _exit(3);
    const RedisServers& s = **servers;
    Result<std::unique_ptr<Sentinels>> sentinels =
        Sentinels::Start(SentinelOptions{}, s.dir(), s.port(0), s.port(s.replica_index()));
    if (!sentinels.ok()) _exit(4);
    std::string msg = s.dir() + "\n";
    for (int i = 0; i < s.count(); ++i) msg += std::to_string(s.pid(i)) + " ";
    for (int i = 0; i < (*sentinels)->count(); ++i) msg += std::to_string((*sentinels)->pid(i)) + " ";
    if (write(fds[1], msg.data(), msg.size()) < 0) _exit(5);
    close(fds[1]);
    raise(SIGTERM);
    _exit(6);  // not reached
  }
  close(fds[1]);
  std::string all;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) all.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  ASSERT_EQ(WEXITSTATUS(status), 128 + SIGTERM) << "child status " << WEXITSTATUS(status);
  const size_t nl = all.find('\n');
  ASSERT_NE(nl, std::string::npos);
  const std::string dir = all.substr(0, nl);
  std::vector<pid_t> pids;
  for (size_t pos = nl + 1; pos < all.size();) {
    const size_t end = all.find(' ', pos);
    pids.push_back(static_cast<pid_t>(std::stol(all.substr(pos, end - pos))));
    pos = end + 1;
  }
  ASSERT_EQ(pids.size(), 5u);  // master, replica, three sentinels
  for (int waited = 0; waited < 2000; waited += 10) {
    bool any = false;
    for (pid_t p : pids) any = any || ProcessAlive(p);
    if (!any) break;
    SleepMs(10);
  }
  for (pid_t p : pids) EXPECT_FALSE(ProcessAlive(p)) << p;
  EXPECT_FALSE(AnyRedisProcessIn(dir));
}

TEST(Sentinels, SentinelFieldReadsKeyValueLines) {
  EXPECT_EQ(SentinelField("name\nlocklab\nflags\nmaster\nnum-slaves\n1", "flags"), "master");
  EXPECT_EQ(SentinelField("name\nlocklab\nflags\nmaster", "num-slaves"), "");
  EXPECT_EQ(SentinelField("", "flags"), "");
}

}  // namespace
}  // namespace locklab
