#include "server/openai_response.h"

#include <random>

#include <fmt/format.h>

namespace seer::server {

using nlohmann::json;

const char* openai_finish_reason(FinishReason r) {
  switch (r) {
    case FinishReason::Stop: return "stop";
    case FinishReason::Length: return "length";
    case FinishReason::Abort: return "abort";
    case FinishReason::Error: return "error";
    case FinishReason::None: break;
  }
  return nullptr;
}

std::string new_response_id(Endpoint endpoint) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("{}-{:016x}{:08x}", endpoint == Endpoint::Completions ? "cmpl" : "chatcmpl", rng(),
                     static_cast<uint32_t>(rng()));
}

namespace {

json finish_json(FinishReason r) {
  const char* name = openai_finish_reason(r);
  return name ? json(name) : json();
}

json usage_json(const Usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}},
          {"completion_tokens_details", {{"reasoning_tokens", u.reasoning_tokens}}}};
}

// The legacy completions shape: parallel arrays; top_logprobs one {token: logprob}
// dict per position (the chosen token included, as vLLM) when asked for.
json completion_logprobs(const std::vector<TokenLogprob>& lps, size_t text_offset, bool top) {
  json tokens = json::array(), values = json::array(), offsets = json::array(), tops = json::array();
  for (const auto& lp : lps) {
    tokens.push_back(lp.token);
    values.push_back(lp.logprob);
    offsets.push_back(text_offset);
    text_offset += lp.token.size();
    json alternatives = json::object();
    for (const auto& alt : lp.top) alternatives[alt.token] = alt.logprob;
    if (!alternatives.contains(lp.token)) alternatives[lp.token] = lp.logprob;
    tops.push_back(std::move(alternatives));
  }
  return {{"tokens", tokens}, {"token_logprobs", values}, {"top_logprobs", top ? tops : json()}, {"text_offset", offsets}};
}

json bytes_json(const std::string& token) {
  json bytes = json::array();
  for (unsigned char c : token) bytes.push_back(static_cast<int>(c));
  return bytes;
}

json chat_logprobs(const std::vector<TokenLogprob>& lps) {
  json content = json::array();
  for (const auto& lp : lps) {
    json top = json::array();
    for (const auto& alt : lp.top)
      top.push_back({{"token", alt.token}, {"logprob", alt.logprob}, {"bytes", bytes_json(alt.token)}});
    content.push_back({{"token", lp.token}, {"logprob", lp.logprob}, {"bytes", bytes_json(lp.token)}, {"top_logprobs", top}});
  }
  return {{"content", content}};
}

json logprobs_json(const ResponseContext& ctx, const std::vector<TokenLogprob>& lps, size_t text_offset) {
  if (!ctx.logprobs) return nullptr;
  return ctx.endpoint == Endpoint::Completions ? completion_logprobs(lps, text_offset, ctx.top_logprobs > 0)
                                               : chat_logprobs(lps);
}

json envelope(const ResponseContext& ctx, const char* object) {
  json out = {{"id", ctx.id}, {"object", object}, {"created", ctx.created}, {"model", ctx.model}};
  if (!ctx.conversation.empty()) out["conversation"] = ctx.conversation;  // seer's extension
  return out;
}

}  // namespace

json completion_response(const ResponseContext& ctx, const std::vector<ChoiceOutput>& choices, const Usage& usage) {
  const bool text = ctx.endpoint == Endpoint::Completions;
  json out = envelope(ctx, text ? "text_completion" : "chat.completion");
  json list = json::array();
  for (const ChoiceOutput& c : choices) {
    json choice = {{"index", c.index},
                   {"logprobs", logprobs_json(ctx, c.logprobs, c.text_offset)},
                   {"finish_reason", finish_json(c.finish)}};
    if (text) choice["text"] = c.text;
    else choice["message"] = {{"role", "assistant"}, {"content", c.text}};
    if (!text && !c.reasoning.empty()) choice["message"]["reasoning_content"] = c.reasoning;
    list.push_back(std::move(choice));
  }
  out["choices"] = std::move(list);
  out["usage"] = usage_json(usage);
  return out;
}

json completion_response(const ResponseContext& ctx, const std::string& text,
                         const std::vector<TokenLogprob>& logprobs, FinishReason finish, const Usage& usage) {
  return completion_response(ctx, {ChoiceOutput{0, text, logprobs, finish}}, usage);
}

json stream_chunk(const ResponseContext& ctx, const ChoiceOutput& c) {
  json choice = {{"index", c.index},
                 {"logprobs", logprobs_json(ctx, c.logprobs, c.text_offset)},
                 {"finish_reason", finish_json(c.finish)}};
  json out;
  if (ctx.endpoint == Endpoint::Completions) {
    out = envelope(ctx, "text_completion");
    choice["text"] = c.text;
  } else {
    out = envelope(ctx, "chat.completion.chunk");
    json d = json::object();
    if (c.first) d["role"] = "assistant";
    if (!c.text.empty() || c.first) d["content"] = c.text;
    if (!c.reasoning.empty()) d["reasoning_content"] = c.reasoning;
    choice["delta"] = d;
  }
  out["choices"] = json::array({choice});
  return out;
}

json stream_chunk(const ResponseContext& ctx, const std::string& delta, const std::vector<TokenLogprob>& logprobs,
                  FinishReason finish, bool first) {
  return stream_chunk(ctx, ChoiceOutput{0, delta, logprobs, finish, 0, first});
}

json tool_calls_response(const ResponseContext& ctx, const std::string& content, const std::vector<ToolCall>& calls,
                         const Usage& usage, const std::string& reasoning) {
  json tc = json::array();
  for (const ToolCall& c : calls)
    tc.push_back({{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
  json message = {{"role", "assistant"}, {"content", content.empty() ? json(nullptr) : json(content)}, {"tool_calls", tc}};
  if (!reasoning.empty()) message["reasoning_content"] = reasoning;
  json choice = {{"index", 0}, {"message", message}, {"logprobs", nullptr}, {"finish_reason", "tool_calls"}};
  json out = envelope(ctx, "chat.completion");
  out["choices"] = json::array({choice});
  out["usage"] = usage_json(usage);
  return out;
}

namespace {
json choice_chunk(const ResponseContext& ctx, json delta, json finish) {
  json c = envelope(ctx, "chat.completion.chunk");
  c["choices"] = json::array({{{"index", 0}, {"delta", std::move(delta)}, {"logprobs", nullptr}, {"finish_reason", finish}}});
  return c;
}
}  // namespace

json tool_call_chunk(const ResponseContext& ctx, const ToolCallDelta& d) {
  json call = {{"index", d.index}};
  if (!d.id.empty()) {
    call["id"] = d.id;
    call["type"] = "function";
    call["function"] = {{"name", d.name}, {"arguments", d.arguments}};
  } else {
    call["function"] = {{"arguments", d.arguments}};
  }
  return choice_chunk(ctx, {{"tool_calls", json::array({call})}}, nullptr);
}

json tool_calls_finish_chunk(const ResponseContext& ctx) { return choice_chunk(ctx, json::object(), "tool_calls"); }

json usage_chunk(const ResponseContext& ctx, const Usage& usage) {
  json out = envelope(ctx, ctx.endpoint == Endpoint::Completions ? "text_completion" : "chat.completion.chunk");
  out["choices"] = json::array();
  out["usage"] = usage_json(usage);
  return out;
}

json models_list(const std::vector<std::string>& names, int64_t created, int32_t max_model_len) {
  json data = json::array();
  for (const auto& n : names) {
    json m = {{"id", n}, {"object", "model"}, {"created", created}, {"owned_by", "seer"}};
    if (max_model_len > 0) m["max_model_len"] = max_model_len;  // vLLM's field
    data.push_back(std::move(m));
  }
  return {{"object", "list"}, {"data", data}};
}

std::string dump_json(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace seer::server
