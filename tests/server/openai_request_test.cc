// Parsing and validation of /v1/completions and /v1/chat/completions bodies: good
// requests become the right typed fields; malformed and hostile ones become a 400
// naming the right param.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "server/api_error.h"
#include "server/openai_request.h"

namespace seer::server {
namespace {

ParseLimits limits() {
  ParseLimits l;
  l.vocab_size = 512;
  return l;
}

TEST(OpenAiRequest, CompletionWithEveryField) {
  ApiRequest r = parse_api_request(R"({
      "model": "m", "prompt": "Once upon", "max_tokens": 7, "temperature": 0.5, "top_p": 0.9,
      "top_k": 40, "min_p": 0.05, "frequency_penalty": 0.5, "presence_penalty": -0.5,
      "repetition_penalty": 1.1, "seed": 42, "stop": ["\n", "The end"], "logprobs": 0,
      "n": 1, "stream": true, "stream_options": {"include_usage": true}, "ignore_eos": true,
      "conversation": "c-7:a", "priority": 3, "slo": {"ttft_s": 1.5, "tbt_s": 0.1, "deadline_s": 30},
      "user": "u", "some_future_field": {"x": [1, 2]}})",
                                   Endpoint::Completions, limits());
  EXPECT_EQ(r.model, "m");
  ASSERT_TRUE(r.prompt_text);
  EXPECT_EQ(*r.prompt_text, "Once upon");
  EXPECT_FALSE(r.prompt_token_ids);
  EXPECT_EQ(r.max_tokens, 7);
  EXPECT_FLOAT_EQ(r.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(r.sampling.top_p, 0.9f);
  EXPECT_EQ(r.sampling.top_k, 40);
  EXPECT_FLOAT_EQ(r.sampling.min_p, 0.05f);
  EXPECT_FLOAT_EQ(r.sampling.frequency_penalty, 0.5f);
  EXPECT_FLOAT_EQ(r.sampling.presence_penalty, -0.5f);
  EXPECT_FLOAT_EQ(r.sampling.repetition_penalty, 1.1f);
  EXPECT_EQ(r.sampling.seed, 42u);
  EXPECT_EQ(r.sampling.stop, (std::vector<std::string>{"\n", "The end"}));
  EXPECT_TRUE(r.sampling.logprobs);
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_TRUE(r.sampling.ignore_eos);
  EXPECT_EQ(r.conversation, "c-7:a");
  EXPECT_EQ(r.priority, 3);
  EXPECT_DOUBLE_EQ(r.slo.ttft_s, 1.5);
  EXPECT_DOUBLE_EQ(r.slo.tbt_s, 0.1);
  EXPECT_DOUBLE_EQ(r.slo.deadline_s, 30);
}

TEST(OpenAiRequest, DefaultsWhenFieldsAbsentOrNull) {
  ApiRequest r = parse_api_request(R"({"prompt": "x", "max_tokens": null, "temperature": null, "stop": null})",
                                   Endpoint::Completions, limits());
  EXPECT_EQ(r.model, "");
  EXPECT_FALSE(r.max_tokens);
  EXPECT_FLOAT_EQ(r.sampling.temperature, 1.0f);
  EXPECT_FALSE(r.stream);
  EXPECT_FALSE(r.sampling.logprobs);
  EXPECT_FALSE(r.sampling.seed);
  EXPECT_TRUE(r.sampling.stop.empty());
  EXPECT_EQ(r.conversation, "");
}

TEST(OpenAiRequest, PromptForms) {
  auto ids = parse_api_request(R"({"prompt": [1, 2, 511]})", Endpoint::Completions, limits());
  ASSERT_TRUE(ids.prompt_token_ids);
  EXPECT_EQ(*ids.prompt_token_ids, (std::vector<int32_t>{1, 2, 511}));
  auto one_text = parse_api_request(R"({"prompt": ["hi"]})", Endpoint::Completions, limits());
  EXPECT_EQ(one_text.prompt_text, "hi");
  auto one_ids = parse_api_request(R"({"prompt": [[5, 6]]})", Endpoint::Completions, limits());
  EXPECT_EQ(*one_ids.prompt_token_ids, (std::vector<int32_t>{5, 6}));
  auto single_stop = parse_api_request(R"({"prompt": "a", "stop": "END"})", Endpoint::Completions, limits());
  EXPECT_EQ(single_stop.sampling.stop, (std::vector<std::string>{"END"}));
}

TEST(OpenAiRequest, ChatMessages) {
  ApiRequest r = parse_api_request(R"({"model": "m", "messages": [
      {"role": "developer", "content": "Be brief."},
      {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
      {"role": "assistant", "content": null},
      {"role": "user", "content": "c", "name": "bob"}],
      "max_completion_tokens": 9, "logprobs": true, "top_logprobs": 0})",
                                   Endpoint::ChatCompletions, limits());
  ASSERT_EQ(r.messages.size(), 4u);
  EXPECT_EQ(r.messages[0].role, "system");
  EXPECT_EQ(r.messages[0].content, "Be brief.");
  EXPECT_EQ(r.messages[1].content, "a\nb");
  EXPECT_EQ(r.messages[2].role, "assistant");
  EXPECT_EQ(r.messages[2].content, "");
  EXPECT_EQ(r.messages[3].content, "c");
  EXPECT_EQ(r.max_tokens, 9);
  EXPECT_TRUE(r.sampling.logprobs);
}

TEST(OpenAiRequest, TopKMinusOneMeansOff) {
  auto r = parse_api_request(R"({"prompt": "a", "top_k": -1})", Endpoint::Completions, limits());
  EXPECT_EQ(r.sampling.top_k, 0);
}

TEST(OpenAiRequest, NegativeSeedWraps) {
  auto r = parse_api_request(R"({"prompt": "a", "seed": -1})", Endpoint::Completions, limits());
  EXPECT_EQ(r.sampling.seed, UINT64_MAX);
}

TEST(OpenAiRequest, EmptyStopStringsAreIgnored) {
  auto r = parse_api_request(R"({"prompt": "a", "stop": ["", "x"]})", Endpoint::Completions, limits());
  EXPECT_EQ(r.sampling.stop, (std::vector<std::string>{"x"}));
}

// What the openai, AI SDK and LangChain clients send beside the fields seer honours
// (tests/e2e/client_libraries_test.cc): accepted, and the honoured ones read.
TEST(OpenAiRequest, FieldsTheClientLibrariesSend) {
  ApiRequest r = parse_api_request(R"({
      "model": "m", "messages": [{"role": "user", "content": "a"}], "max_completion_tokens": 9, "n": 2,
      "user": "e2e-user", "store": false, "metadata": {"suite": "e2e"}, "service_tier": "auto",
      "stream": true, "stream_options": {"include_usage": true, "include_obfuscation": false},
      "safety_identifier": "s", "prompt_cache_key": "k"})",
                                   Endpoint::ChatCompletions, limits());
  EXPECT_EQ(r.max_tokens, 9);
  EXPECT_EQ(r.n, 2);
  EXPECT_TRUE(r.include_usage);
  for (const char* tier : {"auto", "default"})
    EXPECT_NO_THROW(parse_api_request(std::string(R"({"prompt": "a", "service_tier": ")") + tier + "\"}",
                                      Endpoint::Completions, limits()));
}

struct BadCase {
  const char* name;
  Endpoint endpoint;
  std::string body;
  const char* param;  // "" for none
};

std::vector<BadCase> bad_cases() {
  const Endpoint C = Endpoint::Completions, H = Endpoint::ChatCompletions;
  std::string deep = std::string(100, '[') + std::string(100, ']');
  std::string deep_obj = R"({"prompt": "a", "x": )" + std::string(200, '[') + std::string(200, ']') + "}";
  std::string many_stops = R"({"prompt": "a", "stop": [)";
  for (int i = 0; i < 17; ++i) many_stops += std::string(i ? "," : "") + "\"s" + std::to_string(i) + "\"";
  many_stops += "]}";
  std::string many_metadata = R"({"messages": [{"role": "user", "content": "a"}], "metadata": {)";
  for (int i = 0; i < 17; ++i) many_metadata += std::string(i ? "," : "") + "\"k" + std::to_string(i) + "\": \"v\"";
  many_metadata += "}}";
  return {
      {"empty_body", C, "", ""},
      {"service_tier_flex", H, R"({"messages": [{"role": "user", "content": "a"}], "service_tier": "flex"})", "service_tier"},
      {"metadata_not_object", H, R"({"messages": [{"role": "user", "content": "a"}], "metadata": ["a"]})", "metadata"},
      {"metadata_number_value", H, R"({"messages": [{"role": "user", "content": "a"}], "metadata": {"k": 1}})", "metadata.k"},
      {"metadata_17_pairs", H, many_metadata, "metadata"},
      {"functions_refused", H, R"({"messages": [{"role": "user", "content": "a"}], "functions": []})", "functions"},
      {"not_json", C, "hello", ""},
      {"truncated_json", C, R"({"prompt": "a")", ""},
      {"trailing_garbage", C, R"({"prompt": "a"} x)", ""},
      {"json_array_body", C, R"([1, 2])", ""},
      {"json_string_body", C, R"("prompt")", ""},
      {"json_null_body", C, "null", ""},
      {"invalid_utf8", C, "{\"prompt\": \"\xff\xfe\"}", ""},
      {"lone_surrogate_escape", C, R"({"prompt": "\ud800"})", ""},
      {"raw_nul_in_string", C, std::string("{\"prompt\": \"a\0b\"}", 17), ""},
      {"raw_newline_in_string", C, "{\"prompt\": \"a\nb\"}", ""},
      {"deep_nesting", C, deep, ""},
      {"deep_nesting_unknown_field", C, deep_obj, ""},
      {"missing_prompt", C, R"({"model": "m"})", "prompt"},
      {"null_prompt", C, R"({"prompt": null})", "prompt"},
      {"prompt_number", C, R"({"prompt": 5})", "prompt"},
      {"prompt_object", C, R"({"prompt": {"text": "a"}})", "prompt"},
      {"prompt_bool", C, R"({"prompt": true})", "prompt"},
      {"prompt_empty_array", C, R"({"prompt": []})", "prompt"},
      {"prompt_batch", C, R"({"prompt": ["a", "b"]})", "prompt"},
      {"prompt_token_out_of_vocab", C, R"({"prompt": [1, 512]})", "prompt[1]"},
      {"prompt_token_negative", C, R"({"prompt": [-1]})", "prompt[0]"},
      {"prompt_token_huge", C, R"({"prompt": [18446744073709551615]})", "prompt[0]"},
      {"prompt_token_float", C, R"({"prompt": [1.5]})", "prompt[0]"},
      {"prompt_token_string_mix", C, R"({"prompt": [1, "a"]})", "prompt[1]"},
      {"prompt_nested_empty", C, R"({"prompt": [[]]})", "prompt[0]"},
      {"model_number", C, R"({"prompt": "a", "model": 7})", "model"},
      {"model_too_long", C, R"({"prompt": "a", "model": ")" + std::string(300, 'm') + "\"}", "model"},
      {"stream_string", C, R"({"prompt": "a", "stream": "true"})", "stream"},
      {"stream_number", C, R"({"prompt": "a", "stream": 1})", "stream"},
      {"stream_options_array", C, R"({"prompt": "a", "stream_options": []})", "stream_options"},
      {"include_usage_string", C, R"({"prompt": "a", "stream_options": {"include_usage": "yes"}})",
       "stream_options.include_usage"},
      {"max_tokens_zero", C, R"({"prompt": "a", "max_tokens": 0})", "max_tokens"},
      {"max_tokens_negative", C, R"({"prompt": "a", "max_tokens": -5})", "max_tokens"},
      {"max_tokens_float", C, R"({"prompt": "a", "max_tokens": 1.5})", "max_tokens"},
      {"max_tokens_string", C, R"({"prompt": "a", "max_tokens": "10"})", "max_tokens"},
      {"max_tokens_huge", C, R"({"prompt": "a", "max_tokens": 99999999999999999999})", "max_tokens"},
      {"max_tokens_too_many", C, R"({"prompt": "a", "max_tokens": 4294967296})", "max_tokens"},
      {"max_completion_tokens_zero", H, R"({"messages": [{"role": "user", "content": "a"}], "max_completion_tokens": 0})",
       "max_completion_tokens"},
      {"temperature_negative", C, R"({"prompt": "a", "temperature": -0.1})", "temperature"},
      {"temperature_too_high", C, R"({"prompt": "a", "temperature": 2.5})", "temperature"},
      {"temperature_string", C, R"({"prompt": "a", "temperature": "hot"})", "temperature"},
      {"temperature_overflow", C, R"({"prompt": "a", "temperature": 1e999})", ""},
      {"top_p_zero", C, R"({"prompt": "a", "top_p": 0})", "top_p"},
      {"top_p_above_one", C, R"({"prompt": "a", "top_p": 1.01})", "top_p"},
      {"top_k_below_minus_one", C, R"({"prompt": "a", "top_k": -2})", "top_k"},
      {"top_k_float", C, R"({"prompt": "a", "top_k": 2.5})", "top_k"},
      {"min_p_above_one", C, R"({"prompt": "a", "min_p": 1.5})", "min_p"},
      {"frequency_penalty_range", C, R"({"prompt": "a", "frequency_penalty": 3})", "frequency_penalty"},
      {"presence_penalty_range", C, R"({"prompt": "a", "presence_penalty": -2.01})", "presence_penalty"},
      {"repetition_penalty_zero", C, R"({"prompt": "a", "repetition_penalty": 0})", "repetition_penalty"},
      {"repetition_penalty_array", C, R"({"prompt": "a", "repetition_penalty": [1]})", "repetition_penalty"},
      {"seed_float", C, R"({"prompt": "a", "seed": 1.5})", "seed"},
      {"seed_string", C, R"({"prompt": "a", "seed": "42"})", "seed"},
      {"stop_number", C, R"({"prompt": "a", "stop": 5})", "stop"},
      {"stop_array_of_numbers", C, R"({"prompt": "a", "stop": ["a", 5]})", "stop[1]"},
      {"stop_too_many", C, many_stops, "stop"},
      {"stop_too_long", C, R"({"prompt": "a", "stop": ")" + std::string(300, 's') + "\"}", "stop"},
      {"n_seventeen", C, R"({"prompt": "a", "n": 17})", "n"},
      {"n_zero", C, R"({"prompt": "a", "n": 0})", "n"},
      {"n_with_conversation", C, R"({"prompt": "a", "n": 2, "conversation": "c1"})", "n"},
      {"n_with_tools", H, R"({"messages": [{"role": "user", "content": "a"}], "n": 2,
           "tools": [{"type": "function", "function": {"name": "f"}}]})", "n"},
      {"n_string", H, R"({"messages": [{"role": "user", "content": "a"}], "n": "1"})", "n"},
      {"best_of_two", C, R"({"prompt": "a", "best_of": 2})", "best_of"},
      {"best_of_above_n", C, R"({"prompt": "a", "n": 2, "best_of": 3})", "best_of"},
      {"echo_string", C, R"({"prompt": "a", "echo": "yes"})", "echo"},
      {"echo_with_logprobs", C, R"({"prompt": "a", "echo": true, "logprobs": 1})", "echo"},
      {"logprobs_too_many", C, R"({"prompt": "a", "logprobs": 21})", "logprobs"},
      {"logprobs_negative", C, R"({"prompt": "a", "logprobs": -1})", "logprobs"},
      {"logprobs_bool_on_completions", C, R"({"prompt": "a", "logprobs": true})", "logprobs"},
      {"chat_logprobs_int", H, R"({"messages": [{"role": "user", "content": "a"}], "logprobs": 1})", "logprobs"},
      {"chat_top_logprobs_too_many", H,
       R"({"messages": [{"role": "user", "content": "a"}], "logprobs": true, "top_logprobs": 21})", "top_logprobs"},
      {"chat_top_logprobs_negative", H,
       R"({"messages": [{"role": "user", "content": "a"}], "logprobs": true, "top_logprobs": -1})", "top_logprobs"},
      {"chat_top_logprobs_without_logprobs", H, R"({"messages": [{"role": "user", "content": "a"}], "top_logprobs": 3})",
       "top_logprobs"},
      {"ignore_eos_string", C, R"({"prompt": "a", "ignore_eos": "yes"})", "ignore_eos"},
      {"conversation_number", C, R"({"prompt": "a", "conversation": 7})", "conversation"},
      {"conversation_empty", C, R"({"prompt": "a", "conversation": ""})", "conversation"},
      {"conversation_bad_chars", C, R"({"prompt": "a", "conversation": "a b/../c"})", "conversation"},
      {"conversation_too_long", C, R"({"prompt": "a", "conversation": ")" + std::string(200, 'c') + "\"}",
       "conversation"},
      {"priority_float", C, R"({"prompt": "a", "priority": 0.5})", "priority"},
      {"priority_huge", C, R"({"prompt": "a", "priority": 1e12})", "priority"},
      {"slo_string", C, R"({"prompt": "a", "slo": "fast"})", "slo"},
      {"slo_negative", C, R"({"prompt": "a", "slo": {"ttft_s": -1}})", "slo.ttft_s"},
      {"slo_tbt_string", C, R"({"prompt": "a", "slo": {"tbt_s": "0.1"}})", "slo.tbt_s"},
      {"slo_deadline_huge", C, R"({"prompt": "a", "slo": {"deadline_s": 1e300}})", "slo.deadline_s"},
      {"user_number", C, R"({"prompt": "a", "user": 1})", "user"},
      {"missing_messages", H, R"({"model": "m"})", "messages"},
      {"messages_object", H, R"({"messages": {"role": "user"}})", "messages"},
      {"messages_empty", H, R"({"messages": []})", "messages"},
      {"message_string", H, R"({"messages": ["hi"]})", "messages[0]"},
      {"message_no_role", H, R"({"messages": [{"content": "hi"}]})", "messages[0].role"},
      {"message_role_number", H, R"({"messages": [{"role": 1, "content": "hi"}]})", "messages[0].role"},
      {"message_role_unknown", H, R"({"messages": [{"role": "wizard", "content": "hi"}]})", "messages[0].role"},
      {"message_role_tool_without_id", H, R"({"messages": [{"role": "tool", "content": "hi"}]})",
       "messages[0].tool_call_id"},
      {"tools_on_completions", C, R"({"prompt": "a", "tools": []})", "tools"},
      {"tools_not_array", H, R"({"messages": [{"role": "user", "content": "a"}], "tools": {}})", "tools"},
      {"tool_without_name", H, R"({"messages": [{"role": "user", "content": "a"}], "tools": [{"type": "function", "function": {}}]})",
       "tools[0].function.name"},
      {"tool_choice_unknown_function", H,
       R"({"messages": [{"role": "user", "content": "a"}], "tools": [{"type": "function", "function": {"name": "f"}}],
           "tool_choice": {"type": "function", "function": {"name": "g"}}})",
       "tool_choice"},
      {"tool_choice_required_without_tools", H, R"({"messages": [{"role": "user", "content": "a"}], "tool_choice": "required"})",
       "tool_choice"},
      {"tool_schema_unsupported", H,
       R"({"messages": [{"role": "user", "content": "a"}], "tool_choice": "required", "tools": [{"type": "function",
           "function": {"name": "f", "parameters": {"type": "object", "properties": {"n": {"type": "integer", "not": {}}}}}}]})",
       "tools[0].function.parameters"},
      {"parallel_tool_calls_string", H, R"({"messages": [{"role": "user", "content": "a"}], "parallel_tool_calls": "yes"})",
       "parallel_tool_calls"},
      {"response_format_unknown", C, R"({"prompt": "a", "response_format": {"type": "yaml"}})", "response_format"},
      {"response_format_schema_missing", C, R"({"prompt": "a", "response_format": {"type": "json_schema"}})",
       "response_format.json_schema.schema"},
      {"response_format_schema_unsupported", C,
       R"({"prompt": "a", "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "array", "uniqueItems": true}}}})",
       "response_format.json_schema.schema"},
      {"json_whitespace_unknown", C, R"({"prompt": "a", "json_whitespace": "wide"})", "json_whitespace"},
      {"grammar_not_string", C, R"({"prompt": "a", "grammar": 5})", "grammar"},
      {"grammar_bad", C, R"({"prompt": "a", "grammar": "root ::= [a-"})", "grammar"},
      {"grammar_and_response_format", C, R"({"prompt": "a", "grammar": "root ::= [a]", "response_format": {"type": "json_object"}})",
       "grammar"},
      {"message_no_content", H, R"({"messages": [{"role": "user"}]})", "messages[0].content"},
      {"message_content_number", H, R"({"messages": [{"role": "user", "content": 5}]})", "messages[0].content"},
      {"message_part_image", H,
       R"({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]})",
       "messages[0].content[0].type"},
      {"message_part_no_text", H, R"({"messages": [{"role": "user", "content": [{"type": "text"}]}]})",
       "messages[0].content[0].text"},
      {"message_part_not_object", H, R"({"messages": [{"role": "user", "content": ["a"]}]})",
       "messages[0].content[0]"},
      {"second_message_bad", H, R"({"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": {}}]})",
       "messages[1].content"},
  };
}

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

class BadRequest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadRequest, IsRejectedWith400NamingTheParam) {
  const BadCase& c = GetParam();
  try {
    parse_api_request(c.body, c.endpoint, limits());
    FAIL() << c.name << " was accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 400) << c.name;
    EXPECT_EQ(e.type(), "invalid_request_error") << c.name;
    EXPECT_EQ(e.param(), c.param) << c.name << ": " << e.what();
    EXPECT_FALSE(std::string(e.what()).empty());
  }
}

INSTANTIATE_TEST_SUITE_P(Hostile, BadRequest, ::testing::ValuesIn(bad_cases()),
                         [](const ::testing::TestParamInfo<BadCase>& i) { return std::string(i.param.name); });

TEST(OpenAiRequest, TooManyPromptTokenIdsIsRejected) {
  ParseLimits l = limits();
  l.max_prompt_token_ids = 3;
  try {
    parse_api_request(R"({"prompt": [1, 2, 3, 4]})", Endpoint::Completions, l);
    FAIL();
  } catch (const ApiError& e) {
    EXPECT_EQ(e.param(), "prompt");
  }
}

TEST(OpenAiRequest, ErrorBodyHasOpenAiShape) {
  try {
    parse_api_request(R"({"prompt": "a", "temperature": "x"})", Endpoint::Completions, limits());
    FAIL();
  } catch (const ApiError& e) {
    auto j = nlohmann::json::parse(e.body());
    ASSERT_TRUE(j.contains("error"));
    EXPECT_EQ(j["error"]["type"], "invalid_request_error");
    EXPECT_EQ(j["error"]["param"], "temperature");
    EXPECT_TRUE(j["error"]["message"].is_string());
    EXPECT_TRUE(j["error"].contains("code"));
  }
}

TEST(OpenAiRequest, ErrorWithoutParamHasNullParam) {
  auto j = nlohmann::json::parse(model_not_found_error("x").body());
  EXPECT_EQ(j["error"]["param"], "model");
  auto k = nlohmann::json::parse(queue_full_error(3).body());
  EXPECT_TRUE(k["error"]["param"].is_null());
  EXPECT_EQ(queue_full_error(3).status(), 429);
  EXPECT_EQ(body_too_large_error(10).status(), 413);
  EXPECT_EQ(route_not_found_error("GET", "/x").status(), 404);
  EXPECT_EQ(shutting_down_error().status(), 503);
}

// Issue 51: alternatives, n choices and echo.
TEST(OpenAiRequest, TopLogprobsNAndEcho) {
  ApiRequest chat = parse_api_request(
      R"({"messages": [{"role": "user", "content": "a"}], "logprobs": true, "top_logprobs": 20, "n": 16})",
      Endpoint::ChatCompletions, limits());
  EXPECT_TRUE(chat.sampling.logprobs);
  EXPECT_EQ(chat.sampling.top_logprobs, 20);
  EXPECT_EQ(chat.n, 16);
  ApiRequest legacy = parse_api_request(R"({"prompt": "a", "logprobs": 2, "n": 2, "best_of": 2})",
                                        Endpoint::Completions, limits());
  EXPECT_TRUE(legacy.sampling.logprobs);
  EXPECT_EQ(legacy.sampling.top_logprobs, 2);
  EXPECT_EQ(legacy.n, 2);
  ApiRequest echo = parse_api_request(R"({"prompt": "a", "echo": true})", Endpoint::Completions, limits());
  EXPECT_TRUE(echo.echo);
  EXPECT_FALSE(echo.sampling.logprobs);
  EXPECT_EQ(echo.n, 1);
}

}  // namespace
}  // namespace seer::server
