#pragma once
// Formats that write the calls as one JSON list after a marker:
//   MARKER[{"name": "f", "arguments": {...}}, ...]CLOSE
// A reply that is the bare list is read too (the marker may be a control token that
// decodes to no text).
#include <string>

#include "grammar/json_schema_to_gbnf.h"
#include "server/tool_formats/forced_grammar.h"
#include "server/tool_formats/scanned_format.h"

namespace seer::server {

class JsonListFormat : public ScannedFormat {
 public:
  JsonListFormat(std::string_view marker, std::string_view close) : marker_(marker), close_(close) {}

  CallScan scan(std::string_view region, const std::vector<ToolFunction>& tools) const override {
    return scan_json_call_list(region, marker_, close_, tools);
  }
  std::string forced_call_grammar(const std::vector<ToolFunction>& tools, const ToolChoice& choice, bool parallel,
                                  grammar::JsonWhitespace ws) const override {
    const ForcedTools forced = forced_tools(tools, choice);
    return root_rule(std::string(marker_) + "[", ", ", "]" + std::string(close_), parallel) +
           "call ::= " + json_call_object(forced, "arguments") + "\n" + forced.rules + grammar::json_common_gbnf(ws);
  }

 protected:
  CallOpenings own_openings() const override { return {{marker_}, "["}; }

 private:
  std::string_view marker_, close_;
};

}  // namespace seer::server
