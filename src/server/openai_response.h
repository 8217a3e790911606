#pragma once
// Response bodies and streaming chunks of /v1/completions ("text_completion") and
// /v1/chat/completions ("chat.completion", "chat.completion.chunk") in OpenAI's
// shapes, plus the /v1/models list.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scheduler/request.h"
#include "server/openai_request.h"
#include "server/tool_calls.h"

namespace seer::server {

struct TokenLogprob {
  std::string token;  // the token's bytes (may be part of a UTF-8 character)
  float logprob = 0;
};

struct Usage {
  int32_t prompt_tokens = 0;
  int32_t completion_tokens = 0;
};

struct ResponseContext {
  Endpoint endpoint = Endpoint::Completions;
  std::string id;     // "cmpl-..." / "chatcmpl-..."
  std::string model;
  int64_t created = 0;  // unix seconds
  bool logprobs = false;
  std::string conversation;  // the client's id of the conversation ("" : none), echoed in every body
  // Functions the reply may call: non-empty turns on tool-call parsing of the output.
  std::vector<std::string> tool_names;
};

// "stop", "length", and for requests cut short by the server "abort" / "error".
const char* openai_finish_reason(FinishReason r);

// A fresh response id with the endpoint's prefix.
std::string new_response_id(Endpoint endpoint);

nlohmann::json completion_response(const ResponseContext& ctx, const std::string& text,
                                   const std::vector<TokenLogprob>& logprobs, FinishReason finish,
                                   const Usage& usage);

// One streamed chunk. For chat, `first` adds the assistant role to the delta.
// `finish` is FinishReason::None except on the last chunk.
nlohmann::json stream_chunk(const ResponseContext& ctx, const std::string& delta,
                            const std::vector<TokenLogprob>& logprobs, FinishReason finish, bool first);

// A chat answer that called tools: message.content (null when empty) and
// message.tool_calls, finish_reason "tool_calls".
nlohmann::json tool_calls_response(const ResponseContext& ctx, const std::string& content,
                                   const std::vector<ToolCall>& calls, const Usage& usage);

// One streamed tool-call delta: a call's first (index, id, type, name and empty
// arguments) or a fragment of its arguments.
nlohmann::json tool_call_chunk(const ResponseContext& ctx, const ToolCallDelta& delta);
// The chunk that ends a choice of tool calls: finish_reason "tool_calls".
nlohmann::json tool_calls_finish_chunk(const ResponseContext& ctx);

// The chunk with empty choices and the usage, sent last when
// stream_options.include_usage is set.
nlohmann::json usage_chunk(const ResponseContext& ctx, const Usage& usage);

nlohmann::json models_list(const std::vector<std::string>& names, int64_t created);

// Serialises without ever throwing on invalid UTF-8 (replaced by U+FFFD).
std::string dump_json(const nlohmann::json& j);

}  // namespace seer::server
