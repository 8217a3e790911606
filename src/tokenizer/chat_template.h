#pragma once
// The chat format of a model. The model's own Jinja template (GGUF
// tokenizer.chat_template, or a file given by --chat-template) is rendered by the
// built-in interpreter (src/template/); six formats hard-coded here, recognised in
// the template by their markers, are the fallback when the model has no template or
// its template cannot run, and the reason is kept (docs/chat-templates.md).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace seer {

namespace tmpl {
class Template;
}

struct ChatMessage {
  std::string role;  // system | user | assistant
  std::string content;
  // The content as the client sent it when it was a list of parts
  // ([{"type": "text", "text": ...}]); null when it was a string. `content` then
  // holds the parts' text joined by "\n".
  nlohmann::ordered_json content_parts = nullptr;
  // Extra fields of the message for a template that takes tools: an assistant's
  // "tool_calls" or a tool reply's "tool_call_id" (OpenAI's shapes); null when none.
  nlohmann::ordered_json tool_fields = nullptr;
  // An assistant turn's reasoning, given to templates as message.reasoning_content
  // (Qwen3, GLM write it back inside <think></think>); nullopt: none sent.
  std::optional<std::string> reasoning_content{};
};

enum class ChatFormat { Llama2, Llama3, ChatML, Mistral, Zephyr, Phi3 };

// The text of the model's special tokens a template prints, and whether the
// tokenizer adds them itself: then apply() drops the template's leading BOS and
// trailing EOS, as llama.cpp does, so the prompt does not get them twice.
struct ChatTokens {
  std::string bos;
  std::string eos;
  bool add_bos = true;
  bool add_eos = false;
};

class ChatTemplate {
 public:
  // The model's own template. When it is empty, does not parse, or fails to render
  // a one-message conversation, formats with detect(jinja_template) instead and
  // fallback_reason() says why.
  static ChatTemplate from_model(const std::string& jinja_template, const ChatTokens& tokens);
  // Picks the format from a Jinja template string by its distinctive markers; empty
  // or unrecognised -> ChatML with fallback() == true.
  static ChatTemplate detect(const std::string& jinja_template);
  static ChatTemplate of(ChatFormat f);
  // By name() ("llama-2", "llama-3", "chatml", "mistral", "zephyr", "phi-3");
  // throws seer::Error listing the names for anything else.
  static ChatTemplate named(const std::string& name);

  // Whether the model's own template renders (not a hard-coded format).
  bool is_model_template() const { return jinja_ != nullptr; }
  // The hard-coded format (for the model's template: the one its markers resemble,
  // which chooses the stop strings).
  ChatFormat format() const { return format_; }
  std::string name() const;
  bool fallback() const { return fallback_; }
  // Why the model's template is not used ("" when it is, or for of()/named()).
  const std::string& fallback_reason() const { return fallback_reason_; }
  // One line for the startup summary and `seer inspect`: "model's own (jinja)" or
  // "chatml (fallback: ...)".
  std::string describe() const;

  // The prompt text for `messages`, ending with the assistant turn opener when
  // add_generation_prompt. BOS is not included at the start (the tokenizer adds it;
  // a template's leading bos_token is removed); special-token text inside
  // ("<|im_start|>", "</s>") needs encode(..., parse_special = true). Throws
  // seer::Error for roles other than system/user/assistant (hard-coded formats) or
  // when the model's template refuses the conversation (its raise_exception text).
  // `tools` (OpenAI's list of {"type": "function", "function": {...}}), when not null,
  // is given to the model's template as its `tools` variable; `kwargs` (an object or
  // null) adds variables (chat_template_kwargs: enable_thinking, ...). Hard-coded
  // formats ignore both.
  std::string apply(const std::vector<ChatMessage>& messages, bool add_generation_prompt = true,
                    const nlohmann::ordered_json& tools = nullptr,
                    const nlohmann::ordered_json& kwargs = nullptr) const;
  // The model's Jinja source ("" for a hard-coded format).
  const std::string& source() const { return source_; }
  // Whether the model's own template takes tools (it reads a `tools` variable): then
  // tools, tool calls and tool replies go to it as they are.
  bool takes_tools() const { return jinja_ != nullptr && takes_tools_; }
  // Renders the model's template with a full context (messages with tool calls,
  // tools, ...) as `seer chat-template` does; bos_token/eos_token/
  // add_generation_prompt are added unless present. Nothing is removed from the
  // output. Throws seer::Error for a hard-coded format or a template error.
  std::string render(const nlohmann::ordered_json& context) const;
  // Text that ends an assistant turn in this format (used as an extra stop string);
  // none for a model template whose format is not recognised.
  std::vector<std::string> stop_strings() const;

 private:
  std::string apply_builtin(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const;
  nlohmann::ordered_json context_of(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                                    const nlohmann::ordered_json& tools, const nlohmann::ordered_json& kwargs) const;

  ChatFormat format_ = ChatFormat::ChatML;
  bool fallback_ = false;
  bool format_recognised_ = true;
  std::string fallback_reason_;
  // The model's template (shared: copies of a ChatTemplate render the same tree).
  std::shared_ptr<const tmpl::Template> jinja_;
  std::string source_;
  ChatTokens tokens_;
  bool system_role_ = true;    // the template prints system messages
  bool typed_content_ = true;  // the template prints content given as a list of parts
  bool takes_tools_ = false;   // the template's source names `tools`
};

class Tokenizer;

// The text of `tokenizer`'s BOS and EOS tokens ("" where it has none).
ChatTokens chat_tokens(const Tokenizer& tokenizer);

// The template a server or `seer chat-template` uses: the Jinja file `override_file`
// when given (throws seer::Error when it cannot be read or parsed), else the model's
// `model_template`. A fallback to a hard-coded format is reported on stderr with its
// reason.
ChatTemplate load_chat_template(const std::string& override_file, const std::string& model_template,
                                const Tokenizer& tokenizer);

}  // namespace seer
