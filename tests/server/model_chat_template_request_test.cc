// Chat requests through the model's own Jinja template: content parts reach it as
// sent, and a template that refuses the conversation answers 400 with its text.
#include <gtest/gtest.h>

#include "server/api_error.h"
#include "server/fakes.h"
#include "server/request_builder.h"

namespace seer::server {
namespace {

testing::CharTokenizer tokenizer;

ModelInfo model_with(const std::string& jinja) {
  ModelInfo m;
  m.served_name = "m";
  m.tokenizer = &tokenizer;
  m.chat_template = ChatTemplate::from_model(jinja, {"", ""});
  m.max_model_len = 4096;
  m.kv_capacity_tokens = 8192;
  m.vocab_size = tokenizer.vocab_size();
  return m;
}

ApiRequest chat(const std::string& body) {
  ParseLimits l;
  l.vocab_size = 258;
  return parse_api_request(body, Endpoint::ChatCompletions, l);
}

TEST(ModelChatTemplateRequest, ContentPartsReachATemplateThatIteratesThem) {
  const ModelInfo m = model_with(
      "{% for m in messages %}{% if m.content is string %}{{ m.content }}{% else %}"
      "{% for p in m.content %}<{{ p.text }}>{% endfor %}{% endif %}{% endfor %}");
  ASSERT_TRUE(m.chat_template.is_model_template());
  Request r = build_request(
      chat(R"({"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]})"),
      m);
  EXPECT_EQ(r.prompt_text, "<a><b>");
  EXPECT_EQ(build_request(chat(R"({"messages": [{"role": "user", "content": "plain"}]})"), m).prompt_text, "plain");
}

TEST(ModelChatTemplateRequest, TemplateRefusalIsA400WithItsMessage) {
  const ModelInfo m = model_with(
      "{% for m in messages %}{% if m.role == 'assistant' and loop.first %}"
      "{{ raise_exception('Conversations must start with a user message') }}{% endif %}{{ m.content }}{% endfor %}");
  ASSERT_TRUE(m.chat_template.is_model_template());
  try {
    (void)build_request(chat(R"({"messages": [{"role": "assistant", "content": "x"}, {"role": "user", "content": "y"}]})"), m);
    FAIL() << "expected a 400";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 400);
    EXPECT_EQ(e.param(), "messages");
    EXPECT_NE(std::string(e.what()).find("Conversations must start with a user message"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace seer::server
