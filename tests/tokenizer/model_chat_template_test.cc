// ChatTemplate over the model's own Jinja template: the fallback rule, BOS handling,
// system messages and content parts for templates that cannot take them, and the
// template's own refusals.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/error.h"
#include "tokenizer/chat_template.h"

namespace seer {
namespace {

std::string fixture_template(const std::string& family) {
  std::ifstream in(std::string(SEER_SOURCE_DIR) + "/tests/data/chat_templates/" + family + "/template.jinja");
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_FALSE(ss.str().empty()) << family;
  return ss.str();
}

const std::vector<ChatMessage> kChat = {{"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello."}, {"user", "Bye"}};

TEST(ModelChatTemplate, MissingTemplateFallsBackToChatmlWithAReason) {
  const ChatTemplate t = ChatTemplate::from_model("", {"<s>", "</s>"});
  EXPECT_FALSE(t.is_model_template());
  EXPECT_TRUE(t.fallback());
  EXPECT_EQ(t.fallback_reason(), "the model has no chat template");
  EXPECT_EQ(t.describe(), "chatml (fallback: the model has no chat template)");
  // Exactly the hard-coded ChatML prompt and stops of before.
  EXPECT_EQ(t.apply(kChat), ChatTemplate::of(ChatFormat::ChatML).apply(kChat));
  EXPECT_EQ(t.stop_strings(), ChatTemplate::of(ChatFormat::ChatML).stop_strings());
}

TEST(ModelChatTemplate, BrokenTemplateFallsBackToTheFormatItsMarkersShow) {
  const ChatTemplate t = ChatTemplate::from_model("<|start_header_id|>{{ x + }}<|end_header_id|>", {"<s>", "</s>"});
  EXPECT_FALSE(t.is_model_template());
  EXPECT_EQ(t.format(), ChatFormat::Llama3);
  EXPECT_THAT(t.fallback_reason(), ::testing::HasSubstr("line 1, column 27: unexpected '}}'"));
  EXPECT_THAT(t.describe(), ::testing::StartsWith("llama-3 (fallback: chat template line 1"));
}

TEST(ModelChatTemplate, TemplateThatThrowsOnAPlainChatFallsBack) {
  const ChatTemplate t = ChatTemplate::from_model("{{ raise_exception('this template needs tools') }}", {"<s>", "</s>"});
  EXPECT_FALSE(t.is_model_template());
  EXPECT_THAT(t.fallback_reason(), ::testing::HasSubstr("this template needs tools"));
}

TEST(ModelChatTemplate, RendersTheModelsTemplate) {
  const ChatTemplate t = ChatTemplate::from_model(fixture_template("qwen2.5"), {"", "<|im_end|>"});
  ASSERT_TRUE(t.is_model_template());
  EXPECT_EQ(t.describe(), "model's own (jinja)");
  EXPECT_EQ(t.apply({{"user", "Hi"}}),
            "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(t.stop_strings(), ChatTemplate::of(ChatFormat::ChatML).stop_strings());
}

TEST(ModelChatTemplate, LeadingBosIsLeftToTheTokenizer) {
  const ChatTemplate t = ChatTemplate::from_model(fixture_template("llama-3.1"), {"<|begin_of_text|>", "<|eot_id|>"});
  ASSERT_TRUE(t.is_model_template());
  const std::string p = t.apply(kChat);
  EXPECT_THAT(p, ::testing::StartsWith("<|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date"));
  EXPECT_THAT(p, ::testing::EndsWith("<|start_header_id|>user<|end_header_id|>\n\nBye<|eot_id|>"
                                     "<|start_header_id|>assistant<|end_header_id|>\n\n"));
  // render() is the template's full output, BOS included.
  EXPECT_THAT(t.render({{"messages", {{{"role", "user"}, {"content", "x"}}}}}), ::testing::StartsWith("<|begin_of_text|>"));
  EXPECT_EQ(t.stop_strings(), ChatTemplate::of(ChatFormat::Llama3).stop_strings());
}

// Only a BOS (EOS) the tokenizer adds itself is dropped from the rendering.
TEST(ModelChatTemplate, TheTemplatesBosStaysWhenTheTokenizerAddsNone) {
  const std::string tmpl = "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}{{ eos_token }}";
  EXPECT_EQ(ChatTemplate::from_model(tmpl, {"<s>", "</s>", true, false}).apply({{"user", "Hi"}}), "Hi</s>");
  EXPECT_EQ(ChatTemplate::from_model(tmpl, {"<s>", "</s>", false, false}).apply({{"user", "Hi"}}), "<s>Hi</s>");
  EXPECT_EQ(ChatTemplate::from_model(tmpl, {"<s>", "</s>", false, true}).apply({{"user", "Hi"}}), "<s>Hi");
}

TEST(ModelChatTemplate, SystemMessagesGoIntoTheUserTurnWhenTheTemplateRefusesThem) {
  // Gemma 2's template raises "System role not supported".
  const ChatTemplate t = ChatTemplate::from_model(fixture_template("gemma-2"), {"<bos>", "<eos>"});
  ASSERT_TRUE(t.is_model_template());
  EXPECT_EQ(t.apply({{"system", "Be brief."}, {"user", "Hi"}}),
            "<start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\n");
  // Its own rules still hold: roles must alternate.
  try {
    (void)t.apply({{"user", "a"}, {"user", "b"}});
    FAIL() << "expected the template to refuse";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("Conversation roles must alternate"));
  }
}

TEST(ModelChatTemplate, ContentPartsReachTemplatesThatTakeThem) {
  const std::string typed =
      "{% for m in messages %}{% if m.content is string %}{{ m.content }}{% else %}"
      "{% for p in m.content %}[{{ p.text }}]{% endfor %}{% endif %};{% endfor %}";
  ChatMessage parts{"user", "a\nb", nlohmann::ordered_json::parse(R"([{"type":"text","text":"a"},{"type":"text","text":"b"}])")};
  EXPECT_EQ(ChatTemplate::from_model(typed, {}).apply({parts}), "[a][b];");
  // Llama 3.1 prints content as a string: the parts' text, joined, as before.
  const ChatTemplate llama = ChatTemplate::from_model(fixture_template("llama-3.1"), {"<|begin_of_text|>", ""});
  EXPECT_THAT(llama.apply({parts}), ::testing::HasSubstr("<|start_header_id|>user<|end_header_id|>\n\na\nb<|eot_id|>"));
}

TEST(ModelChatTemplate, Gemma3TakesSystemTextAndContentPartsItself) {
  const ChatTemplate t = ChatTemplate::from_model(fixture_template("gemma-3"), {"<bos>", "<eos>"});
  ASSERT_TRUE(t.is_model_template());
  ChatMessage parts{"user", "a\nb", nlohmann::ordered_json::parse(R"([{"type":"text","text":"a "},{"type":"text","text":"b"}])")};
  EXPECT_EQ(t.apply({{"system", "S"}, parts}), "<start_of_turn>user\nS\n\nab<end_of_turn>\n<start_of_turn>model\n");
}

TEST(ModelChatTemplate, UnrecognisedFormatHasNoExtraStops) {
  const ChatTemplate t = ChatTemplate::from_model(fixture_template("gemma-2"), {"<bos>", "<eos>"});
  EXPECT_TRUE(t.stop_strings().empty());
}

TEST(ModelChatTemplate, RenderNeedsAJinjaTemplate) {
  EXPECT_THROW((void)ChatTemplate::of(ChatFormat::ChatML).render({{"messages", nlohmann::ordered_json::array()}}), Error);
}

}  // namespace
}  // namespace seer
