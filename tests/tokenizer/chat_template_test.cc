// Chat formats: detection from real Jinja templates and the exact prompt strings.
#include <gtest/gtest.h>

#include "common/error.h"
#include "model/gguf_file.h"
#include "support/test_paths.h"
#include "tokenizer/chat_template.h"

namespace seer {
namespace {

const std::vector<ChatMessage> kChat = {
    {"system", "You are terse."},
    {"user", "Hi"},
    {"assistant", "Hello."},
    {"user", "Bye"},
};

// Abbreviated but faithful excerpts of the templates shipped with the models.
const char* const kLlama2Jinja =
    "{% if messages[0]['role'] == 'system' %}{% set system_message = '<<SYS>>\\n' + messages[0]['content'] | trim + "
    "'\\n<</SYS>>\\n\\n' %}{% endif %}{% for message in loop_messages %}{% if message['role'] == 'user' %}{{ bos_token + "
    "'[INST] ' + content | trim + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' ' + content | trim + ' ' + "
    "eos_token }}{% endif %}{% endfor %}";
const char* const kLlama3Jinja =
    "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + "
    "message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' %}{{ content }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}";
const char* const kChatmlJinja =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + "
    "'\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
const char* const kMistralJinja =
    "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + "
    "' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token}}{% endif %}{% endfor %}";
const char* const kZephyrJinja =
    "{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\\n' + message['content'] + "
    "eos_token }}\n{% elif message['role'] == 'assistant' %}\n{{ '<|assistant|>\\n'  + message['content'] + eos_token "
    "}}\n{% endif %}\n{% if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}";

TEST(ChatTemplate, DetectsFormatsByTheirMarkers) {
  EXPECT_EQ(ChatTemplate::detect(kLlama2Jinja).format(), ChatFormat::Llama2);
  EXPECT_EQ(ChatTemplate::detect(kLlama3Jinja).format(), ChatFormat::Llama3);
  EXPECT_EQ(ChatTemplate::detect(kChatmlJinja).format(), ChatFormat::ChatML);
  EXPECT_EQ(ChatTemplate::detect(kMistralJinja).format(), ChatFormat::Mistral);
  EXPECT_EQ(ChatTemplate::detect(kZephyrJinja).format(), ChatFormat::Zephyr);
  for (const char* t : {kLlama2Jinja, kLlama3Jinja, kChatmlJinja, kMistralJinja, kZephyrJinja})
    EXPECT_FALSE(ChatTemplate::detect(t).fallback());
}

TEST(ChatTemplate, UnknownOrEmptyFallsBackToChatml) {
  for (const char* t : {"", "{{ messages }}", "### Instruction:\n{{ prompt }}"}) {
    const ChatTemplate c = ChatTemplate::detect(t);
    EXPECT_EQ(c.format(), ChatFormat::ChatML) << t;
    EXPECT_TRUE(c.fallback()) << t;
    EXPECT_EQ(c.name(), "chatml");
  }
}

TEST(ChatTemplate, DetectsPhi3FromItsGguf) {
  SEER_REQUIRE_SHARED_FILE(path, "tokenizer-tests/ggml-vocab-phi-3.gguf");
  const ChatTemplate c = ChatTemplate::detect(GgufFile::open(path)->get_string("tokenizer.chat_template"));
  EXPECT_EQ(c.format(), ChatFormat::Phi3);
  EXPECT_EQ(c.apply({{"user", "Hi"}}), "<|user|>\nHi<|end|>\n<|assistant|>\n");
}

TEST(ChatTemplate, Llama2) {
  const ChatTemplate c = ChatTemplate::of(ChatFormat::Llama2);
  EXPECT_EQ(c.apply(kChat),
            "[INST] <<SYS>>\nYou are terse.\n<</SYS>>\n\nHi [/INST] Hello. </s><s>[INST] Bye [/INST]");
  EXPECT_EQ(c.apply({{"user", "  Hi  "}}), "[INST] Hi [/INST]");
  EXPECT_EQ(c.stop_strings(), (std::vector<std::string>{"</s>", "[INST]"}));
}

TEST(ChatTemplate, Llama3) {
  const ChatTemplate c = ChatTemplate::of(ChatFormat::Llama3);
  EXPECT_EQ(c.apply(kChat),
            "<|start_header_id|>system<|end_header_id|>\n\nYou are terse.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\nHello.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nBye<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(c.apply({{"user", "Hi"}}, false), "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>");
  EXPECT_EQ(c.stop_strings().front(), "<|eot_id|>");
}

TEST(ChatTemplate, Chatml) {
  const ChatTemplate c = ChatTemplate::of(ChatFormat::ChatML);
  EXPECT_EQ(c.apply(kChat),
            "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(c.stop_strings().front(), "<|im_end|>");
}

TEST(ChatTemplate, Mistral) {
  const ChatTemplate c = ChatTemplate::of(ChatFormat::Mistral);
  // No system block: the system text opens the first user message.
  EXPECT_EQ(c.apply(kChat), "[INST] You are terse.\n\nHi [/INST]Hello.</s>[INST] Bye [/INST]");
  EXPECT_EQ(c.apply({{"user", "Hi"}}), "[INST] Hi [/INST]");
  EXPECT_EQ(c.stop_strings(), (std::vector<std::string>{"</s>", "[INST]"}));
}

TEST(ChatTemplate, Zephyr) {
  const ChatTemplate c = ChatTemplate::of(ChatFormat::Zephyr);
  EXPECT_EQ(c.apply(kChat),
            "<|system|>\nYou are terse.</s>\n<|user|>\nHi</s>\n<|assistant|>\nHello.</s>\n<|user|>\nBye</s>\n"
            "<|assistant|>\n");
  EXPECT_EQ(c.stop_strings().front(), "</s>");
}

TEST(ChatTemplate, NamesAndRoles) {
  for (ChatFormat f : {ChatFormat::Llama2, ChatFormat::Llama3, ChatFormat::ChatML, ChatFormat::Mistral,
                       ChatFormat::Zephyr, ChatFormat::Phi3}) {
    const ChatTemplate c = ChatTemplate::of(f);
    EXPECT_EQ(ChatTemplate::named(c.name()).format(), f);
    EXPECT_FALSE(c.fallback());
    EXPECT_THROW(c.apply({{"tool", "x"}}), Error);
  }
  EXPECT_THROW(ChatTemplate::named("vicuna"), Error);
}

}  // namespace
}  // namespace seer
