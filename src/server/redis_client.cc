#include "server/redis_client.h"

#include <sys/time.h>

#include <hiredis/hiredis.h>

#include <fmt/format.h>

namespace seer {

namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

RedisReply convert(const redisReply* r) {
  RedisReply out;
  switch (r->type) {
    case REDIS_REPLY_STRING: out.type = RedisReply::Type::String; break;
    case REDIS_REPLY_STATUS: out.type = RedisReply::Type::Status; break;
    case REDIS_REPLY_ERROR: out.type = RedisReply::Type::Error; break;
    case REDIS_REPLY_INTEGER: out.type = RedisReply::Type::Integer; break;
    case REDIS_REPLY_ARRAY: out.type = RedisReply::Type::Array; break;
    default: out.type = RedisReply::Type::Nil; break;
  }
  if (r->str) out.str.assign(r->str, r->len);
  out.integer = r->integer;
  for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(convert(r->element[i]));
  return out;
}

}  // namespace

RedisClient::RedisClient(RedisEndpoint endpoint, std::chrono::milliseconds timeout)
    : endpoint_(std::move(endpoint)), timeout_(timeout) {}

RedisClient::~RedisClient() { disconnect(); }

void RedisClient::disconnect() {
  if (ctx_) redisFree(ctx_);
  ctx_ = nullptr;
}

bool RedisClient::ensure_connected() {
  if (ctx_) return true;
  const auto now = std::chrono::steady_clock::now();
  if (now < next_attempt_) return false;
  redisContext* c = redisConnectWithTimeout(endpoint_.host.c_str(), endpoint_.port, to_timeval(timeout_));
  if (c && !c->err && redisSetTimeout(c, to_timeval(timeout_)) == REDIS_OK) {
    ctx_ = c;
    if (!log_in()) return false;
    backoff_ = std::chrono::milliseconds(100);
    return true;
  }
  error_ = c ? c->errstr : "cannot allocate a Redis context";
  if (c) redisFree(c);
  back_off();
  return false;
}

bool RedisClient::log_in() {
  std::vector<std::vector<std::string_view>> commands;
  if (!endpoint_.password.empty()) {
    if (endpoint_.user.empty())
      commands.push_back({"AUTH", endpoint_.password});
    else
      commands.push_back({"AUTH", endpoint_.user, endpoint_.password});
  }
  const std::string db = std::to_string(endpoint_.db);
  if (endpoint_.db != 0) commands.push_back({"SELECT", db});
  if (commands.empty()) return true;
  std::optional<std::vector<RedisReply>> replies = exchange(commands);
  if (!replies) {
    error_ = fmt::format("no answer to AUTH/SELECT: {}", error_);
    return false;
  }
  for (size_t i = 0; i < replies->size(); ++i) {
    const RedisReply& r = (*replies)[i];
    if (r.type != RedisReply::Type::Error) continue;
    const bool auth = commands[i][0] == "AUTH";
    error_ = auth ? fmt::format("authentication failed as user '{}': {}",
                                endpoint_.user.empty() ? "default" : endpoint_.user, r.str)
                  : fmt::format("SELECT {} failed: {}", endpoint_.db, r.str);
    disconnect();
    back_off();
    return false;
  }
  return true;
}

void RedisClient::back_off() {
  next_attempt_ = std::chrono::steady_clock::now() + backoff_;
  backoff_ = std::min(backoff_ * 2, std::chrono::milliseconds(5000));
}

void RedisClient::lose_connection() {
  error_ = ctx_ && ctx_->err ? ctx_->errstr : "no reply";
  disconnect();
  back_off();
}

std::optional<RedisReply> RedisClient::command(const std::vector<std::string_view>& args) {
  std::optional<std::vector<RedisReply>> r = pipeline({args});
  if (!r) return std::nullopt;
  return std::move(r->front());
}

std::optional<std::vector<RedisReply>> RedisClient::pipeline(
    const std::vector<std::vector<std::string_view>>& commands) {
  if (!ensure_connected()) return std::nullopt;
  return exchange(commands);
}

std::optional<std::vector<RedisReply>> RedisClient::exchange(
    const std::vector<std::vector<std::string_view>>& commands) {
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (const std::vector<std::string_view>& args : commands) {
    argv.clear();
    lens.clear();
    for (std::string_view a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    if (redisAppendCommandArgv(ctx_, static_cast<int>(argv.size()), argv.data(), lens.data()) != REDIS_OK) {
      lose_connection();
      return std::nullopt;
    }
  }
  std::vector<RedisReply> out;
  for (size_t i = 0; i < commands.size(); ++i) {
    void* r = nullptr;
    if (redisGetReply(ctx_, &r) != REDIS_OK || !r) {
      if (r) freeReplyObject(r);
      lose_connection();
      return std::nullopt;
    }
    out.push_back(convert(static_cast<const redisReply*>(r)));
    freeReplyObject(r);
  }
  return out;
}

}  // namespace seer
