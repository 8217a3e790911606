#include "tokenizer/chat_template.h"

#include "common/error.h"

namespace seer {

namespace {

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

std::string trim(const std::string& s) {
  const char* ws = " \t\n\r\f\v";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

void check_role(const ChatMessage& m) {
  if (m.role != "system" && m.role != "user" && m.role != "assistant")
    fail("chat message role '{}' is not one of system, user, assistant", m.role);
}

// Llama-2 chat (Meta's reference format):
//   "[INST] <<SYS>>\n{system}\n<</SYS>>\n\n{user} [/INST] {answer} </s><s>[INST] {user} [/INST]"
// System text goes into a <<SYS>> block at the start of the next user turn.
std::string apply_llama2(const std::vector<ChatMessage>& messages) {
  std::string out, sys;
  bool first_turn = true;
  auto open_turn = [&](const std::string& user) {
    if (!first_turn) out += "<s>";
    out += "[INST] ";
    if (!sys.empty()) out += "<<SYS>>\n" + trim(sys) + "\n<</SYS>>\n\n";
    out += trim(user) + " [/INST]";
    sys.clear();
    first_turn = false;
  };
  for (const ChatMessage& m : messages) {
    if (m.role == "system") {
      sys += (sys.empty() ? "" : "\n\n") + m.content;
    } else if (m.role == "user") {
      open_turn(m.content);
    } else {
      out += " " + trim(m.content) + " </s>";
    }
  }
  if (!sys.empty()) open_turn("");
  return out;
}

// Mistral Instruct v0.1/v0.2: "[INST] {user} [/INST]{answer}</s>[INST] {user} [/INST]".
// It has no system turn: system text opens the next user message.
std::string apply_mistral(const std::vector<ChatMessage>& messages) {
  std::string out, sys;
  auto open_turn = [&](const std::string& user) {
    out += "[INST] " + (sys.empty() ? user : user.empty() ? sys : sys + "\n\n" + user) + " [/INST]";
    sys.clear();
  };
  for (const ChatMessage& m : messages) {
    if (m.role == "system") {
      sys += (sys.empty() ? "" : "\n\n") + m.content;
    } else if (m.role == "user") {
      open_turn(m.content);
    } else {
      out += m.content + "</s>";
    }
  }
  if (!sys.empty()) open_turn("");
  return out;
}

}  // namespace

ChatTemplate ChatTemplate::detect(const std::string& t) {
  ChatTemplate c;
  c.fallback_reason_ = t.empty() ? "the model has no chat template" : "";
  if (contains(t, "<|im_start|>")) {
    c.format_ = ChatFormat::ChatML;
  } else if (contains(t, "<|start_header_id|>") && contains(t, "<|end_header_id|>")) {
    c.format_ = ChatFormat::Llama3;
  } else if (contains(t, "[INST]")) {
    c.format_ = contains(t, "<<SYS>>") ? ChatFormat::Llama2 : ChatFormat::Mistral;
  } else if (contains(t, "<|user|>") && contains(t, "<|end|>")) {
    c.format_ = ChatFormat::Phi3;
  } else if (contains(t, "<|user|>") && contains(t, "<|assistant|>")) {
    c.format_ = ChatFormat::Zephyr;
  } else {
    c.format_ = ChatFormat::ChatML;
    c.fallback_ = true;
    c.format_recognised_ = false;
  }
  return c;
}

ChatTemplate ChatTemplate::of(ChatFormat f) {
  ChatTemplate c;
  c.format_ = f;
  return c;
}

ChatTemplate ChatTemplate::named(const std::string& name) {
  for (ChatFormat f : {ChatFormat::Llama2, ChatFormat::Llama3, ChatFormat::ChatML, ChatFormat::Mistral,
                       ChatFormat::Zephyr, ChatFormat::Phi3}) {
    if (of(f).name() == name) return of(f);
  }
  fail("unknown chat template '{}' (known: llama-2, llama-3, chatml, mistral, zephyr, phi-3)", name);
}

std::string ChatTemplate::name() const {
  switch (format_) {
    case ChatFormat::Llama2: return "llama-2";
    case ChatFormat::Llama3: return "llama-3";
    case ChatFormat::ChatML: return "chatml";
    case ChatFormat::Mistral: return "mistral";
    case ChatFormat::Zephyr: return "zephyr";
    case ChatFormat::Phi3: return "phi-3";
  }
  return "chatml";
}

std::string ChatTemplate::apply_builtin(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const {
  for (const auto& m : messages) check_role(m);
  std::string out;
  switch (format_) {
    case ChatFormat::Llama2:
      return apply_llama2(messages);
    case ChatFormat::Mistral:
      return apply_mistral(messages);
    case ChatFormat::Llama3:
      for (const auto& m : messages)
        out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + trim(m.content) + "<|eot_id|>";
      if (add_generation_prompt) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
      return out;
    case ChatFormat::ChatML:
      for (const auto& m : messages) out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
      if (add_generation_prompt) out += "<|im_start|>assistant\n";
      return out;
    case ChatFormat::Zephyr:
      for (const auto& m : messages) out += "<|" + m.role + "|>\n" + m.content + "</s>\n";
      if (add_generation_prompt) out += "<|assistant|>\n";
      return out;
    case ChatFormat::Phi3:
      for (const auto& m : messages) out += "<|" + m.role + "|>\n" + m.content + "<|end|>\n";
      if (add_generation_prompt) out += "<|assistant|>\n";
      return out;
  }
  return out;
}

std::vector<std::string> ChatTemplate::stop_strings() const {
  if (jinja_ && !format_recognised_) return {};
  switch (format_) {
    case ChatFormat::Llama2: return {"</s>", "[INST]"};
    case ChatFormat::Llama3: return {"<|eot_id|>", "<|start_header_id|>"};
    case ChatFormat::ChatML: return {"<|im_end|>", "<|im_start|>"};
    case ChatFormat::Mistral: return {"</s>", "[INST]"};
    case ChatFormat::Zephyr: return {"</s>", "<|user|>"};
    case ChatFormat::Phi3: return {"<|end|>", "<|user|>"};
  }
  return {};
}

}  // namespace seer
