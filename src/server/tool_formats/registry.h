#pragma once
// Every tool-call format, and the one a model's chat template picks: the first whose
// written_by() matches the template source, in the order of all_tool_formats()
// (specific markers before the generic ones). A template that shows no format gets
// the generic JSON object when it takes tools, else Hermes (the tools preamble of
// tool_prompt.h asks for Hermes calls). A template that shows calls without taking
// tools (DeepSeek R1 distills) keeps the format it shows: the model gets the Hermes
// preamble, its calls are read either way, and a forced call is written its own way.
// A template seer cannot render (it falls back to a built-in format) has no source:
// Hermes.
#include <string_view>
#include <vector>

#include "server/tool_formats/tool_format.h"
#include "tokenizer/chat_template.h"

namespace seer::server {

const ToolFormat& hermes_tool_format();
const ToolFormat& llama_json_tool_format();
const ToolFormat& mistral_tool_format();
const ToolFormat& mistral_args_tool_format();
const ToolFormat& generic_json_tool_format();
const ToolFormat& qwen3_coder_tool_format();
const ToolFormat& pythonic_tool_format();
const ToolFormat& granite_tool_format();
const ToolFormat& functools_tool_format();
const ToolFormat& nemotron_tool_format();
const ToolFormat& deepseek_r1_tool_format();
const ToolFormat& deepseek_v3_tool_format();

// In detection order; generic_json (any template that takes tools) last.
const std::vector<const ToolFormat*>& all_tool_formats();

// The first format the source shows; generic_json when none.
const ToolFormat& tool_format_of_source(std::string_view template_source);
const ToolFormat& tool_format_of(const ChatTemplate& chat_template);
// By name (`seer serve --tool-call-format`); null when none is called that.
const ToolFormat* tool_format_named(std::string_view name);

}  // namespace seer::server
