#pragma once
// The body of POST /v1/completions and /v1/chat/completions, parsed and validated
// into a typed struct. Field names, types and ranges follow OpenAI's API; seer's
// extensions are ignore_eos, conversation, priority, slo and max_reasoning_tokens. Everything that can be
// checked without the tokenizer is checked here (400 with `param` set), including
// that a response_format schema or a grammar compiles. OpenAI fields seer does not
// implement (functions, audio, ...) are refused; other unknown fields are ignored.
// docs/serving.md lists every field; docs/structured-outputs.md the constrained ones.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sampling/sampling_params.h"
#include "server/api_keys.h"
#include "server/json_fields.h"
#include "server/tool_calls.h"
#include "scheduler/request.h"
#include "tokenizer/chat_template.h"

namespace seer::server {

enum class Endpoint { Completions, ChatCompletions };

struct ParseLimits {
  int32_t vocab_size = 0;            // token-id prompts must lie in [0, vocab_size)
  int max_json_depth = kMaxJsonDepth;
  size_t max_string_bytes = 4 << 20; // any one text field
  size_t max_messages = 4096;
  size_t max_prompt_token_ids = 1 << 20;
  size_t max_stop_strings = 16;
  size_t max_stop_bytes = 256;
  size_t max_conversation_bytes = 128;
  int64_t max_max_tokens = 1 << 20;
  size_t max_logit_bias = 1024;      // entries of logit_bias
  int64_t max_top_logprobs = 20;     // top_logprobs (chat), logprobs (completions)
  int64_t max_choices = 16;          // n
  // The served model's tool-call format, which a forced call is written in (null:
  // Hermes, the format of the tools preamble).
  const ToolFormat* tool_format = nullptr;
};

struct ApiRequest {
  Endpoint endpoint = Endpoint::Completions;
  std::string model;  // "" when the client gave none

  // /v1/completions: exactly one of these is set.
  std::optional<std::string> prompt_text;
  std::optional<std::vector<int32_t>> prompt_token_ids;
  // /v1/chat/completions: roles system, user, assistant, tool; message_tools[i] holds
  // messages[i]'s tool_calls / tool_call_id.
  std::vector<ChatMessage> messages;
  std::vector<MessageToolInfo> message_tools;
  // Extra variables of the chat template's context: chat_template_kwargs, plus
  // enable_thinking / reasoning_effort from reasoning_effort (an object, maybe empty).
  nlohmann::ordered_json template_kwargs = nlohmann::ordered_json::object();
  // Reasoning tokens before the server closes the reasoning (absent: the server's
  // --reasoning-budget).
  std::optional<int32_t> max_reasoning_tokens;
  std::vector<ToolFunction> tools;
  ToolChoice tool_choice;
  bool parallel_tool_calls = true;

  // GBNF the output must match ("" : unconstrained), from response_format, the
  // `grammar` extension, or a forced tool call; grammar_param names its field.
  std::string grammar;
  std::string grammar_param;
  // seer's `json_whitespace` extension: "compact" (default) or "flexible" JSON in
  // response_format and forced tool-call arguments.
  grammar::JsonWhitespace json_whitespace = grammar::JsonWhitespace::Compact;

  // n choices of the one prompt, each its own sampling stream (choice i's seed is
  // seed + i); completions' echo puts the prompt before each choice's text.
  int32_t n = 1;
  bool echo = false;

  bool stream = false;
  bool include_usage = false;       // stream_options.include_usage
  std::optional<int32_t> max_tokens;  // absent: the endpoint's default
  // All decoding fields except max_tokens (filled when the prompt length is known).
  SamplingParams sampling;

  std::string conversation;  // the client's id ("" when absent), unscoped
  // Who asks: from the Authorization header (server/api_keys.h), not the body.
  std::string tenant = kAnonymousTenant;
  int32_t priority = 0;
  Slo slo;
};

// A JSON array of 1..max_prompt_token_ids token ids in [0, vocab_size); throws a 400
// naming `path` (and the element) otherwise.
std::vector<int32_t> read_token_ids(const nlohmann::json& arr, const std::string& path, const ParseLimits& limits);

// Throws ApiError (400 with param) for anything malformed.
ApiRequest parse_api_request(std::string_view body, Endpoint endpoint, const ParseLimits& limits);

}  // namespace seer::server
