#include "server/tool_formats/registry.h"

namespace seer::server {

const std::vector<const ToolFormat*>& all_tool_formats() {
  static const std::vector<const ToolFormat*> formats = {
      &qwen3_coder_tool_format(), &deepseek_r1_tool_format(), &deepseek_v3_tool_format(), &functools_tool_format(),
      &granite_tool_format(),     &nemotron_tool_format(),    &mistral_args_tool_format(), &mistral_tool_format(),
      &hermes_tool_format(),      &pythonic_tool_format(),    &llama_json_tool_format(),   &generic_json_tool_format()};
  return formats;
}

const ToolFormat& tool_format_of_source(std::string_view source) {
  for (const ToolFormat* f : all_tool_formats())
    if (f->written_by(source)) return *f;
  return generic_json_tool_format();
}

const ToolFormat& tool_format_of(const ChatTemplate& chat_template) {
  const ToolFormat& shown = tool_format_of_source(chat_template.source());
  if (&shown != &generic_json_tool_format() || chat_template.takes_tools()) return shown;
  return hermes_tool_format();
}

const ToolFormat* tool_format_named(std::string_view name) {
  for (const ToolFormat* f : all_tool_formats())
    if (f->name() == name) return f;
  return nullptr;
}

}  // namespace seer::server
