// Reasoning fields of a chat request: chat_template_kwargs and reasoning_effort reach
// the model's template (Qwen3's empty think block), an assistant turn's
// reasoning_content is written back, max_reasoning_tokens becomes the sampler's
// budget, and bad values are a 400 naming the field.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "server/api_error.h"
#include "server/fakes.h"
#include "server/reasoning_memory.h"
#include "server/request_builder.h"

namespace seer::server {
namespace {

testing::CharTokenizer tokenizer;

std::string fixture(const std::string& family) {
  std::ifstream in(std::filesystem::path(SEER_SOURCE_DIR) / "tests/data/chat_templates" / family / "template.jinja",
                   std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ModelInfo model_of(const std::string& family, int32_t default_budget = -1) {
  ModelInfo m;
  m.served_name = "m";
  m.tokenizer = &tokenizer;
  m.chat_template = ChatTemplate::from_model(fixture(family), {"", ""});
  m.max_model_len = 4096;
  m.kv_capacity_tokens = 8192;
  m.vocab_size = tokenizer.vocab_size();
  m.reasoning = make_reasoning_config(m.chat_template, tokenizer, ReasoningFormat::Separate, default_budget);
  return m;
}

ApiRequest chat(const std::string& body) {
  ParseLimits l;
  l.vocab_size = 258;
  return parse_api_request(body, Endpoint::ChatCompletions, l);
}

const std::string kHi = R"("messages": [{"role": "user", "content": "Say hi."}])";
constexpr std::string_view kEmptyThink = "<|im_start|>assistant\n<think>\n\n</think>\n\n";

TEST(ReasoningRequest, EnableThinkingFalseRendersQwen3sEmptyThinkBlock) {
  const ModelInfo m = model_of("qwen3");
  ASSERT_TRUE(m.chat_template.is_model_template());
  EXPECT_TRUE(build_request(chat("{" + kHi + R"(, "chat_template_kwargs": {"enable_thinking": false}})"), m)
                  .prompt_text.ends_with(kEmptyThink));
  const std::string thinking = build_request(chat("{" + kHi + "}"), m).prompt_text;
  EXPECT_TRUE(thinking.ends_with("<|im_start|>assistant\n")) << thinking;
}

TEST(ReasoningRequest, ReasoningEffortMapsOntoEnableThinking) {
  const ModelInfo m = model_of("qwen3");
  for (const char* off : {"none", "minimal"})
    EXPECT_TRUE(build_request(chat("{" + kHi + R"(, "reasoning_effort": ")" + off + "\"}"), m).prompt_text.ends_with(kEmptyThink))
        << off;
  for (const char* on : {"low", "medium", "high"})
    EXPECT_FALSE(build_request(chat("{" + kHi + R"(, "reasoning_effort": ")" + on + "\"}"), m).prompt_text.ends_with(kEmptyThink))
        << on;
  // The client's own kwargs win over the mapping.
  EXPECT_FALSE(build_request(chat("{" + kHi + R"(, "reasoning_effort": "none", "chat_template_kwargs": {"enable_thinking": true}})"), m)
                   .prompt_text.ends_with(kEmptyThink));
  ApiRequest r = chat("{" + kHi + R"(, "reasoning_effort": "low"})");
  EXPECT_EQ(r.template_kwargs["reasoning_effort"], "low");
}

// In an agent's tool loop Qwen3 writes the reasoning of the turns after the last user
// query back inside <think></think>: from reasoning_content when the client sends it.
TEST(ReasoningRequest, AssistantReasoningContentReachesTheTemplate) {
  const ModelInfo m = model_of("qwen3");
  const std::string body = R"({"messages": [{"role": "user", "content": "Weather in Paris?"},
      {"role": "assistant", "content": "", "reasoning_content": "I should look it up.",
       "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}]})";
  const std::string with = build_request(chat(body), m).prompt_text;
  EXPECT_NE(with.find("<|im_start|>assistant\n<think>\nI should look it up.\n</think>\n\n<tool_call>"), std::string::npos)
      << with;
}

TEST(ReasoningRequest, RestoredReasoningRendersTheSamePrompt) {
  const ModelInfo m = model_of("qwen3");
  const std::string sent = R"({"messages": [{"role": "user", "content": "Weather?"},
      {"role": "assistant", "content": "Let me check.", "reasoning_content": "Need the tool."},
      {"role": "tool", "tool_call_id": "c1", "content": "sunny"}]})";
  const std::string dropped = R"({"messages": [{"role": "user", "content": "Weather?"},
      {"role": "assistant", "content": "Let me check."}, {"role": "tool", "tool_call_id": "c1", "content": "sunny"}]})";
  const std::string expected = build_request(chat(sent), m).prompt_text;
  ApiRequest r = chat(dropped);
  EXPECT_NE(build_request(r, m).prompt_text, expected);  // the reasoning is lost from the prompt
  ReasoningMemory memory;
  memory.remember("tenant-a", "Let me check.", {}, "Need the tool.");
  ApiRequest other = r;
  EXPECT_EQ(memory.restore("tenant-b", other.messages, other.message_tools), 0u);  // another tenant's
  EXPECT_EQ(memory.restore("tenant-a", r.messages, r.message_tools), 1u);
  EXPECT_EQ(build_request(r, m).prompt_text, expected);
}

TEST(ReasoningRequest, MaxReasoningTokensBecomesTheBudget) {
  // DeepSeek-R1's generation prompt opens <think>: the reply starts inside.
  const ModelInfo r1 = model_of("deepseek-r1-distill-llama");
  Request r = build_request(chat("{" + kHi + R"(, "max_reasoning_tokens": 5})"), r1);
  const ReasoningBudget& b = r.sampling.reasoning_budget;
  EXPECT_TRUE(b.active());
  EXPECT_EQ(b.max_tokens, 5);
  EXPECT_TRUE(b.starts_inside);
  EXPECT_EQ(b.close, "</think>");
  std::string spelled;
  for (int32_t id : b.close_tokens) spelled += tokenizer.token_bytes(id);
  EXPECT_EQ(spelled, "</think>");
  // This R1 template opens and closes the block unless enable_thinking is true.
  const ModelInfo r1q = model_of("deepseek-r1-distill-qwen");
  EXPECT_FALSE(build_request(chat("{" + kHi + R"(, "max_reasoning_tokens": 5})"), r1q).sampling.reasoning_budget.starts_inside);
  EXPECT_TRUE(build_request(chat("{" + kHi + R"(, "max_reasoning_tokens": 5, "chat_template_kwargs": {"enable_thinking": true}})"), r1q)
                  .sampling.reasoning_budget.starts_inside);
  // The server's default applies without the field; Qwen3 opens nothing.
  Request q = build_request(chat("{" + kHi + "}"), model_of("qwen3", 7));
  EXPECT_EQ(q.sampling.reasoning_budget.max_tokens, 7);
  EXPECT_FALSE(q.sampling.reasoning_budget.starts_inside);
  EXPECT_FALSE(build_request(chat("{" + kHi + "}"), model_of("qwen3")).sampling.reasoning_budget.active());
}

void expect_400(const std::string& body, const ModelInfo& m, const std::string& param) {
  try {
    (void)build_request(chat(body), m);
    ADD_FAILURE() << "expected a 400 for " << body;
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 400);
    EXPECT_EQ(e.param(), param) << e.what();
    EXPECT_NE(std::string(e.what()).find(param), std::string::npos) << e.what();
  }
}

TEST(ReasoningRequest, BadValuesAre400sNamingTheField) {
  const ModelInfo m = model_of("qwen3");
  expect_400("{" + kHi + R"(, "reasoning_effort": "extreme"})", m, "reasoning_effort");
  expect_400("{" + kHi + R"(, "reasoning_effort": 3})", m, "reasoning_effort");
  expect_400("{" + kHi + R"(, "chat_template_kwargs": "enable_thinking=false"})", m, "chat_template_kwargs");
  expect_400("{" + kHi + R"(, "chat_template_kwargs": [true]})", m, "chat_template_kwargs");
  expect_400("{" + kHi + R"(, "chat_template_kwargs": {"messages": []}})", m, "chat_template_kwargs.messages");
  expect_400("{" + kHi + R"(, "max_reasoning_tokens": -1})", m, "max_reasoning_tokens");
  expect_400("{" + kHi + R"(, "max_reasoning_tokens": "10"})", m, "max_reasoning_tokens");
  expect_400(R"({"messages": [{"role": "user", "content": "x", "reasoning_content": "y"}]})", m,
             "messages[0].reasoning_content");
  expect_400(R"({"messages": [{"role": "assistant", "content": "x", "reasoning_content": 5}, {"role": "user", "content": "y"}]})",
             m, "messages[0].reasoning_content");
  // A cap the model cannot have: no think tags, or a grammar decides the output.
  expect_400("{" + kHi + R"(, "max_reasoning_tokens": 4})", model_of("llama-3.1"), "max_reasoning_tokens");
  expect_400("{" + kHi + R"(, "max_reasoning_tokens": 4, "grammar": "root ::= \"a\""})", m, "max_reasoning_tokens");
}

TEST(ReasoningMemory, BoundedLeastRecentlyUsedFirst) {
  ReasoningMemory memory(/*max_entries=*/2);
  memory.remember("t", "a", {}, "ra");
  memory.remember("t", "b", {}, "rb");
  EXPECT_EQ(memory.recall("t", "a", {}), "ra");  // a is now the most recent
  memory.remember("t", "c", {}, "rc");
  EXPECT_EQ(memory.size(), 2u);
  EXPECT_FALSE(memory.recall("t", "b", {}));
  EXPECT_EQ(memory.recall("t", "c", {}), "rc");
  // Tool-call ids tell turns with the same (empty) content apart; nothing keys an empty turn.
  memory.remember("t", "", {"call_1"}, "r1");
  memory.remember("t", "", {}, "never");
  EXPECT_EQ(memory.recall("t", "", {"call_1"}), "r1");
  EXPECT_FALSE(memory.recall("t", "", {}));
  ReasoningMemory small(/*max_entries=*/10, /*max_bytes=*/16);
  small.remember("t", "a", {}, std::string(64, 'x'));  // larger than the whole memory
  EXPECT_EQ(small.size(), 0u);
}

}  // namespace
}  // namespace seer::server
