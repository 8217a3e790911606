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

// One of the most likely tokens at a position (top_logprobs).
struct TokenAlternative {
  std::string token;  // the token's bytes
  float logprob = 0;
};

struct TokenLogprob {
  std::string token;  // the token's bytes (may be part of a UTF-8 character)
  float logprob = 0;
  std::vector<TokenAlternative> top{};  // most likely first; empty unless top_logprobs > 0
};

struct Usage {
  int32_t prompt_tokens = 0;
  int32_t completion_tokens = 0;
  // prompt_tokens_details.cached_tokens: prompt tokens whose K/V came from the
  // prefix / conversation cache (device or host tier) instead of a prefill.
  int32_t cached_tokens = 0;
  // completion_tokens_details.reasoning_tokens: tokens of the reasoning, its tags
  // included (server/reasoning_parser.h); 0 for a model that does not think.
  int32_t reasoning_tokens = 0;
};

// One choice of a response: its whole text (or a streamed delta) and logprobs.
struct ChoiceOutput {
  int32_t index = 0;
  std::string text{};
  std::vector<TokenLogprob> logprobs{};
  FinishReason finish = FinishReason::None;
  // Completions' text_offset of the first token: the length of the text before it
  // in this choice (the echoed prompt, earlier chunks).
  size_t text_offset = 0;
  bool first = false;  // chat chunks: the choice's first, carrying the role
  // Chat: message.reasoning_content / delta.reasoning_content (omitted when empty).
  std::string reasoning{};
};

struct ResponseContext {
  Endpoint endpoint = Endpoint::Completions;
  std::string id;     // "cmpl-..." / "chatcmpl-..."
  std::string model;
  int64_t created = 0;  // unix seconds
  bool logprobs = false;
  std::string conversation;  // the client's id of the conversation ("" : none), echoed in every body
  // Functions the reply may call: non-empty turns on tool-call parsing of the output,
  // read in `tool_format` (the model's; it reads Hermes, Llama 3.x and Mistral too).
  std::vector<ToolFunction> tools;
  const ToolFormat* tool_format = nullptr;
  // Completions' legacy logprobs: N > 0 fills top_logprobs with {token: logprob}
  // dicts (null otherwise). Chat always has top_logprobs arrays.
  int32_t top_logprobs = 0;
  std::string echo_text{};  // completions' echo: the prompt, before each choice's text
};

// "stop", "length", and for requests cut short by the server "abort" / "error".
const char* openai_finish_reason(FinishReason r);

// A fresh response id with the endpoint's prefix.
std::string new_response_id(Endpoint endpoint);

// The whole answer: every choice (n of them, by index) and the usage, which counts
// the prompt once and the completion tokens of all choices.
nlohmann::json completion_response(const ResponseContext& ctx, const std::vector<ChoiceOutput>& choices,
                                   const Usage& usage);
// The same with one choice.
nlohmann::json completion_response(const ResponseContext& ctx, const std::string& text,
                                   const std::vector<TokenLogprob>& logprobs, FinishReason finish,
                                   const Usage& usage);

// One streamed chunk of one choice (choices[0].index = choice.index). For chat,
// choice.first adds the assistant role to the delta. choice.finish is
// FinishReason::None except on the choice's last chunk.
nlohmann::json stream_chunk(const ResponseContext& ctx, const ChoiceOutput& choice);
nlohmann::json stream_chunk(const ResponseContext& ctx, const std::string& delta,
                            const std::vector<TokenLogprob>& logprobs, FinishReason finish, bool first);

// A chat answer that called tools: message.content (null when empty) and
// message.tool_calls, finish_reason "tool_calls"; reasoning_content when not empty.
nlohmann::json tool_calls_response(const ResponseContext& ctx, const std::string& content,
                                   const std::vector<ToolCall>& calls, const Usage& usage,
                                   const std::string& reasoning = "");

// One streamed tool-call delta: a call's first (index, id, type, name and empty
// arguments) or a fragment of its arguments.
nlohmann::json tool_call_chunk(const ResponseContext& ctx, const ToolCallDelta& delta);
// The chunk that ends a choice of tool calls: finish_reason "tool_calls".
nlohmann::json tool_calls_finish_chunk(const ResponseContext& ctx);

// The chunk with empty choices and the usage, sent last when
// stream_options.include_usage is set.
nlohmann::json usage_chunk(const ResponseContext& ctx, const Usage& usage);

nlohmann::json models_list(const std::vector<std::string>& names, int64_t created, int32_t max_model_len = 0);

// Serialises without ever throwing on invalid UTF-8 (replaced by U+FFFD).
std::string dump_json(const nlohmann::json& j);

}  // namespace seer::server
