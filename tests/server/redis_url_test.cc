// `seer serve --shared-kv` URLs (kv/redis_url.h): credentials percent-decoded and
// never printed, a database number, rediss:// refused with what to do instead,
// malformed URLs refused naming the flag.
#include <gtest/gtest.h>

#include <string>

#include "common/error.h"
#include "server/redis_url.h"

namespace seer {
namespace {

// The message of the seer::Error that parsing `url` throws ("" when none).
std::string refusal(const std::string& url) {
  try {
    (void)parse_redis_url(url, "--shared-kv");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(RedisUrl, HostPortAndDatabase) {
  RedisEndpoint e = parse_redis_url("redis://10.0.0.2:7000/3", "--shared-kv");
  EXPECT_EQ(e.host, "10.0.0.2");
  EXPECT_EQ(e.port, 7000);
  EXPECT_EQ(e.db, 3);
  EXPECT_TRUE(e.user.empty());
  EXPECT_TRUE(e.password.empty());
  EXPECT_EQ(e.text(), "10.0.0.2:7000/3");
  e = parse_redis_url("redis://cache.internal", "--shared-kv");
  EXPECT_EQ(e.port, 6379);
  EXPECT_EQ(e.db, 0);
  EXPECT_EQ(e.text(), "cache.internal:6379");
  EXPECT_EQ(parse_redis_url("redis://host:6380/", "--shared-kv").db, 0);
  EXPECT_EQ(parse_redis_url("localhost:6390", "--shared-kv").port, 6390);
}

TEST(RedisUrl, PasswordOnlyAndAclUserArePercentDecoded) {
  RedisEndpoint e = parse_redis_url("redis://:s%40cr%3At%2F%25@127.0.0.1:6390", "--shared-kv");
  EXPECT_EQ(e.user, "");
  EXPECT_EQ(e.password, "s@cr:t/%");
  EXPECT_EQ(e.host, "127.0.0.1");
  EXPECT_EQ(e.port, 6390);
  e = parse_redis_url("redis://alice%2Bops:pw@redis.example/2", "--shared-kv");
  EXPECT_EQ(e.user, "alice+ops");
  EXPECT_EQ(e.password, "pw");
  EXPECT_EQ(e.host, "redis.example");
  EXPECT_EQ(e.db, 2);
  // A raw '@' in the password: the last '@' ends the credentials.
  e = parse_redis_url("redis://bob:p@ss@host", "--shared-kv");
  EXPECT_EQ(e.user, "bob");
  EXPECT_EQ(e.password, "p@ss");
  EXPECT_EQ(e.host, "host");
}

TEST(RedisUrl, TheTextNeverHoldsThePassword) {
  RedisEndpoint e = parse_redis_url("redis://alice:hunter2@10.0.0.2:7000/1", "--shared-kv");
  EXPECT_EQ(e.text(), "alice:***@10.0.0.2:7000/1");
  e = parse_redis_url("redis://:hunter2@10.0.0.2", "--shared-kv");
  EXPECT_EQ(e.text(), ":***@10.0.0.2:6379");
  // Nor does the message refusing a URL with a password in it.
  const std::string m = refusal("redis://alice:hunter2@host:notaport");
  EXPECT_NE(m.find("--shared-kv"), std::string::npos) << m;
  EXPECT_EQ(m.find("hunter2"), std::string::npos) << m;
}

TEST(RedisUrl, MalformedUrlsAreRefusedNamingTheFlag) {
  for (const char* url : {"redis://", "redis://host:notaport", "redis://host:0", "redis://host:70000",
                          "redis://host/db1", "redis://host/-1", "redis://:pw%4@host", "redis://:pw%zz@host",
                          "redis://u:p%@host", "redis://:pw@", "redis://:pw@:6379", "redis://alice@host",
                          "redis://alice:@host", "http://host:6379", "unix:///tmp/redis.sock"}) {
    const std::string m = refusal(url);
    EXPECT_NE(m.find("--shared-kv"), std::string::npos) << url << " was accepted or unnamed: '" << m << "'";
  }
  EXPECT_NE(refusal("redis://:pw%zz@host").find("percent"), std::string::npos);
  EXPECT_NE(refusal("redis://host/db1").find("database"), std::string::npos);
}

TEST(RedisUrl, RedissIsRefusedWithWhatToDoInstead) {
  const std::string m = refusal("rediss://:pw@redis.example:6380");
  EXPECT_NE(m.find("--shared-kv"), std::string::npos) << m;
  EXPECT_NE(m.find("TLS"), std::string::npos) << m;
  EXPECT_NE(m.find("hiredis"), std::string::npos) << m;
  EXPECT_NE(m.find("stunnel"), std::string::npos) << m;
  EXPECT_EQ(m.find("pw"), std::string::npos) << m;
}

TEST(RedisUrl, GlobCharactersAreEscapedForMatch) {
  EXPECT_EQ(escape_redis_glob("a-b_c.d:e/f9"), "a-b_c.d:e/f9");
  EXPECT_EQ(escape_redis_glob("x*y?[z]\\"), "x\\*y\\?\\[z\\]\\\\");
}

}  // namespace
}  // namespace seer
