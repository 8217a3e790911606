#pragma once
// Turns a validated ApiRequest into an engine Request: tokenizes the prompt (or
// applies the chat template to the messages), resolves max_tokens and checks that
// prompt + completion fit the model's context and the KV pool.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "grammar/grammar_cache.h"
#include "scheduler/request.h"
#include "server/openai_request.h"
#include "server/reasoning_config.h"
#include "server/tool_formats/tool_format.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace seer::server {

struct ModelInfo {
  std::string served_name;
  const Tokenizer* tokenizer = nullptr;
  ChatTemplate chat_template;
  int32_t max_model_len = 0;       // prompt + max_tokens must fit
  int32_t kv_capacity_tokens = 0;  // tokens the device KV pool holds in all
  int32_t vocab_size = 0;
  // Compiled grammars of constrained requests over this tokenizer (null: built per
  // request, as tests do).
  std::shared_ptr<grammar::GrammarCache> grammars;
  // Its template's reasoning tags, --reasoning-format and --reasoning-budget (default:
  // no tags, nothing separated).
  ReasoningConfig reasoning;
  // How its replies write tool calls (tool_formats/registry.h; null: Hermes).
  const ToolFormat* tool_format = nullptr;
};

// The cache of compiled grammars for `tok`'s vocabulary.
std::shared_ptr<grammar::GrammarCache> make_grammar_cache(const Tokenizer& tok);

// Default max_tokens of /v1/completions (OpenAI's); chat defaults to the rest of
// the context.
inline constexpr int32_t kDefaultCompletionMaxTokens = 16;

// The prompt's token ids as build_request makes them: the rendered chat (the
// template's markers as special tokens), the completion prompt with BOS, or the ids
// given. `text`, when not null, gets the prompt's text. Throws ApiError (400 when the
// template refuses the messages).
std::vector<int32_t> prompt_tokens_of(const ApiRequest& api, const ModelInfo& model, std::string* text = nullptr);

// Throws ApiError (400 context_length_exceeded, empty prompt, ...).
Request build_request(const ApiRequest& api, const ModelInfo& model);

// The api.n choices of one request: copies of build_request's, choice i with seed
// seed + i when the client gave a seed (distinct, reproducible streams; without one
// each draws its own).
std::vector<Request> build_choice_requests(const ApiRequest& api, const ModelInfo& model);

}  // namespace seer::server
