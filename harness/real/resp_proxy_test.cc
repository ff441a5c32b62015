// The fault proxy (resp_proxy.h): RESP framing, and each fault kind through a real hiredis client
// and a real redis-server the test starts: a delayed n-th SET, a hold after a SET, a partition
// (timeouts, then a cut connection) and a crash after a SET (which still reached the server).
#include "harness/real/resp_proxy.h"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "harness/real/redis_server.h"
#include "harness/run/config.h"

namespace locklab {
namespace {

TEST(RespFraming, MultibulkAndInlineCommands) {
  std::string name;
  EXPECT_EQ(NextRespCommand("*3\r\n$3\r\nset\r\n$1\r\nk\r\n$1\r\nv\r\n*1\r\n", &name), 27);
  EXPECT_EQ(name, "SET");
  EXPECT_EQ(NextRespCommand("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\n", &name), 0);  // not complete yet
  EXPECT_EQ(NextRespCommand("*2\r\n$4\r\nPI", &name), 0);
  EXPECT_EQ(NextRespCommand("*1\r\n$4\r\nPINGxx\r\n", &name), -1);  // the length lies
  EXPECT_EQ(NextRespCommand("*x\r\n", &name), -1);
  EXPECT_EQ(NextRespCommand("*1\r\n:4\r\n", &name), -1);
  EXPECT_EQ(NextRespCommand("ping\r\nGET k\r\n", &name), 6);
  EXPECT_EQ(name, "PING");
  EXPECT_EQ(NextRespCommand("get k", &name), 0);
  EXPECT_EQ(NextRespCommand("", &name), 0);
}

TEST(RespProxyFaults, OnlyTheProxysKindsAreTaken) {
  ProxyOptions o;
  o.upstream_port = 6379;
  o.faults.push_back(*ParseFaultFlag("crash_node:at_ms=10,target=0"));
  EXPECT_EQ(ValidateProxyFaults(o).message(),
            "fault crash_node: the proxy applies delay_message, pause_client, partition and crash_client");
  o.faults = {*ParseFaultFlag("delay_message:target=0,command=SET,occurrence=1,duration_ms=5")};
  EXPECT_TRUE(ValidateProxyFaults(o).ok());
  o.upstream_host = "10.0.0.1";
  EXPECT_FALSE(RespProxy::Start(o).ok());  // loopback only
}

class RespProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<RedisServers>> s = RedisServers::Start(RedisServerOptions());
    ASSERT_TRUE(s.ok()) << s.status().message();
    servers_ = std::move(s).value();
  }
  void StartProxy(const std::vector<std::string>& faults) {
    ProxyOptions o;
    o.upstream_port = servers_->port(0);
    o.max_duration_ms = 60'000;
    for (const std::string& f : faults) {
      Result<FaultAction> a = ParseFaultFlag(f);
      ASSERT_TRUE(a.ok()) << a.status().message();
      o.faults.push_back(*a);
    }
    Result<std::unique_ptr<RespProxy>> p = RespProxy::Start(o);
    ASSERT_TRUE(p.ok()) << p.status().message();
    proxy_ = std::move(p).value();
  }
  redisContext* Connect(int port, int timeout_ms = 5000) {
    timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    redisContext* c = redisConnectWithTimeout("127.0.0.1", port, tv);
    EXPECT_TRUE(c != nullptr && c->err == 0);
    redisSetTimeout(c, tv);
    contexts_.emplace_back(c, &redisFree);
    return c;
  }
  // The reply's string (or status) and how long it took, in ms; "" when there was no reply.
  static std::pair<std::string, double> Timed(redisContext* c, const char* cmd) {
    const auto start = std::chrono::steady_clock::now();
    auto* r = static_cast<redisReply*>(redisCommand(c, cmd));
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::string text;
    if (r != nullptr && r->str != nullptr) text.assign(r->str, r->len);
    if (r != nullptr) freeReplyObject(r);
    return {text, ms};
  }
  // The proxy's reports about faults of `kind`, as JSON.
  std::vector<nlohmann::json> ReportsOf(const std::string& kind) const {
    std::vector<nlohmann::json> out;
    for (const std::string& line : proxy_->Reports()) {
      nlohmann::json j = nlohmann::json::parse(line);
      if (j.value("fault", "") == kind) out.push_back(j);
    }
    return out;
  }
  std::unique_ptr<RedisServers> servers_;
  std::unique_ptr<RespProxy> proxy_;
  std::vector<std::unique_ptr<redisContext, void (*)(redisContext*)>> contexts_;
};

TEST_F(RespProxyTest, TheSecondSetIsDelayedAndAPipelinedGetDoesNotOvertakeIt) {
  StartProxy({"delay_message:target=0,command=SET,occurrence=2,duration_ms=500"});
  redisContext* c = Connect(proxy_->port());
  auto [first, first_ms] = Timed(c, "SET k 1");
  EXPECT_EQ(first, "OK");
  EXPECT_LT(first_ms, 400);  // (loose bounds: the machine may be busy)
  // Pipelined: the delayed SET and a GET right behind it. The GET must not overtake the SET.
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(redisAppendCommand(c, "SET k 2"), REDIS_OK);
  ASSERT_EQ(redisAppendCommand(c, "GET k"), REDIS_OK);
  std::vector<std::string> replies;
  for (int i = 0; i < 2; ++i) {
    void* r = nullptr;
    ASSERT_EQ(redisGetReply(c, &r), REDIS_OK);
    auto* reply = static_cast<redisReply*>(r);
    replies.emplace_back(reply->str != nullptr ? std::string(reply->str, reply->len) : std::string());
    freeReplyObject(reply);
  }
  const double both_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(replies, (std::vector<std::string>{"OK", "2"}));
  EXPECT_GE(both_ms, 499);
  auto [get, get_ms] = Timed(c, "GET k");  // the delay was for one command only
  EXPECT_EQ(get, "2");
  EXPECT_LT(get_ms, 400);
  const auto reports = ReportsOf("delay_message");
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0]["asked_ms"].get<double>(), 500);
  EXPECT_GE(reports[0]["measured_ms"].get<double>(), 499.5);
  EXPECT_LT(reports[0]["measured_ms"].get<double>(), 900);
}

TEST_F(RespProxyTest, APauseAfterASetHoldsItsReplyButNotTheWrite) {
  StartProxy({"pause_client:target=0,on_send=SET,occurrence=1,duration_ms=1000"});
  redisContext* c = Connect(proxy_->port());
  redisContext* direct = Connect(servers_->port(0));
  std::pair<std::string, double> set;
  std::thread t([&] { set = Timed(c, "SET k held"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_EQ(Timed(direct, "GET k").first, "held");  // the SET is done; its reply is held
  t.join();
  EXPECT_EQ(set.first, "OK");
  EXPECT_GE(set.second, 999);
  const auto reports = ReportsOf("pause_client");
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_GE(reports[0]["measured_ms"].get<double>(), 999.5);
}

TEST_F(RespProxyTest, APartitionTimesOutThenCutsTheConnection) {
  StartProxy({"partition:target=0,at_ms=300,duration_ms=1500"});
  redisContext* c = Connect(proxy_->port(), 1000);
  EXPECT_EQ(Timed(c, "SET k before").first, "OK");
  std::this_thread::sleep_for(std::chrono::milliseconds(350));  // inside the partition
  auto [lost, lost_ms] = Timed(c, "SET k during");
  EXPECT_EQ(lost, "");  // no reply: the client timed out
  EXPECT_NE(c->err, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(700));  // the partition is over (1800 ms)
  redisContext* again = Connect(proxy_->port());
  EXPECT_EQ(Timed(again, "GET k").first, "before");  // the SET sent during the partition was lost
  const auto reports = ReportsOf("partition");
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_GE(reports[0]["measured_ms"].get<double>(), 1499.5);
  EXPECT_GT(reports[0]["dropped_bytes"].get<int64_t>(), 0);
}

TEST_F(RespProxyTest, ACrashAfterASetCutsTheConnectionButTheSetLands) {
  StartProxy({"crash_client:target=0,on_send=SET,occurrence=1"});
  redisContext* c = Connect(proxy_->port());
  auto [reply, ms] = Timed(c, "SET k landed");
  EXPECT_EQ(reply, "");
  EXPECT_NE(c->err, 0);
  redisContext* direct = Connect(servers_->port(0));
  std::string value;
  for (int i = 0; i < 100 && value != "landed"; ++i) {  // the server may still be reading it
    value = Timed(direct, "GET k").first;
    if (value != "landed") std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(value, "landed");
  EXPECT_EQ(ReportsOf("crash_client").size(), 1u);
}

}  // namespace
}  // namespace locklab
