// ChatTemplate's side that renders the model's own Jinja template (the hard-coded
// formats are in chat_template.cc).
#include <cstdio>
#include <fstream>
#include <sstream>

#include "common/error.h"
#include "template/template.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace seer {

namespace {

constexpr const char* kProbeText = "seer-probe-7f3a";
constexpr const char* kProbeSystem = "seer-system-probe-2c9e";

nlohmann::ordered_json text_parts(const std::string& text) {
  return nlohmann::ordered_json::array({{{"type", "text"}, {"text", text}}});
}

bool renders_containing(const tmpl::Template& t, const nlohmann::ordered_json& context, const std::string& needle,
                        const std::string& unwanted = "") {
  try {
    const std::string out = t.render(context);
    return out.find(needle) != std::string::npos && (unwanted.empty() || out.find(unwanted) == std::string::npos);
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

ChatTemplate ChatTemplate::from_model(const std::string& jinja_template, const ChatTokens& tokens) {
  auto fall_back = [&](const std::string& reason) {
    ChatTemplate c = detect(jinja_template);
    c.fallback_ = true;
    c.fallback_reason_ = reason;
    return c;
  };
  if (jinja_template.empty()) return fall_back("the model has no chat template");
  ChatTemplate c = detect(jinja_template);
  c.format_recognised_ = !c.fallback_;
  c.fallback_ = false;
  c.fallback_reason_.clear();
  c.tokens_ = tokens;
  try {
    c.jinja_ = std::make_shared<const tmpl::Template>(tmpl::Template::parse(jinja_template));
    c.takes_tools_ = jinja_template.find("tools") != std::string::npos;
    c.source_ = jinja_template;
  } catch (const Error& e) {
    return fall_back(e.what());
  }
  const nlohmann::ordered_json base = {{"bos_token", tokens.bos}, {"eos_token", tokens.eos}, {"add_generation_prompt", true}};
  nlohmann::ordered_json probe = base;
  probe["messages"] = {{{"role", "user"}, {"content", kProbeText}}};
  try {
    if (c.jinja_->render(probe).find(kProbeText) == std::string::npos)
      return fall_back("the chat template does not print the user's message");
  } catch (const Error& e) {
    return fall_back(e.what());
  }
  // What the template can take, as llama.cpp probes it: a template that refuses
  // system messages gets them prepended to the next user message; one that cannot
  // print a list of content parts gets their text joined.
  nlohmann::ordered_json sys = base;
  sys["messages"] = {{{"role", "system"}, {"content", kProbeSystem}}, {{"role", "user"}, {"content", kProbeText}}};
  c.system_role_ = renders_containing(*c.jinja_, sys, kProbeSystem);
  nlohmann::ordered_json typed = base;
  typed["messages"] = {{{"role", "user"}, {"content", text_parts(kProbeText)}}};
  c.typed_content_ = renders_containing(*c.jinja_, typed, kProbeText, "'type'") &&
                     renders_containing(*c.jinja_, typed, kProbeText, "\"type\"");
  return c;
}

std::string ChatTemplate::describe() const {
  if (jinja_) return "model's own (jinja)";
  if (!fallback_reason_.empty()) return fmt::format("{} (fallback: {})", name(), fallback_reason_);
  return fallback_ ? name() + " (fallback: the chat template is not recognised)" : name();
}

nlohmann::ordered_json ChatTemplate::context_of(const std::vector<ChatMessage>& messages,
                                                bool add_generation_prompt, const nlohmann::ordered_json& tools,
                                                const nlohmann::ordered_json& kwargs) const {
  auto list = nlohmann::ordered_json::array();
  std::string pending_system;
  for (const ChatMessage& m : messages) {
    if (m.role == "system" && !system_role_) {
      pending_system += (pending_system.empty() ? "" : "\n\n") + m.content;
      continue;
    }
    nlohmann::ordered_json content = m.content;
    if (!m.content_parts.is_null() && typed_content_) content = m.content_parts;
    if (!pending_system.empty() && m.role == "user") {
      content = pending_system + "\n\n" + m.content;
      pending_system.clear();
    }
    nlohmann::ordered_json msg = {{"role", m.role}, {"content", content}};
    if (m.tool_fields.is_object()) msg.update(m.tool_fields);
    if (m.reasoning_content) msg["reasoning_content"] = *m.reasoning_content;
    list.push_back(std::move(msg));
  }
  if (!pending_system.empty()) list.push_back({{"role", "user"}, {"content", pending_system}});
  nlohmann::ordered_json ctx = kwargs.is_object() ? kwargs : nlohmann::ordered_json::object();
  ctx.update(nlohmann::ordered_json{{"messages", list},
                                {"add_generation_prompt", add_generation_prompt},
                                {"bos_token", tokens_.bos},
                                {"eos_token", tokens_.eos}});
  if (!tools.is_null()) ctx["tools"] = tools;
  return ctx;
}

std::string ChatTemplate::apply(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                                const nlohmann::ordered_json& tools, const nlohmann::ordered_json& kwargs) const {
  if (!jinja_) return apply_builtin(messages, add_generation_prompt);
  std::string out = jinja_->render(context_of(messages, add_generation_prompt, tools, kwargs));
  if (tokens_.add_bos && !tokens_.bos.empty() && out.starts_with(tokens_.bos)) out.erase(0, tokens_.bos.size());
  if (tokens_.add_eos && !tokens_.eos.empty() && out.ends_with(tokens_.eos)) out.resize(out.size() - tokens_.eos.size());
  return out;
}

std::string ChatTemplate::render(const nlohmann::ordered_json& context) const {
  if (!jinja_) fail("the {} format is built in, not a Jinja template", name());
  nlohmann::ordered_json ctx = context;
  if (!ctx.contains("bos_token")) ctx["bos_token"] = tokens_.bos;
  if (!ctx.contains("eos_token")) ctx["eos_token"] = tokens_.eos;
  if (!ctx.contains("add_generation_prompt")) ctx["add_generation_prompt"] = true;
  return jinja_->render(ctx);
}

ChatTokens chat_tokens(const Tokenizer& tokenizer) {
  ChatTokens t;
  if (tokenizer.bos_id() >= 0) t.bos = tokenizer.token_text(tokenizer.bos_id());
  if (tokenizer.eos_id() >= 0) t.eos = tokenizer.token_text(tokenizer.eos_id());
  t.add_bos = tokenizer.add_bos();
  t.add_eos = tokenizer.add_eos();
  return t;
}

ChatTemplate load_chat_template(const std::string& override_file, const std::string& model_template,
                                const Tokenizer& tokenizer) {
  if (!override_file.empty()) {
    std::ifstream in(override_file, std::ios::binary);
    if (!in) fail("cannot read the chat template file '{}'", override_file);
    std::stringstream text;
    text << in.rdbuf();
    if (text.str().empty()) fail("the chat template file '{}' is empty", override_file);
    ChatTemplate t = ChatTemplate::from_model(text.str(), chat_tokens(tokenizer));
    if (!t.is_model_template()) fail("the chat template file '{}' cannot be used: {}", override_file, t.fallback_reason());
    return t;
  }
  ChatTemplate t = ChatTemplate::from_model(model_template, chat_tokens(tokenizer));
  if (!t.is_model_template())
    std::fprintf(stderr, "warning: chat template: %s; formatting chats as %s\n", t.fallback_reason().c_str(),
                 t.name().c_str());
  return t;
}

}  // namespace seer
