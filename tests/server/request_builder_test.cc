// From a parsed API request to an engine Request: tokenization, chat template,
// max_tokens defaults and the context / KV limits.
#include <gtest/gtest.h>

#include "server/api_error.h"
#include "server/fakes.h"
#include "server/request_builder.h"

namespace seer::server {
namespace {

testing::CharTokenizer tokenizer;

ModelInfo model(int32_t context = 64, int32_t kv_tokens = 1024) {
  ModelInfo m;
  m.served_name = "m";
  m.tokenizer = &tokenizer;
  m.chat_template = ChatTemplate::of(ChatFormat::ChatML);
  m.max_model_len = context;
  m.kv_capacity_tokens = kv_tokens;
  m.vocab_size = tokenizer.vocab_size();
  return m;
}

ApiRequest parse(const std::string& body, Endpoint e = Endpoint::Completions) {
  ParseLimits l;
  l.vocab_size = 258;
  return parse_api_request(body, e, l);
}

TEST(RequestBuilder, TextPromptIsTokenizedWithBos) {
  Request r = build_request(parse(R"({"prompt": "abc", "max_tokens": 3, "priority": 2, "conversation": "c1",
                                      "slo": {"ttft_s": 1}})"),
                            model());
  EXPECT_EQ(r.prompt_tokens, (std::vector<int32_t>{1, testing::tok('a'), testing::tok('b'), testing::tok('c')}));
  EXPECT_EQ(r.sampling.max_tokens, 3);
  EXPECT_EQ(r.priority, 2);
  EXPECT_EQ(r.conversation, "anonymous/c1");  // scoped by the tenant
  EXPECT_EQ(r.tenant, "anonymous");
  EXPECT_DOUBLE_EQ(r.slo.ttft_s, 1);
}

TEST(RequestBuilder, PromptTextIsKeptForLengthPredictors) {
  EXPECT_EQ(build_request(parse(R"({"prompt": "abc", "max_tokens": 3})"), model()).prompt_text, "abc");
  EXPECT_EQ(build_request(parse(R"({"prompt": [7, 8]})"), model()).prompt_text, "");
  Request chat = build_request(
      parse(R"({"messages": [{"role": "user", "content": "hi"}]})", Endpoint::ChatCompletions), model(4096, 8192));
  EXPECT_EQ(chat.prompt_text, ChatTemplate::of(ChatFormat::ChatML).apply({{"user", "hi"}}, true));
}

TEST(RequestBuilder, TokenPromptIsUsedAsIs) {
  Request r = build_request(parse(R"({"prompt": [7, 8]})"), model());
  EXPECT_EQ(r.prompt_tokens, (std::vector<int32_t>{7, 8}));
  EXPECT_EQ(r.sampling.max_tokens, kDefaultCompletionMaxTokens);
}

TEST(RequestBuilder, ChatAppliesTheTemplateAndItsStops) {
  Request r = build_request(parse(R"({"messages": [{"role": "user", "content": "hi"}]})", Endpoint::ChatCompletions),
                            model(4096, 8192));
  std::string text;
  for (size_t i = 1; i < r.prompt_tokens.size(); ++i) text += tokenizer.token_bytes(r.prompt_tokens[i]);
  EXPECT_NE(text.find("<|im_start|>user\nhi"), std::string::npos) << text;
  EXPECT_NE(text.find("<|im_start|>assistant"), std::string::npos) << text;
  EXPECT_FALSE(r.sampling.stop.empty());
  // Chat without max_tokens may use the rest of the context.
  EXPECT_EQ(r.sampling.max_tokens, 4096 - r.prompt_len());
  Request bench = build_request(
      parse(R"({"messages": [{"role": "user", "content": "hi"}], "ignore_eos": true, "max_tokens": 5})",
            Endpoint::ChatCompletions),
      model(4096));
  EXPECT_TRUE(bench.sampling.stop.empty());  // ignore_eos: exactly max_tokens
}

TEST(RequestBuilder, ContextAndKvLimits) {
  try {
    build_request(parse(R"({"prompt": "abcdefghij", "max_tokens": 60})"), model(64));
    FAIL();
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 400);
    EXPECT_EQ(e.param(), "max_tokens");
    EXPECT_EQ(e.code(), "context_length_exceeded");
  }
  std::string long_prompt(100, 'x');
  try {
    build_request(parse(R"({"prompt": ")" + long_prompt + "\"}"), model(64));
    FAIL();
  } catch (const ApiError& e) {
    EXPECT_EQ(e.param(), "prompt");
  }
  // A KV pool smaller than the context bounds the request too.
  EXPECT_THROW(build_request(parse(R"({"prompt": "abc", "max_tokens": 40})"), model(4096, 32)), ApiError);
  EXPECT_NO_THROW(build_request(parse(R"({"prompt": "abc", "max_tokens": 28})"), model(4096, 32)));
}

}  // namespace
}  // namespace seer::server
