#pragma once
// Request bodies and response fields of the OpenAI-style API, shared by the
// security end-to-end tests (serve_auth, serve_tenancy, serve_conversation_ids,
// serve_http_conformance).
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "e2e/server_process.h"

namespace seer::e2e {

// What `seer serve` issues for "conversation": "new".
inline constexpr const char* kIssuedIdPattern = "conv_[0-9a-f]{32}";

// A greedy /v1/completions body generating exactly `max_tokens` (ignore_eos).
inline std::string completion_body(const std::string& prompt, int max_tokens, const std::string& conversation = "") {
  nlohmann::json b{{"prompt", prompt}, {"max_tokens", max_tokens}, {"temperature", 0}, {"ignore_eos", true}};
  if (!conversation.empty()) b["conversation"] = conversation;
  return b.dump();
}

// A greedy one-message /v1/chat/completions body generating exactly `max_tokens`.
inline std::string chat_body(const std::string& message, int max_tokens, const std::string& conversation = "") {
  nlohmann::json b{{"messages", {{{"role", "user"}, {"content", message}}}},
                   {"max_tokens", max_tokens},
                   {"temperature", 0},
                   {"ignore_eos", true}};
  if (!conversation.empty()) b["conversation"] = conversation;
  return b.dump();
}

inline nlohmann::json json_of(const HttpResult& r) { return nlohmann::json::parse(r.body, nullptr, false); }

// error.code of an error response ("" when the body is not one).
inline std::string error_code(const HttpResult& r) {
  nlohmann::json j = json_of(r);
  if (j.is_discarded() || !j.contains("error") || !j["error"].is_object() || !j["error"]["code"].is_string()) return "";
  return j["error"]["code"].get<std::string>();
}

// usage.prompt_tokens / completion_tokens (-1 when absent).
inline int usage_of(const HttpResult& r, const char* field) {
  nlohmann::json j = json_of(r);
  if (j.is_discarded() || !j.contains("usage") || !j["usage"].contains(field)) return -1;
  return j["usage"][field].get<int>();
}
inline int prompt_tokens(const HttpResult& r) { return usage_of(r, "prompt_tokens"); }
inline int completion_tokens(const HttpResult& r) { return usage_of(r, "completion_tokens"); }

// The generated text of a completion or chat completion ("" when absent).
inline std::string text_of(const HttpResult& r) {
  nlohmann::json j = json_of(r);
  if (j.is_discarded() || !j.contains("choices") || j["choices"].empty()) return "";
  const nlohmann::json& c = j["choices"][0];
  if (c.contains("text")) return c["text"].get<std::string>();
  if (c.contains("message") && c["message"]["content"].is_string()) return c["message"]["content"].get<std::string>();
  return "";
}

// The cache hits of every tier (seer_cache_hit_tokens_total), read with `headers`;
// nullopt while /metrics does not show the series (or does not answer).
inline std::optional<double> cache_hit_tokens(int port, const Headers& headers = {}) {
  std::optional<double> device = metric(port, "seer_cache_hit_tokens_total{tier=\"device\"}", headers);
  if (!device) return std::nullopt;
  return *device + metric(port, "seer_cache_hit_tokens_total{tier=\"host\"}", headers).value_or(0);
}

}  // namespace seer::e2e
