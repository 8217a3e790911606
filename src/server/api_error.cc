#include "server/api_error.h"

namespace seer::server {

nlohmann::json ApiError::to_json() const {
  nlohmann::json e = {
      {"message", what()},
      {"type", type_},
      {"param", param_.empty() ? nlohmann::json() : nlohmann::json(param_)},
      {"code", code_.empty() ? nlohmann::json() : nlohmann::json(code_)},
  };
  return {{"error", std::move(e)}};
}

std::string ApiError::body() const {
  // Messages may quote client input; never let invalid UTF-8 in them throw.
  return to_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

ApiError malformed_json_error(const std::string& detail) {
  return ApiError(400, "invalid_request_error", "", "invalid_json",
                  "the request body is not valid JSON: " + detail);
}

ApiError model_not_found_error(const std::string& model) {
  return ApiError(404, "invalid_request_error", "model", "model_not_found",
                  fmt::format("the model '{}' does not exist (see GET /v1/models)", model));
}

ApiError route_not_found_error(const std::string& method, const std::string& path) {
  return ApiError(404, "invalid_request_error", "", "not_found",
                  fmt::format("no route for {} {}", method, path));
}

ApiError body_too_large_error(size_t limit) {
  return ApiError(413, "invalid_request_error", "", "request_too_large",
                  fmt::format("the request body exceeds the limit of {} bytes", limit));
}

ApiError context_length_error(const std::string& param, int prompt_tokens, int max_tokens, int context) {
  return ApiError(400, "invalid_request_error", param, "context_length_exceeded",
                  fmt::format("this model's maximum context length is {} tokens, but {} tokens were "
                              "requested ({} in the prompt, {} for the completion)",
                              context, prompt_tokens + max_tokens, prompt_tokens, max_tokens));
}

ApiError queue_full_error(size_t limit) {
  return ApiError(429, "rate_limit_error", "", "queue_full",
                  fmt::format("the server is overloaded: {} requests are already waiting; retry later",
                              limit));
}

ApiError prepare_queue_full_error(size_t limit) {
  return ApiError(429, "rate_limit_error", "", "queue_full",
                  fmt::format("the server is overloaded: {} requests are already being parsed and compiled; "
                              "retry later",
                              limit));
}

ApiError prepare_budget_error(double budget_s) {
  return ApiError(503, "server_error", "", "server_busy",
                  fmt::format("the request waited more than {} s to be parsed and compiled; retry later", budget_s));
}

ApiError shutting_down_error() {
  return ApiError(503, "server_error", "", "shutting_down", "the server is shutting down");
}

ApiError internal_error(const std::string& detail) {
  return ApiError(500, "server_error", "", "internal_error", "internal error: " + detail);
}

}  // namespace seer::server
