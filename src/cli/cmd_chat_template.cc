// seer chat-template: prints the prompt a chat template renders for a conversation
// (for people debugging a model's prompt format; docs/chat-templates.md).
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "common/error.h"
#include "model/gguf_file.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace seer::cli {

namespace {

struct ChatTemplateOptions {
  std::string model;
  std::string template_file;
  std::string messages_file;
  std::string tools_file;
  std::optional<std::string> bos_token;
  std::optional<std::string> eos_token;
  bool no_generation_prompt = false;
};

std::string read_text(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read the {} file '{}'", what, path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

nlohmann::ordered_json read_json(const std::string& path, const char* what) {
  try {
    return nlohmann::ordered_json::parse(read_text(path, what));
  } catch (const nlohmann::json::exception& e) {
    fail("the {} file '{}' is not valid JSON: {}", what, path, e.what());
  }
}

// Messages for the built-in formats: role and text content only.
std::vector<ChatMessage> plain_messages(const nlohmann::ordered_json& messages) {
  std::vector<ChatMessage> out;
  for (const auto& m : messages) {
    if (!m.is_object() || !m.contains("role")) fail("each message must be an object with a role");
    const auto& c = m.value("content", nlohmann::ordered_json(""));
    std::string text;
    if (c.is_string()) {
      text = c.get<std::string>();
    } else if (c.is_array()) {
      for (const auto& p : c)
        if (p.is_object() && p.value("type", "") == "text") text += (text.empty() ? "" : "\n") + p.value("text", "");
    }
    out.push_back({m["role"].get<std::string>(), text});
  }
  return out;
}

int run_chat_template(const ChatTemplateOptions& o) {
  if (o.model.empty() && o.template_file.empty()) fail("give --model FILE (a GGUF) or --chat-template FILE");
  ChatTokens tokens;
  std::string source;
  if (!o.model.empty()) {
    auto gguf = GgufFile::open(o.model);
    tokens = chat_tokens(*tokenizer_from_gguf(*gguf));
    source = gguf->find_string("tokenizer.chat_template").value_or("");
  }
  if (!o.template_file.empty()) source = read_text(o.template_file, "chat template");
  if (o.bos_token) tokens.bos = *o.bos_token;
  if (o.eos_token) tokens.eos = *o.eos_token;

  nlohmann::ordered_json messages = read_json(o.messages_file, "messages");
  if (messages.is_object() && messages.contains("messages")) messages = messages["messages"];
  if (!messages.is_array()) fail("the messages file must hold a JSON array of messages (or {{\"messages\": [...]}})");
  nlohmann::ordered_json context = {{"messages", messages},
                                    {"add_generation_prompt", !o.no_generation_prompt},
                                    {"bos_token", tokens.bos},
                                    {"eos_token", tokens.eos}};
  if (!o.tools_file.empty()) context["tools"] = read_json(o.tools_file, "tools");

  const ChatTemplate t = ChatTemplate::from_model(source, tokens);
  std::string prompt;
  if (t.is_model_template()) {
    prompt = t.render(context);
  } else {
    if (!o.template_file.empty()) fail("the chat template file '{}' cannot be used: {}", o.template_file, t.fallback_reason());
    std::fprintf(stderr, "warning: chat template: %s; formatting as %s\n", t.fallback_reason().c_str(), t.name().c_str());
    if (!o.tools_file.empty()) fail("--tools needs the model's own chat template");
    prompt = tokens.bos + t.apply(plain_messages(messages), !o.no_generation_prompt);
  }
  std::fwrite(prompt.data(), 1, prompt.size(), stdout);
  return 0;
}

}  // namespace

void add_chat_template(CLI::App& app, int& rc) {
  auto o = std::make_shared<ChatTemplateOptions>();
  auto* cmd = app.add_subcommand("chat-template", "Print the prompt a chat template renders for a conversation");
  cmd->add_option("--model", o->model, "GGUF whose tokenizer.chat_template (and BOS/EOS text) to use")->check(CLI::ExistingFile);
  cmd->add_option("--chat-template", o->template_file, "Jinja chat template file (overrides the model's)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--messages", o->messages_file, "JSON file: an array of OpenAI-style messages")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--tools", o->tools_file, "JSON file: an array of tool (function) definitions")->check(CLI::ExistingFile);
  cmd->add_option("--bos-token", o->bos_token, "Text of bos_token (default: the model's, or empty)");
  cmd->add_option("--eos-token", o->eos_token, "Text of eos_token (default: the model's, or empty)");
  cmd->add_flag("--no-generation-prompt", o->no_generation_prompt, "Render with add_generation_prompt = false");
  cmd->callback([o, &rc] { rc = run_chat_template(*o); });
}

}  // namespace seer::cli
