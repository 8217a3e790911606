// SSE framing and the OpenAI response / chunk shapes.
#include <gtest/gtest.h>

#include "server/openai_response.h"
#include "server/sse.h"

namespace seer::server {
namespace {

using nlohmann::json;

TEST(Sse, EventIsDataLineAndBlankLine) {
  EXPECT_EQ(sse_event(std::string_view(R"({"a":1})")), "data: {\"a\":1}\n\n");
  EXPECT_EQ(sse_done(), "data: [DONE]\n\n");
}

TEST(Sse, MultiLinePayloadBecomesSeveralDataLines) {
  EXPECT_EQ(sse_event(std::string_view("a\nb\r\nc")), "data: a\ndata: b\ndata: c\n\n");
}

TEST(Sse, JsonPayloadHasNoRawNewlines) {
  std::string ev = sse_json(json{{"text", "line1\nline2"}});
  EXPECT_EQ(ev, "data: {\"text\":\"line1\\nline2\"}\n\n");
}

TEST(Sse, CommentCannotBreakFraming) {
  EXPECT_EQ(sse_comment("keep\nalive"), ": keep alive\n\n");
}

TEST(Sse, InvalidUtf8IsReplacedNotThrown) {
  std::string ev;
  EXPECT_NO_THROW(ev = sse_json(json{{"text", std::string("\xe2\x82")}}));
  EXPECT_NE(ev.find("\xef\xbf\xbd"), std::string::npos);
}

ResponseContext ctx(Endpoint e, bool logprobs = false) {
  return {e, "id-1", "stories", 1700000000, logprobs, "", {}};
}

TEST(OpenAiResponse, CompletionShape) {
  json j = completion_response(ctx(Endpoint::Completions), "hello", {}, FinishReason::Length, {3, 2});
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["id"], "id-1");
  EXPECT_EQ(j["model"], "stories");
  EXPECT_EQ(j["created"], 1700000000);
  EXPECT_EQ(j["choices"][0]["text"], "hello");
  EXPECT_EQ(j["choices"][0]["index"], 0);
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_TRUE(j["choices"][0]["logprobs"].is_null());
  EXPECT_EQ(j["usage"], (json{{"prompt_tokens", 3},
                              {"completion_tokens", 2},
                              {"total_tokens", 5},
                              {"prompt_tokens_details", {{"cached_tokens", 0}}},
                              {"completion_tokens_details", {{"reasoning_tokens", 0}}}}));
}

TEST(OpenAiResponse, ChatShapeWithLogprobs) {
  json j = completion_response(ctx(Endpoint::ChatCompletions, true), "hi!", {{"hi", -0.5f}, {"!", -1.0f}},
                               FinishReason::Stop, {4, 2});
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(j["choices"][0]["message"]["content"], "hi!");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  auto& content = j["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(content.size(), 2u);
  EXPECT_EQ(content[0]["token"], "hi");
  EXPECT_FLOAT_EQ(content[0]["logprob"].get<float>(), -0.5f);
  EXPECT_EQ(content[1]["bytes"], json::array({33}));
}

TEST(OpenAiResponse, CompletionLogprobsAreParallelArrays) {
  json j = completion_response(ctx(Endpoint::Completions, true), "ab c", {{"ab", -0.1f}, {" c", -0.2f}},
                               FinishReason::Length, {1, 2});
  auto& lp = j["choices"][0]["logprobs"];
  EXPECT_EQ(lp["tokens"], json::array({"ab", " c"}));
  EXPECT_EQ(lp["text_offset"], json::array({0, 2}));
  EXPECT_EQ(lp["token_logprobs"].size(), 2u);
}

TEST(OpenAiResponse, ChatChunksCarryRoleFirstThenDeltas) {
  auto c = ctx(Endpoint::ChatCompletions);
  json first = stream_chunk(c, "", {}, FinishReason::None, true);
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["choices"][0]["delta"], (json{{"role", "assistant"}, {"content", ""}}));
  EXPECT_TRUE(first["choices"][0]["finish_reason"].is_null());
  json mid = stream_chunk(c, "tok", {}, FinishReason::None, false);
  EXPECT_EQ(mid["choices"][0]["delta"], (json{{"content", "tok"}}));
  json last = stream_chunk(c, "", {}, FinishReason::Length, false);
  EXPECT_EQ(last["choices"][0]["delta"], json::object());
  EXPECT_EQ(last["choices"][0]["finish_reason"], "length");
}

TEST(OpenAiResponse, UsageChunkHasEmptyChoices) {
  json u = usage_chunk(ctx(Endpoint::Completions), {5, 6});
  EXPECT_TRUE(u["choices"].is_array());
  EXPECT_TRUE(u["choices"].empty());
  EXPECT_EQ(u["usage"]["total_tokens"], 11);
}

TEST(OpenAiResponse, UsageCarriesCachedAndReasoningTokens) {
  Usage usage{40, 6, 32, 0};
  json j = completion_response(ctx(Endpoint::ChatCompletions), "x", {}, FinishReason::Stop, usage);
  EXPECT_EQ(j["usage"]["prompt_tokens_details"]["cached_tokens"], 32);
  EXPECT_EQ(j["usage"]["completion_tokens_details"]["reasoning_tokens"], 0);
  EXPECT_EQ(usage_chunk(ctx(Endpoint::ChatCompletions), usage)["usage"]["prompt_tokens_details"]["cached_tokens"], 32);
}

TEST(OpenAiResponse, ChatTopLogprobsListAlternativesWithBytes) {
  TokenLogprob lp{"hi", -0.5f, {{"hi", -0.5f}, {"yo", -1.5f}, {"\xc3", -2.0f}}};
  json j = completion_response(ctx(Endpoint::ChatCompletions, true), "hi", {lp}, FinishReason::Stop, {4, 1});
  const json& entry = j["choices"][0]["logprobs"]["content"][0];
  EXPECT_EQ(entry["token"], "hi");
  EXPECT_EQ(entry["bytes"], json::array({104, 105}));
  ASSERT_EQ(entry["top_logprobs"].size(), 3u);
  EXPECT_EQ(entry["top_logprobs"][1], (json{{"token", "yo"}, {"logprob", -1.5f}, {"bytes", json::array({121, 111})}}));
  EXPECT_EQ(entry["top_logprobs"][2]["bytes"], json::array({0xc3}));
  // Streamed chunks carry the same entries.
  json chunk = stream_chunk(ctx(Endpoint::ChatCompletions, true), "hi", {lp}, FinishReason::None, false);
  EXPECT_EQ(chunk["choices"][0]["logprobs"]["content"][0], entry);
}

TEST(OpenAiResponse, LegacyTopLogprobsAreDictsWithTheChosenTokenAndOffsetsAfterEcho) {
  auto c = ctx(Endpoint::Completions, true);
  c.top_logprobs = 2;
  ChoiceOutput out{1, "Hi ab", {{"ab", -0.1f, {{"ab", -0.1f}, {"cd", -2.5f}}}, {"x", -3.0f, {{"y", -0.2f}, {"z", -0.4f}}}},
                   FinishReason::Length, /*text_offset=*/3};
  json j = completion_response(c, {ChoiceOutput{0, "Hi", {}, FinishReason::Stop, 3}, out}, {3, 2});
  ASSERT_EQ(j["choices"].size(), 2u);
  EXPECT_EQ(j["choices"][1]["index"], 1);
  const json& lp = j["choices"][1]["logprobs"];
  EXPECT_EQ(lp["tokens"], json::array({"ab", "x"}));
  EXPECT_EQ(lp["text_offset"], json::array({3, 5}));
  EXPECT_EQ(lp["top_logprobs"][0], (json{{"ab", -0.1f}, {"cd", -2.5f}}));
  EXPECT_EQ(lp["top_logprobs"][1], (json{{"y", -0.2f}, {"z", -0.4f}, {"x", -3.0f}}));  // the chosen one added
  // logprobs: 0 keeps top_logprobs null.
  EXPECT_TRUE(completion_response(ctx(Endpoint::Completions, true), "ab", {{"ab", -0.1f}}, FinishReason::Stop, {1, 1})
                  ["choices"][0]["logprobs"]["top_logprobs"].is_null());
}

TEST(OpenAiResponse, StreamChunksCarryTheChoiceIndex) {
  json c = stream_chunk(ctx(Endpoint::ChatCompletions), ChoiceOutput{3, "tok", {}, FinishReason::None, 0, true});
  EXPECT_EQ(c["choices"][0]["index"], 3);
  EXPECT_EQ(c["choices"][0]["delta"], (json{{"role", "assistant"}, {"content", "tok"}}));
}

TEST(OpenAiResponse, ResponseIdsAreUniqueAndPrefixed) {
  std::string a = new_response_id(Endpoint::Completions), b = new_response_id(Endpoint::Completions);
  EXPECT_NE(a, b);
  EXPECT_EQ(a.rfind("cmpl-", 0), 0u);
  EXPECT_EQ(new_response_id(Endpoint::ChatCompletions).rfind("chatcmpl-", 0), 0u);
}

TEST(OpenAiResponse, ModelsList) {
  json m = models_list({"a", "b"}, 5);
  EXPECT_EQ(m["object"], "list");
  ASSERT_EQ(m["data"].size(), 2u);
  EXPECT_EQ(m["data"][1]["id"], "b");
  EXPECT_EQ(m["data"][1]["object"], "model");
}

}  // namespace
}  // namespace seer::server
