#pragma once
// Chat formats for the common templates, chosen by recognising the GGUF
// tokenizer.chat_template string. Unknown templates fall back to chatml (labelled).
#include <string>
#include <vector>

namespace seer {

struct ChatMessage {
  std::string role;  // system | user | assistant
  std::string content;
};

enum class ChatFormat { Llama2, Llama3, ChatML, Mistral, Zephyr, Phi3 };

class ChatTemplate {
 public:
  // Picks the format from a Jinja template string by its distinctive markers; empty
  // or unrecognised -> ChatML with fallback() == true.
  static ChatTemplate detect(const std::string& jinja_template);
  static ChatTemplate of(ChatFormat f);
  // By name() ("llama-2", "llama-3", "chatml", "mistral", "zephyr", "phi-3");
  // throws seer::Error listing the names for anything else.
  static ChatTemplate named(const std::string& name);

  ChatFormat format() const { return format_; }
  std::string name() const;
  bool fallback() const { return fallback_; }
  // The prompt text for `messages`, ending with the assistant turn opener when
  // add_generation_prompt. BOS is not included at the start (the tokenizer adds it);
  // special-token text inside ("<|im_start|>", "</s>") needs encode(..., parse_special
  // = true). Roles other than system/user/assistant throw seer::Error.
  std::string apply(const std::vector<ChatMessage>& messages, bool add_generation_prompt = true) const;
  // Text that ends an assistant turn in this format (used as an extra stop string).
  std::vector<std::string> stop_strings() const;

 private:
  ChatFormat format_ = ChatFormat::ChatML;
  bool fallback_ = false;
};

}  // namespace seer
