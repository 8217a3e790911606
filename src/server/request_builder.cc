#include "server/request_builder.h"

#include <algorithm>

#include "common/error.h"
#include "engine/engine.h"
#include "kv/conversation_key.h"
#include "server/api_error.h"
#include "server/tool_prompt.h"

namespace seer::server {

namespace {

// Sets the prompt's tokens and, when the prompt is text, its text (what length
// predictors read): the rendered chat, or the completion prompt.
void set_prompt(Request& r, const ApiRequest& api, const ModelInfo& model) {
  r.prompt_tokens = prompt_tokens_of(api, model, &r.prompt_text);
}

void set_grammar(Request& r, const ApiRequest& api, const ModelInfo& model) {
  if (api.grammar.empty()) return;
  try {
    auto cache = model.grammars ? model.grammars : make_grammar_cache(*model.tokenizer);
    r.sampling.grammar = cache->get(api.grammar);
  } catch (const Error& e) {
    bad_request(api.grammar_param, "'{}': {}", api.grammar_param, e.what());
  }
}

}  // namespace

std::vector<int32_t> prompt_tokens_of(const ApiRequest& api, const ModelInfo& model, std::string* text) {
  std::string rendered;
  if (api.endpoint == Endpoint::ChatCompletions) {
    try {
      rendered = render_chat_prompt(model.chat_template, api.messages, api.message_tools, api.tools, api.tool_choice,
                                    api.template_kwargs);
    } catch (const Error& e) {  // the model's template refused the conversation (raise_exception)
      bad_request("messages", "the model's chat template refused the messages: {}", e.what());
    }
    if (text) *text = rendered;
    // The template's own markers (<|im_start|>, [INST], ...) are special tokens.
    return model.tokenizer->encode(rendered, /*add_special=*/true, /*parse_special=*/true);
  }
  if (api.prompt_token_ids) return *api.prompt_token_ids;
  if (text) *text = *api.prompt_text;
  return model.tokenizer->encode(*api.prompt_text, /*add_special=*/true, /*parse_special=*/false);
}

std::shared_ptr<grammar::GrammarCache> make_grammar_cache(const Tokenizer& tok) {
  return std::make_shared<grammar::GrammarCache>([&tok] {
    std::vector<std::string> bytes(static_cast<size_t>(tok.vocab_size()));
    for (int32_t id = 0; id < tok.vocab_size(); ++id) bytes[id] = tok.token_bytes(id);
    return std::make_shared<const grammar::TokenTrie>(bytes, tok.end_of_generation_ids());
  });
}

Request build_request(const ApiRequest& api, const ModelInfo& model) {
  const std::string param = api.endpoint == Endpoint::ChatCompletions ? "messages" : "prompt";
  Request r;
  set_prompt(r, api, model);
  const int32_t prompt_len = r.prompt_len();
  if (prompt_len == 0) bad_request(param, "the prompt is empty after tokenization");
  // The same limit the engine checks (the KV pool can hold fewer tokens than the context).
  const int32_t limit = max_request_tokens(model.max_model_len, model.kv_capacity_tokens);
  int32_t max_tokens = api.max_tokens.value_or(
      api.endpoint == Endpoint::ChatCompletions ? std::max(limit - prompt_len, 1) : kDefaultCompletionMaxTokens);
  if (static_cast<int64_t>(prompt_len) + max_tokens > limit)
    throw context_length_error(api.max_tokens ? "max_tokens" : param, prompt_len, max_tokens, limit);

  r.sampling = api.sampling;
  r.sampling.max_tokens = max_tokens;
  set_grammar(r, api, model);
  if (api.endpoint == Endpoint::ChatCompletions)
    r.sampling.reasoning_budget =
        reasoning_budget_for(model.reasoning, api.max_reasoning_tokens, !api.grammar.empty(), r.prompt_text);
  else if (api.max_reasoning_tokens)
    bad_request("max_reasoning_tokens", "'max_reasoning_tokens' is for /v1/chat/completions");
  // With ignore_eos (benchmarks: generate exactly max_tokens) the end-of-turn text
  // of the template does not end the request either; the client's own stops still do.
  if (api.endpoint == Endpoint::ChatCompletions && !api.sampling.ignore_eos)
    for (const auto& s : model.chat_template.stop_strings())
      if (std::find(r.sampling.stop.begin(), r.sampling.stop.end(), s) == r.sampling.stop.end())
        r.sampling.stop.push_back(s);
  try {
    r.sampling.validate();
  } catch (const Error& e) {
    bad_request("", "{}", e.what());
  }
  // With an id the client sends only its new message: the engine prepends the
  // history, dropping this prompt's BOS (docs/pensieve.md), and then sizes a chat's
  // default max_tokens to what the context has left.
  r.tenant = api.tenant;
  if (!api.conversation.empty()) r.conversation = conversation_key(api.tenant, api.conversation);
  r.continues_conversation = !api.conversation.empty();
  r.max_tokens_fill_context = r.continues_conversation && !api.max_tokens && api.endpoint == Endpoint::ChatCompletions;
  r.fresh_start_tokens = model.tokenizer->add_bos() && !r.prompt_tokens.empty() &&
                                 r.prompt_tokens.front() == model.tokenizer->bos_id() && !api.prompt_token_ids
                             ? 1
                             : 0;
  r.priority = api.priority;
  r.slo = api.slo;
  return r;
}

std::vector<Request> build_choice_requests(const ApiRequest& api, const ModelInfo& model) {
  Request first = build_request(api, model);
  std::vector<Request> out(static_cast<size_t>(std::max(api.n, 1)), first);
  for (size_t i = 1; i < out.size(); ++i)
    if (first.sampling.seed) out[i].sampling.seed = *first.sampling.seed + i;
  return out;
}

}  // namespace seer::server
