// The shared KV tier against a real redis-server that requires a password (the
// default user's, and a Redis 6 ACL user's): the right credentials work end to end,
// a database number is SELECTed, wrong credentials are a Redis that is down
// (local-only caching) whose error says that authentication failed. Skips without
// redis-server.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "server/redis_client.h"
#include "server/redis_replica.h"
#include "support/redis_server.h"

namespace seer {
namespace {

using namespace std::chrono_literals;
using kv_testing::Replica;
using kv_testing::tokens;

class RedisAuthTest : public kv_testing::RedisServerTest {
 protected:
  // The server requires SECRET for the default user; alice (password "p@ss") has
  // only the commands docs/deploy.md lists, on the test's keys.
  void SetUp() override {
    RedisServerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    RedisClient setup(parse_redis_url(redis_->url(), "test"), 2000ms);
    std::optional<RedisReply> r = setup.command({"ACL", "SETUSER", "alice", "on", ">p@ss", "~test:*", "+get", "+set",
                                                 "+mget", "+del", "+expire", "+scan", "+ping", "+select"});
    ASSERT_TRUE(r && r->type == RedisReply::Type::Status) << setup.last_error() << (r ? r->str : "");
    r = setup.command({"CONFIG", "SET", "requirepass", "SECRET"});
    ASSERT_TRUE(r && r->type == RedisReply::Type::Status) << setup.last_error() << (r ? r->str : "");
  }
  std::string url(const std::string& credentials, const std::string& db = "") const {
    return "redis://" + credentials + "@127.0.0.1:" + std::to_string(redis_->port()) + db;
  }
  bool exists(const std::string& key, const std::string& db = "") {
    RedisClient admin(parse_redis_url(url(":SECRET", db), "test"), 2000ms);
    std::optional<RedisReply> r = admin.command({"EXISTS", key});
    EXPECT_TRUE(r && r->type == RedisReply::Type::Integer) << admin.last_error();
    return r && r->integer == 1;
  }
};

TEST_F(RedisAuthTest, TheRightPasswordWorksEndToEnd) {
  Replica a(url(":SECRET"), 7), b(url(":SECRET"), 7);
  a.finish(1, "conv", 22, 10);
  ASSERT_TRUE(a.store.wait_idle(10s));
  EXPECT_EQ(a.store.counters().errors.load(), 0) << a.store.last_error();
  EXPECT_EQ(b.restore("conv", tokens(30)), 20);
  for (int32_t i = 0; i < 5; ++i) EXPECT_EQ(b.host_byte("conv", i), 10 + i) << "block " << i;
  EXPECT_EQ(b.store.last_error(), "");
}

TEST_F(RedisAuthTest, AnAclUserWithAPercentEncodedPasswordAndADatabaseWorksEndToEnd) {
  Replica a(url("alice:p%40ss", "/2"), 7), b(url("alice:p%40ss", "/2"), 7);
  a.finish(1, "conv", 22, 10);
  ASSERT_TRUE(a.store.wait_idle(10s));
  EXPECT_EQ(a.store.counters().errors.load(), 0) << a.store.last_error();
  EXPECT_EQ(b.restore("conv", tokens(30)), 20);  // GET, MGET, EXPIRE
  EXPECT_TRUE(exists(a.store.history_key("conv"), "/2"));
  EXPECT_FALSE(exists(a.store.history_key("conv")));  // not in database 0
  a.store.erase("conv");  // DEL, SCAN
  ASSERT_TRUE(a.store.wait_idle(10s));
  EXPECT_EQ(a.store.counters().erased.load(), 1);
  EXPECT_EQ(a.store.counters().errors.load(), 0) << a.store.last_error();
  EXPECT_FALSE(exists(a.store.history_key("conv"), "/2"));
  EXPECT_EQ(b.store.counters().errors.load(), 0) << b.store.last_error();
}

TEST_F(RedisAuthTest, AWrongPasswordMeansLocalOnlyCachingAndSaysAuthenticationFailed) {
  Replica a(url(":not-the-secret"), 7);
  a.finish(1, "conv", 24, 1);
  ASSERT_TRUE(a.store.wait_idle(10s));
  EXPECT_GT(a.store.counters().errors.load(), 0);
  EXPECT_GT(a.store.counters().dropped_writes.load(), 0);
  const std::string why = a.store.last_error();
  EXPECT_NE(why.find("authentication failed"), std::string::npos) << why;
  EXPECT_NE(why.find("WRONGPASS"), std::string::npos) << why;
  EXPECT_EQ(why.find("not-the-secret"), std::string::npos) << why;
  EXPECT_EQ(a.restore("conv", tokens(40)), 0);  // a miss, no error to the caller
  auto m = a.cache.match("", "conv", tokens(40));   // the local cache still holds it
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->tokens, 24);
  EXPECT_FALSE(exists(a.store.history_key("conv")));
}

TEST_F(RedisAuthTest, AClientRefusedLoginIsAFailedConnection) {
  RedisClient no_password(parse_redis_url(redis_->url(), "test"), 2000ms);
  ASSERT_TRUE(no_password.ensure_connected());  // Redis refuses commands, not connections
  std::optional<RedisReply> r = no_password.command({"GET", "k"});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->type, RedisReply::Type::Error);
  EXPECT_NE(r->str.find("NOAUTH"), std::string::npos) << r->str;

  RedisClient wrong(parse_redis_url(url("alice:nope"), "test"), 2000ms);
  EXPECT_FALSE(wrong.ensure_connected());
  EXPECT_FALSE(wrong.connected());
  EXPECT_NE(wrong.last_error().find("authentication failed as user 'alice'"), std::string::npos)
      << wrong.last_error();
  EXPECT_FALSE(wrong.ensure_connected());  // backing off: no new attempt yet

  RedisClient bad_db(parse_redis_url(url(":SECRET", "/99"), "test"), 2000ms);
  EXPECT_FALSE(bad_db.ensure_connected());
  EXPECT_NE(bad_db.last_error().find("SELECT 99 failed"), std::string::npos) << bad_db.last_error();

  RedisClient right(parse_redis_url(url("alice:p%40ss"), "test"), 2000ms);
  ASSERT_TRUE(right.ensure_connected()) << right.last_error();
  r = right.command({"PING"});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->str, "PONG");
}

}  // namespace
}  // namespace seer
