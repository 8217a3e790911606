#pragma once
// Errors answered to HTTP clients in OpenAI's shape:
//   {"error": {"message": ..., "type": ..., "param": ..., "code": ...}}
// with the HTTP status that goes with them.
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace seer::server {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string type, std::string param, std::string code, const std::string& message)
      : std::runtime_error(message), status_(status), type_(std::move(type)), param_(std::move(param)),
        code_(std::move(code)) {}

  int status() const { return status_; }
  const std::string& type() const { return type_; }
  const std::string& param() const { return param_; }  // "" -> null
  const std::string& code() const { return code_; }    // "" -> null
  // Seconds for the Retry-After header of a 429/503 (default 1).
  int retry_after() const { return retry_after_s_; }
  void set_retry_after(int seconds) { retry_after_s_ = seconds; }

  nlohmann::json to_json() const;
  std::string body() const;  // to_json() serialised

 private:
  int status_;
  std::string type_, param_, code_;
  int retry_after_s_ = 1;
};

// 400 invalid_request_error naming the offending field.
template <typename... Args>
[[noreturn]] void bad_request(const std::string& param, fmt::format_string<Args...> f, Args&&... args) {
  throw ApiError(400, "invalid_request_error", param, "invalid_value",
                 fmt::format(f, std::forward<Args>(args)...));
}

ApiError malformed_json_error(const std::string& detail);
ApiError model_not_found_error(const std::string& model);
ApiError route_not_found_error(const std::string& method, const std::string& path);
ApiError body_too_large_error(size_t limit);
ApiError context_length_error(const std::string& param, int prompt_tokens, int max_tokens, int context);
ApiError queue_full_error(size_t limit);
ApiError shutting_down_error();
// The request-preparation workers (server/prepare_pool.h) are full, or the request
// waited for one longer than the budget.
ApiError prepare_queue_full_error(size_t limit);
ApiError prepare_budget_error(double budget_s);
ApiError internal_error(const std::string& detail);

}  // namespace seer::server
