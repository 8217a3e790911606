#include "server/openai_request.h"

#include <limits>

#include "common/error.h"
#include "common/ordered_json_reader.h"
#include "grammar/gbnf_parser.h"
#include "grammar/json_schema_to_gbnf.h"
#include "server/api_error.h"
#include "server/conversation_id.h"
#include "server/json_fields.h"
#include "server/tool_formats/registry.h"

namespace seer::server {

using nlohmann::json;

namespace {


void read_prompt(const json& body, ApiRequest& r, const ParseLimits& limits) {
  auto it = body.find("prompt");
  if (it == body.end() || it->is_null()) bad_request("prompt", "'prompt' is required");
  const json& p = *it;
  if (p.is_string()) {
    if (p.get_ref<const std::string&>().size() > limits.max_string_bytes)
      bad_request("prompt", "'prompt' is longer than {} bytes", limits.max_string_bytes);
    r.prompt_text = p.get<std::string>();
    return;
  }
  if (!p.is_array()) bad_request("prompt", "'prompt' must be a string or an array of token ids, not {}", json_type_name(p));
  if (p.empty()) bad_request("prompt", "'prompt' must not be an empty array");
  // A one-element batch ["text"] or [[ids]] is accepted; real batches are not.
  if (p[0].is_string() || p[0].is_array()) {
    if (p.size() != 1) bad_request("prompt", "batched prompts are not supported: send one prompt per request");
    if (p[0].is_string()) {
      json inner = {{"prompt", p[0]}};
      read_prompt(inner, r, limits);
    } else {
      r.prompt_token_ids = read_token_ids(p[0], "prompt[0]", limits);
    }
    return;
  }
  r.prompt_token_ids = read_token_ids(p, "prompt", limits);
}

std::string read_content(const json& msg, const std::string& path, const std::string& role,
                         const ParseLimits& limits) {
  auto it = msg.find("content");
  if (it == msg.end() || it->is_null()) {
    if (role == "assistant") return "";
    bad_request(path, "'{}' is required", path);
  }
  if (it->is_string()) {
    if (it->get_ref<const std::string&>().size() > limits.max_string_bytes)
      bad_request(path, "'{}' is longer than {} bytes", path, limits.max_string_bytes);
    return it->get<std::string>();
  }
  if (!it->is_array()) bad_request(path, "'{}' must be a string or an array of content parts, not {}", path, json_type_name(*it));
  std::string text;
  for (size_t i = 0; i < it->size(); ++i) {
    const json& part = (*it)[i];
    std::string ppath = fmt::format("{}[{}]", path, i);
    if (!part.is_object()) bad_request(ppath, "'{}' must be an object, not {}", ppath, json_type_name(part));
    auto type = read_string(part, "type", ppath + ".type", 64);
    if (!type) bad_request(ppath + ".type", "'{}.type' is required", ppath);
    if (*type != "text") bad_request(ppath + ".type", "content parts of type '{}' are not supported (only 'text')", *type);
    auto t = read_string(part, "text", ppath + ".text", limits.max_string_bytes);
    if (!t) bad_request(ppath + ".text", "'{}.text' is required", ppath);
    if (!text.empty()) text += '\n';
    text += *t;
  }
  return text;
}

void read_messages(const json& body, ApiRequest& r, const ParseLimits& limits) {
  auto it = body.find("messages");
  if (it == body.end() || it->is_null()) bad_request("messages", "'messages' is required");
  if (!it->is_array()) bad_request("messages", "'messages' must be an array, not {}", json_type_name(*it));
  if (it->empty()) bad_request("messages", "'messages' must hold at least one message");
  if (it->size() > limits.max_messages) bad_request("messages", "'messages' holds more than {} messages", limits.max_messages);
  for (size_t i = 0; i < it->size(); ++i) {
    const json& m = (*it)[i];
    std::string path = fmt::format("messages[{}]", i);
    if (!m.is_object()) bad_request(path, "'{}' must be an object, not {}", path, json_type_name(m));
    auto role = read_string(m, "role", path + ".role", 64);
    if (!role) bad_request(path + ".role", "'{}.role' is required", path);
    std::string r_role = *role == "developer" ? "system" : *role;
    if (r_role != "system" && r_role != "user" && r_role != "assistant" && r_role != "tool")
      bad_request(path + ".role", "role '{}' is not supported (system, developer, user, assistant, tool)", *role);
    r.message_tools.push_back(read_message_tool_info(m, path, r_role));
    ChatMessage msg{r_role, read_content(m, path + ".content", r_role, limits)};
    if (auto rc = read_string(m, "reasoning_content", path + ".reasoning_content", limits.max_string_bytes)) {
      if (r_role != "assistant")
        bad_request(path + ".reasoning_content", "'{}.reasoning_content' is for assistant messages", path);
      msg.reasoning_content = std::move(rc);
    }
    // Templates that take content parts get them as sent (checked above: text only).
    if (auto c = m.find("content"); c != m.end() && c->is_array()) msg.content_parts = parse_ordered_json(c->dump());
    r.messages.push_back(std::move(msg));
  }
}

void read_stop(const json& body, ApiRequest& r, const ParseLimits& limits) {
  auto it = body.find("stop");
  if (it == body.end() || it->is_null()) return;
  auto add = [&](const json& s, const std::string& path) {
    if (!s.is_string()) bad_request(path, "'{}' must be a string, not {}", path, json_type_name(s));
    const auto& str = s.get_ref<const std::string&>();
    if (str.size() > limits.max_stop_bytes) bad_request(path, "'{}' is longer than {} bytes", path, limits.max_stop_bytes);
    if (!str.empty()) r.sampling.stop.push_back(str);
  };
  if (it->is_string()) return add(*it, "stop");
  if (!it->is_array()) bad_request("stop", "'stop' must be a string or an array of strings, not {}", json_type_name(*it));
  if (it->size() > limits.max_stop_strings) bad_request("stop", "'stop' holds more than {} strings", limits.max_stop_strings);
  for (size_t i = 0; i < it->size(); ++i) add((*it)[i], fmt::format("stop[{}]", i));
}

// logprobs are of the raw model distribution (before temperature, top-k/top-p and
// penalties), as vLLM's default logprobs_mode=raw_logprobs.
void read_logprobs(const json& body, ApiRequest& r, const ParseLimits& limits) {
  if (r.endpoint == Endpoint::Completions) {
    // Legacy API: an integer count of alternatives; the chosen token always comes back.
    if (auto n = read_int(body, "logprobs", "logprobs", 0, limits.max_top_logprobs)) {
      r.sampling.logprobs = true;
      r.sampling.top_logprobs = static_cast<int>(*n);
    }
    return;
  }
  r.sampling.logprobs = read_bool(body, "logprobs", "logprobs").value_or(false);
  if (auto n = read_int(body, "top_logprobs", "top_logprobs", 0, limits.max_top_logprobs)) {
    if (!r.sampling.logprobs && *n > 0) bad_request("top_logprobs", "'top_logprobs' needs 'logprobs': true");
    r.sampling.top_logprobs = static_cast<int>(*n);
  }
}

void read_extensions(const json& body, ApiRequest& r, const ParseLimits& limits) {
  r.sampling.ignore_eos = read_bool(body, "ignore_eos", "ignore_eos").value_or(false);
  if (auto c = read_string(body, "conversation", "conversation", limits.max_conversation_bytes)) {
    if (!valid_conversation_id(*c, limits.max_conversation_bytes))
      bad_request("conversation", "'conversation' must be 1-{} characters of [A-Za-z0-9_.:-]", limits.max_conversation_bytes);
    r.conversation = *c;
  }
  if (auto w = read_string(body, "json_whitespace", "json_whitespace", 16)) {
    if (*w != "compact" && *w != "flexible")
      bad_request("json_whitespace", "'json_whitespace' must be \"compact\" or \"flexible\"");
    r.json_whitespace = *w == "flexible" ? grammar::JsonWhitespace::Flexible : grammar::JsonWhitespace::Compact;
  }
  r.priority = static_cast<int32_t>(read_int(body, "priority", "priority", -1000000, 1000000).value_or(0));
  auto it = body.find("slo");
  if (it == body.end() || it->is_null()) return;
  if (!it->is_object()) bad_request("slo", "'slo' must be an object, not {}", json_type_name(*it));
  constexpr double kMaxSeconds = 1e6;
  r.slo.ttft_s = read_number(*it, "ttft_s", "slo.ttft_s", 0, kMaxSeconds).value_or(0);
  r.slo.tbt_s = read_number(*it, "tbt_s", "slo.tbt_s", 0, kMaxSeconds).value_or(0);
  r.slo.deadline_s = read_number(*it, "deadline_s", "slo.deadline_s", 0, kMaxSeconds).value_or(0);
}

// {"<token id>": bias} with ids in [0, vocab_size) and biases in [-100, 100].
void read_logit_bias(const json& body, ApiRequest& r, const ParseLimits& limits) {
  auto it = body.find("logit_bias");
  if (it == body.end() || it->is_null()) return;
  if (!it->is_object()) bad_request("logit_bias", "'logit_bias' must be an object of token id -> bias, not {}", json_type_name(*it));
  if (it->size() > limits.max_logit_bias)
    bad_request("logit_bias", "'logit_bias' holds more than {} entries", limits.max_logit_bias);
  for (const auto& [key, value] : it->items()) {
    const std::string path = "logit_bias." + key;
    int64_t id = -1;
    const bool numeric = !key.empty() && key.size() <= 10 && key.find_first_not_of("0123456789") == std::string::npos;
    if (numeric) id = std::stoll(key);
    if (!numeric || id >= limits.vocab_size)
      bad_request("logit_bias", "'logit_bias' key '{}' is not a token id in [0, {})", key.substr(0, 32), limits.vocab_size);
    const double bias = read_number(*it, key.c_str(), path, -100, 100).value_or(0.0);
    r.sampling.logit_bias.emplace_back(static_cast<int32_t>(id), static_cast<float>(bias));
  }
}

// OpenAI fields seer does not implement: refused rather than silently ignored,
// unless they hold the value that means "off" (docs/serving.md lists them).
void read_unimplemented(const json& body) {
  auto present = [&](const char* k) {
    auto it = body.find(k);
    return it != body.end() && !it->is_null();
  };
  for (const char* k : {"functions", "function_call", "audio", "prediction", "web_search_options", "suffix"})
    if (present(k)) bad_request(k, "'{}' is not supported by seer", k);
  if (present("store") && body["store"] != false) bad_request("store", "'store' is not supported (only false)");
  if (present("modalities") && body["modalities"] != json::array({"text"}))
    bad_request("modalities", "'modalities' is not supported (only [\"text\"])");
  // seer has one processing tier: "auto" and "default" name it; flex, priority, scale it lacks.
  if (present("service_tier") && body["service_tier"] != "auto" && body["service_tier"] != "default")
    bad_request("service_tier", "'service_tier' must be \"auto\" or \"default\" (seer has no other tier)");
}

// metadata tags a stored completion; seer stores none, so a well-formed one (OpenAI's
// limits: 16 pairs, keys up to 64 bytes, string values up to 512) is ignored.
void read_metadata(const json& body) {
  auto it = body.find("metadata");
  if (it == body.end() || it->is_null()) return;
  if (!it->is_object()) bad_request("metadata", "'metadata' must be an object of strings, not {}", json_type_name(*it));
  if (it->size() > 16) bad_request("metadata", "'metadata' holds more than 16 pairs");
  for (const auto& [key, value] : it->items()) {
    if (key.size() > 64) bad_request("metadata", "'metadata' key '{}...' is longer than 64 bytes", key.substr(0, 16));
    if (!value.is_string() || value.get_ref<const std::string&>().size() > 512)
      bad_request("metadata." + key.substr(0, 64), "'metadata.{}' must be a string of at most 512 bytes", key.substr(0, 64));
  }
}

// reasoning_effort switches thinking through the template's enable_thinking (none /
// minimal: off) and reaches templates that read it themselves (gpt-oss);
// chat_template_kwargs go to the template as they are and win over that mapping.
void read_reasoning(const json& body, ApiRequest& r, const ParseLimits& limits) {
  if (auto e = read_string(body, "reasoning_effort", "reasoning_effort", 16)) {
    if (*e != "none" && *e != "minimal" && *e != "low" && *e != "medium" && *e != "high")
      bad_request("reasoning_effort", "'reasoning_effort' must be one of none, minimal, low, medium, high, not '{}'",
                  e->substr(0, 16));
    r.template_kwargs["enable_thinking"] = *e != "none" && *e != "minimal";
    r.template_kwargs["reasoning_effort"] = *e;
  }
  if (auto n = read_int(body, "max_reasoning_tokens", "max_reasoning_tokens", 0, limits.max_max_tokens))
    r.max_reasoning_tokens = static_cast<int32_t>(*n);
  auto it = body.find("chat_template_kwargs");
  if (it == body.end() || it->is_null()) return;
  if (!it->is_object())
    bad_request("chat_template_kwargs", "'chat_template_kwargs' must be an object, not {}", json_type_name(*it));
  if (r.endpoint != Endpoint::ChatCompletions)
    bad_request("chat_template_kwargs", "'chat_template_kwargs' is for /v1/chat/completions");
  for (const auto& [key, value] : it->items()) {
    if (key == "messages" || key == "tools" || key == "add_generation_prompt" || key == "bos_token" || key == "eos_token")
      bad_request("chat_template_kwargs." + key, "'chat_template_kwargs.{}' is set by the server", key);
    r.template_kwargs[key] = nlohmann::ordered_json::parse(value.dump());
  }
}

// A grammar that does not parse (or a schema the compiler produced badly) is the
// client's 400, naming the field.
void check_grammar(const ApiRequest& r) {
  try {
    (void)grammar::parse_gbnf(r.grammar);
  } catch (const Error& e) {
    bad_request(r.grammar_param, "'{}': {}", r.grammar_param, e.what());
  }
}

void read_response_format(const nlohmann::ordered_json& body, ApiRequest& r) {
  auto it = body.find("response_format");
  if (it == body.end() || it->is_null()) return;
  const auto& f = *it;
  const std::string type = f.is_object() && f.contains("type") && f["type"].is_string() ? f["type"].get<std::string>() : "";
  if (type == "text") return;
  r.grammar_param = "response_format";
  if (type == "json_object") {
    r.grammar = grammar::json_object_gbnf(r.json_whitespace);
    return;
  }
  if (type != "json_schema")
    bad_request("response_format", "'response_format.type' must be \"text\", \"json_object\" or \"json_schema\"");
  if (!f.contains("json_schema") || !f["json_schema"].is_object() || !f["json_schema"].contains("schema"))
    bad_request("response_format.json_schema.schema", "'response_format.json_schema.schema' is required");
  try {
    r.grammar = grammar::json_schema_to_gbnf(f["json_schema"]["schema"], r.json_whitespace);
  } catch (const Error& e) {
    bad_request("response_format.json_schema.schema", "'response_format.json_schema.schema' {}", e.what());
  }
}

void read_constraints(std::string_view body_text, const json& body, ApiRequest& r, const ToolFormat* tool_format) {
  const bool tools = body.contains("tools") || body.contains("tool_choice") || body.contains("parallel_tool_calls");
  const bool format = body.contains("response_format");
  if (body.contains("grammar") && !body["grammar"].is_null()) {
    if (format) bad_request("grammar", "give either 'grammar' or 'response_format', not both");
    if (!body["grammar"].is_string()) bad_request("grammar", "'grammar' must be a GBNF string");
    r.grammar = body["grammar"];
    r.grammar_param = "grammar";
  }
  if (!tools && !format) {
    if (!r.grammar.empty()) check_grammar(r);
    return;
  }
  // Schemas keep the client's key order (property order in the output).
  const auto ordered = parse_ordered_json(body_text);  // body_text parsed as JSON above
  read_response_format(ordered, r);
  if (tools) {
    if (r.endpoint != Endpoint::ChatCompletions && body.contains("tools") && !body["tools"].is_null())
      bad_request("tools", "'tools' are for /v1/chat/completions");
    read_tools(ordered, &r.tools, &r.tool_choice, &r.parallel_tool_calls);
    if (r.tool_choice.mode == ToolChoiceMode::Required || r.tool_choice.mode == ToolChoiceMode::Named) {
      const ToolFormat& format = tool_format ? *tool_format : hermes_tool_format();
      r.grammar = format.forced_call_grammar(r.tools, r.tool_choice, r.parallel_tool_calls, r.json_whitespace);
      r.grammar_param = "tools";
    }
  }
  if (!r.grammar.empty()) check_grammar(r);
}

void read_sampling(const json& body, ApiRequest& r, const ParseLimits& limits) {
  SamplingParams& s = r.sampling;
  auto max_tokens = read_int(body, "max_tokens", "max_tokens", 1, limits.max_max_tokens);
  if (r.endpoint == Endpoint::ChatCompletions)
    if (auto m = read_int(body, "max_completion_tokens", "max_completion_tokens", 1, limits.max_max_tokens)) max_tokens = m;
  if (max_tokens) r.max_tokens = static_cast<int32_t>(*max_tokens);
  s.temperature = static_cast<float>(read_number(body, "temperature", "temperature", 0, 2).value_or(1.0));
  s.top_p = static_cast<float>(read_number(body, "top_p", "top_p", 0, 1).value_or(1.0));
  if (s.top_p <= 0) bad_request("top_p", "'top_p' must be greater than 0 and at most 1");
  int64_t top_k = read_int(body, "top_k", "top_k", -1, std::numeric_limits<int32_t>::max()).value_or(0);
  s.top_k = top_k < 0 ? 0 : static_cast<int>(top_k);  // -1 (vLLM) and 0 both mean off
  s.min_p = static_cast<float>(read_number(body, "min_p", "min_p", 0, 1).value_or(0.0));
  s.frequency_penalty = static_cast<float>(read_number(body, "frequency_penalty", "frequency_penalty", -2, 2).value_or(0.0));
  s.presence_penalty = static_cast<float>(read_number(body, "presence_penalty", "presence_penalty", -2, 2).value_or(0.0));
  s.repetition_penalty = static_cast<float>(read_number(body, "repetition_penalty", "repetition_penalty", 0, 10).value_or(1.0));
  if (s.repetition_penalty <= 0) bad_request("repetition_penalty", "'repetition_penalty' must be greater than 0");
  s.seed = read_seed(body, "seed", "seed");
  read_stop(body, r, limits);
  read_logprobs(body, r, limits);
  read_logit_bias(body, r, limits);
}

void read_choices(const json& body, ApiRequest& r, const ParseLimits& limits) {
  r.n = static_cast<int32_t>(read_int(body, "n", "n", 1, limits.max_choices).value_or(1));
  if (r.endpoint != Endpoint::Completions) return;
  if (auto b = read_int(body, "best_of", "best_of", 1, limits.max_choices); b && *b != r.n)
    bad_request("best_of", "only best_of = n is supported (n = {}), got {}", r.n, *b);
  r.echo = read_bool(body, "echo", "echo").value_or(false);
}

// What n > 1 and echo cannot be combined with (checked once everything is read).
void check_choices(const ApiRequest& r) {
  if (r.echo && r.sampling.logprobs)
    bad_request("echo", "'echo' with 'logprobs' is not supported (the prompt's logprobs are not computed)");
  if (r.n == 1) return;
  if (!r.conversation.empty())
    bad_request("n", "n > 1 is not supported with 'conversation' (which choice would continue it?)");
  if (!r.tools.empty() && r.tool_choice.mode != ToolChoiceMode::None)
    bad_request("n", "n > 1 is not supported with 'tools'");
}

}  // namespace

std::vector<int32_t> read_token_ids(const json& arr, const std::string& path, const ParseLimits& limits) {
  if (arr.empty()) bad_request(path, "'{}' must not be an empty array", path);
  if (arr.size() > limits.max_prompt_token_ids)
    bad_request(path, "'{}' holds more than {} token ids", path, limits.max_prompt_token_ids);
  std::vector<int32_t> ids;
  ids.reserve(arr.size());
  for (size_t i = 0; i < arr.size(); ++i) {
    const json& v = arr[i];
    std::string item = fmt::format("{}[{}]", path, i);
    if (!v.is_number_integer()) bad_request(item, "'{}' must be a token id (integer), not {}", item, json_type_name(v));
    int64_t id = v.is_number_unsigned() ? static_cast<int64_t>(std::min<uint64_t>(v.get<uint64_t>(), INT64_MAX))
                                        : v.get<int64_t>();
    if (id < 0 || id >= limits.vocab_size)
      bad_request(item, "token id {} is outside the vocabulary [0, {})", id, limits.vocab_size);
    ids.push_back(static_cast<int32_t>(id));
  }
  return ids;
}

ApiRequest parse_api_request(std::string_view body_text, Endpoint endpoint, const ParseLimits& limits) {
  json body = parse_json_object(body_text, limits.max_json_depth);
  ApiRequest r;
  r.endpoint = endpoint;
  r.model = read_string(body, "model", "model", 256).value_or("");
  r.stream = read_bool(body, "stream", "stream").value_or(false);
  if (auto it = body.find("stream_options"); it != body.end() && !it->is_null()) {
    if (!it->is_object()) bad_request("stream_options", "'stream_options' must be an object, not {}", json_type_name(*it));
    r.include_usage = read_bool(*it, "include_usage", "stream_options.include_usage").value_or(false);
  }
  (void)read_string(body, "user", "user", 256);  // read to type-check it (a bad "user" is a 400); unused
  read_choices(body, r, limits);
  read_unimplemented(body);
  read_metadata(body);
  if (endpoint == Endpoint::Completions) read_prompt(body, r, limits);
  else read_messages(body, r, limits);
  read_sampling(body, r, limits);
  read_extensions(body, r, limits);
  read_reasoning(body, r, limits);
  read_constraints(body_text, body, r, limits.tool_format);
  check_choices(r);
  return r;
}

}  // namespace seer::server
