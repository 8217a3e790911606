#pragma once
// One model family's way of writing tool calls, behind one interface: which chat
// templates it belongs to, how a finished reply is read into calls, how the call
// region is read while it streams, and the grammar that forces a call written the
// family's own way (tool_choice "required" or a named function), so a forced model
// stays on the text it was trained on. registry.h picks the format of a template;
// docs/serving.md ("Tool calls") lists the formats.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/json_schema_to_gbnf.h"
#include "server/tool_call_scanner.h"
#include "server/tool_types.h"

namespace seer::server {

// What may begin a call: a marker anywhere in the reply, or one of the bytes
// `reply_openers` as the reply's first non-space byte (a reply that is all call).
struct CallOpenings {
  std::vector<std::string_view> markers;
  std::string reply_openers;
};

class ToolFormat {
 public:
  virtual ~ToolFormat() = default;
  // Its name in docs, logs and `seer serve --tool-call-format`.
  virtual std::string_view name() const = 0;
  // Whether a chat template's Jinja source shows calls in this format.
  virtual bool written_by(std::string_view template_source) const = 0;

  virtual CallOpenings openings() const = 0;
  // The calls in a finished reply to functions of `tools` (also in the Hermes, Llama
  // 3.x and Mistral formats, which every format reads); nullopt when it is not a
  // call. *content gets the text before the first call (trimmed).
  [[nodiscard]] virtual std::optional<std::vector<ToolCall>> parse(std::string_view text,
                                                                   const std::vector<ToolFunction>& tools,
                                                                   std::string* content) const = 0;
  // Reads the call region (the reply from where a call opens) as it arrives; `tools`
  // must outlive the scanner.
  virtual std::unique_ptr<CallRegionScanner> scanner(const std::vector<ToolFunction>& tools) const = 0;
  // GBNF admitting only calls in this format (one, or several when `parallel` and the
  // format can hold several); for a Named choice only that function; arguments follow
  // each function's parameter schema. Throws ApiError naming the schema it cannot
  // compile.
  virtual std::string forced_call_grammar(const std::vector<ToolFunction>& tools, const ToolChoice& choice,
                                          bool parallel, grammar::JsonWhitespace ws) const = 0;
};

}  // namespace seer::server
