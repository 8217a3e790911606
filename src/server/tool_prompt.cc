#include "server/tool_prompt.h"

#include <algorithm>

#include "server/json_fields.h"

namespace seer::server {

using nlohmann::ordered_json;

namespace {

// The offered functions in OpenAI's shape (only the named one for a named choice).
ordered_json template_tools(const std::vector<ToolFunction>& tools, const ToolChoice& choice) {
  auto list = ordered_json::array();
  for (const ToolFunction& t : tools) {
    if (choice.mode == ToolChoiceMode::Named && t.name != choice.name) continue;
    ordered_json f = {{"name", t.name}};
    if (!t.description.empty()) f["description"] = t.description;
    f["parameters"] = t.parameters.is_null() ? ordered_json::object() : t.parameters;
    list.push_back({{"type", "function"}, {"function", f}});
  }
  return list;
}

std::string tools_preamble(const std::vector<ToolFunction>& tools, const ToolChoice& choice) {
  std::string s =
      "# Tools\n\nYou can call functions to help answer the user. Their signatures are listed inside <tools></tools>:\n"
      "<tools>\n";
  for (const auto& t : template_tools(tools, choice)) s += t.dump() + "\n";
  s += "</tools>\n\nTo call a function, reply with a JSON object holding its name and arguments inside "
       "<tool_call></tool_call> tags, one block per call:\n<tool_call>\n{\"name\": <function name>, \"arguments\": "
       "<arguments as a JSON object>}\n</tool_call>";
  if (choice.mode == ToolChoiceMode::Required) s += "\n\nYou must call at least one function.";
  if (choice.mode == ToolChoiceMode::Named) s += "\n\nYou must call the function " + choice.name + ".";
  return s;
}

std::string render_calls(const std::vector<ToolCall>& calls) {
  std::string s;
  for (const ToolCall& c : calls) {
    ordered_json args = parse_json_within_depth<ordered_json>(c.arguments, kMaxJsonDepth);
    std::string a = args.is_discarded() ? ordered_json(c.arguments).dump() : args.dump();
    s += (s.empty() ? "" : "\n") + std::string("<tool_call>\n{\"name\": ") + ordered_json(c.name).dump() +
         ", \"arguments\": " + a + "}\n</tool_call>";
  }
  return s;
}

}  // namespace

std::vector<ChatMessage> prompt_messages_with_tools(const std::vector<ChatMessage>& messages,
                                                    const std::vector<MessageToolInfo>& info,
                                                    const std::vector<ToolFunction>& tools, const ToolChoice& choice) {
  std::vector<ChatMessage> out;
  out.reserve(messages.size() + 1);
  if (!tools.empty() && choice.mode != ToolChoiceMode::None) {
    std::string preamble = tools_preamble(tools, choice);
    if (!messages.empty() && messages[0].role == "system") preamble = messages[0].content + "\n\n" + preamble;
    out.push_back({"system", preamble});
  }
  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    if (i == 0 && !out.empty() && m.role == "system") continue;  // merged into the preamble
    const MessageToolInfo* extra = i < info.size() ? &info[i] : nullptr;
    if (m.role == "tool") {
      std::string reply = "<tool_response>\n" + m.content + "\n</tool_response>";
      // Consecutive tool replies share one user turn, as Qwen's template does.
      if (i > 0 && messages[i - 1].role == "tool" && !out.empty()) out.back().content += "\n" + reply;
      else out.push_back({"user", reply});
    } else if (m.role == "assistant" && extra && !extra->tool_calls.empty()) {
      std::string content = m.content.empty() ? "" : m.content + "\n";
      out.push_back({"assistant", content + render_calls(extra->tool_calls)});
    } else {
      out.push_back(m);
    }
  }
  return out;
}

namespace {

// OpenAI's shapes, as Hugging Face templates read them: arguments as an object
// where they parse (templates print them with tojson).
ordered_json template_tool_calls(const std::vector<ToolCall>& calls) {
  auto list = ordered_json::array();
  for (const ToolCall& c : calls) {
    ordered_json args = parse_json_within_depth<ordered_json>(c.arguments, kMaxJsonDepth);
    list.push_back({{"id", c.id},
                    {"type", "function"},
                    {"function", {{"name", c.name}, {"arguments", args.is_discarded() ? ordered_json(c.arguments) : args}}}});
  }
  return list;
}

}  // namespace

std::string render_chat_prompt(const ChatTemplate& chat_template, const std::vector<ChatMessage>& messages,
                               const std::vector<MessageToolInfo>& info, const std::vector<ToolFunction>& tools,
                               const ToolChoice& choice, const ordered_json& kwargs) {
  const bool any_tool_messages =
      std::any_of(info.begin(), info.end(), [](const MessageToolInfo& i) { return !i.tool_calls.empty() || !i.tool_call_id.empty(); });
  const bool offer_tools = !tools.empty() && choice.mode != ToolChoiceMode::None;
  if (!offer_tools && !any_tool_messages) return chat_template.apply(messages, /*add_generation_prompt=*/true, nullptr, kwargs);
  if (!chat_template.takes_tools())
    return chat_template.apply(prompt_messages_with_tools(messages, info, tools, choice), /*add_generation_prompt=*/true,
                               nullptr, kwargs);
  std::vector<ChatMessage> with_fields = messages;
  for (size_t i = 0; i < with_fields.size() && i < info.size(); ++i) {
    if (!info[i].tool_calls.empty()) with_fields[i].tool_fields = {{"tool_calls", template_tool_calls(info[i].tool_calls)}};
    if (!info[i].tool_call_id.empty()) with_fields[i].tool_fields = {{"tool_call_id", info[i].tool_call_id}};
  }
  return chat_template.apply(with_fields, /*add_generation_prompt=*/true,
                             offer_tools ? template_tools(tools, choice) : ordered_json(nullptr), kwargs);
}

}  // namespace seer::server
