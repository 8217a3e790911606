#pragma once
// A small synchronous Redis client over hiredis, for the shared KV tier's I/O
// thread (kv/redis_kv_store.h). Every call is bounded by the timeout (connect and
// each command); a failed connection is closed and retried no sooner than a
// backoff that doubles from 100 ms up to 5 s, so a dead Redis costs nothing but
// a quick refusal. Every connection logs in first (AUTH, then SELECT of a
// database other than 0): a refused login is a failed connection.
//
// Not thread-safe: one thread owns a client.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/redis_url.h"

struct redisContext;

namespace seer {

struct RedisReply {
  enum class Type { String, Nil, Array, Status, Error, Integer };
  Type type = Type::Nil;
  std::string str;  // String, Status, Error
  int64_t integer = 0;
  std::vector<RedisReply> elements;  // Array
};

class RedisClient {
 public:
  RedisClient(RedisEndpoint endpoint, std::chrono::milliseconds timeout);
  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  const RedisEndpoint& endpoint() const { return endpoint_; }
  bool connected() const { return ctx_ != nullptr; }
  // Connects and logs in unless connected or still backing off. False (see
  // last_error(): "authentication failed ..." when Redis refused the login) when
  // not connected.
  [[nodiscard]] bool ensure_connected();
  // Sends one command; nullopt on a transport error or timeout (the connection is
  // then closed, and the next call reconnects after the backoff). A Redis error
  // reply is a reply (Type::Error), not a transport error.
  [[nodiscard]] std::optional<RedisReply> command(const std::vector<std::string_view>& args);
  // Sends several commands in one round trip (pipelined) and returns their replies
  // in order; nullopt as for command() when any of them meets a transport error.
  [[nodiscard]] std::optional<std::vector<RedisReply>> pipeline(
      const std::vector<std::vector<std::string_view>>& commands);
  const std::string& last_error() const { return error_; }
  void disconnect();

 private:
  void lose_connection();  // after a transport error: close, back off
  void back_off();
  // AUTH and SELECT on a fresh connection; false (connection closed) when refused.
  [[nodiscard]] bool log_in();
  // pipeline() on the open connection.
  [[nodiscard]] std::optional<std::vector<RedisReply>> exchange(
      const std::vector<std::vector<std::string_view>>& commands);
  RedisEndpoint endpoint_;
  std::chrono::milliseconds timeout_;
  redisContext* ctx_ = nullptr;
  std::string error_;
  std::chrono::steady_clock::time_point next_attempt_{};
  std::chrono::milliseconds backoff_{100};
};

}  // namespace seer
