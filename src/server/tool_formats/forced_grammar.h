#pragma once
// Pieces every format's forcing grammar is built from: the functions a forced call
// may name with the GBNF rules of their parameter schemas (through
// grammar::json_schema_rules), the JSON call object {"name": ..., "arguments": ...},
// and the root rule repeating calls.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/tool_types.h"

namespace seer::server {

struct ForcedTool {
  const ToolFunction* tool = nullptr;
  size_t index = 0;       // in the request's `tools`
  std::string args_rule;  // the rule of its whole arguments object
};

struct ForcedTools {
  std::vector<ForcedTool> tools;  // every tool, or only the named one
  std::string rules;              // the argument rules (using json_common_gbnf)
};

// Throws ApiError naming tools[i].function.parameters when a schema does not compile.
ForcedTools forced_tools(const std::vector<ToolFunction>& tools, const ToolChoice& choice);

// The rules of `schema` (a part of tool `index`'s parameters) as rule `rule`; null
// schema: any JSON value. Throws as forced_tools does.
std::string parameter_rules(const nlohmann::ordered_json& schema, const std::string& rule, size_t index);

// `"{\"name\": " ( "\"f\"" ", \"KEY\": " args0 | ... ) "}"`: one of the functions, its
// arguments under `args_key` ("arguments" or "parameters").
std::string json_call_object(const ForcedTools& forced, std::string_view args_key);

// root ::= OPEN call ( SEP call )* CLOSE (the repetition only when `parallel`), with
// `call` defined by the caller; the pieces are literal text.
std::string root_rule(std::string_view open, std::string_view sep, std::string_view close, bool parallel);

// The schema's `properties` in order with whether each is `required` (empty when
// the schema names none).
struct NamedProperty {
  std::string name;
  const nlohmann::ordered_json* schema;
  bool required;
};
std::vector<NamedProperty> schema_properties(const nlohmann::ordered_json& parameters);

// A part of `root` (a property's schema) compiled alone: root's $defs / definitions
// copied in, so its $refs still resolve.
nlohmann::ordered_json with_definitions(const nlohmann::ordered_json& part, const nlohmann::ordered_json& root);

// `items` in order, separated by `sep`, the optional ones (required false) possibly
// absent, as rules named PREFIX-... ; returns the rule name of the whole sequence.
std::string separated_sequence(const std::vector<std::pair<std::string, bool>>& items, std::string_view sep,
                               const std::string& prefix, std::string* rules);

}  // namespace seer::server
