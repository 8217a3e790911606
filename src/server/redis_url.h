#pragma once
// Where the shared KV tier's Redis is and how to log in to it: the value of
// `seer serve --shared-kv` (docs/deploy.md).
#include <string>
#include <string_view>

namespace seer {

struct RedisEndpoint {
  std::string host;
  int port = 6379;
  std::string user{};      // a Redis 6 ACL user; empty: the default user
  std::string password{};  // empty: no AUTH
  int db = 0;              // SELECTed after connecting when not 0
  // "[user:***@]host:port[/db]" for logs and messages: never the password.
  std::string text() const;
};

// "redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]" (the scheme may be left out). USER
// and PASSWORD are percent-decoded ("%40" is '@'). "rediss://" (TLS) is refused:
// hiredis 0.14 has no TLS. Throws seer::Error naming `flag`.
[[nodiscard]] RedisEndpoint parse_redis_url(const std::string& url, const std::string& flag);

// `text` with the glob characters of a Redis MATCH pattern escaped, so that it
// matches only itself.
[[nodiscard]] std::string escape_redis_glob(std::string_view text);

}  // namespace seer
