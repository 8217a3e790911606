// Request-body limits on structure (issue 53): every depth a client controls is
// checked before anything walks it by recursion, and a body past a limit is a 400
// (invalid_request_error) whose message names the limit and whose param names the
// field. Each limit is shown just under (accepted) and just over (refused).
#include <functional>

#include <gtest/gtest.h>

#include "grammar/gbnf_parser.h"
#include "grammar/json_schema_to_gbnf.h"
#include "server/api_error.h"
#include "server/fakes.h"
#include "server/request_builder.h"

namespace seer::server {
namespace {

using nlohmann::json;

testing::CharTokenizer tokenizer;

ApiRequest parse(const std::string& body, Endpoint endpoint = Endpoint::ChatCompletions) {
  ParseLimits l;
  l.vocab_size = 258;
  return parse_api_request(body, endpoint, l);
}

// The 400 parsing `body` throws: its param and message (FAILs when it parses).
std::pair<std::string, std::string> refusal(const std::string& body, Endpoint endpoint = Endpoint::ChatCompletions) {
  try {
    (void)parse(body, endpoint);
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 400);
    EXPECT_EQ(e.type(), "invalid_request_error");
    return {e.param(), e.what()};
  }
  ADD_FAILURE() << "accepted: " << body.substr(0, 200);
  return {};
}

std::string nest(int depth) { return std::string(static_cast<size_t>(depth), '[') + std::string(static_cast<size_t>(depth), ']'); }

const json kUser = {{"role", "user"}, {"content", "hi"}};

TEST(RequestLimits, JsonBodyDepth) {
  // The body object is one level: 31 arrays inside it make 32.
  (void)parse(R"({"prompt": "a", "x": )" + nest(kMaxJsonDepth - 1) + "}", Endpoint::Completions);
  auto [param, message] = refusal(R"({"prompt": "a", "x": )" + nest(kMaxJsonDepth) + "}", Endpoint::Completions);
  EXPECT_EQ(param, "");
  EXPECT_EQ(message, "the request body nests arrays/objects deeper than 32 levels (the JSON depth limit)");
}

std::string tool_reply(const std::string& arguments) {
  json call = {{"id", "c1"}, {"type", "function"}, {"function", {{"name", "f"}, {"arguments", arguments}}}};
  return json{{"messages",
               {kUser,
                {{"role", "assistant"}, {"content", nullptr}, {"tool_calls", {call}}},
                {{"role", "tool"}, {"tool_call_id", "c1"}, {"content", "ok"}}}}}
      .dump();
}

TEST(RequestLimits, ToolCallArgumentsDepth) {
  ApiRequest r = parse(tool_reply(nest(kMaxJsonDepth)));
  ASSERT_EQ(r.message_tools[1].tool_calls.size(), 1u);
  // The arguments reach the prompt, parsed and printed again (ChatML has no tools).
  ModelInfo m;
  m.served_name = "m";
  m.tokenizer = &tokenizer;
  m.max_model_len = 4096;
  m.kv_capacity_tokens = 8192;
  m.vocab_size = tokenizer.vocab_size();
  EXPECT_NE(build_request(r, m).prompt_text.find(nest(kMaxJsonDepth)), std::string::npos);

  auto [param, message] = refusal(tool_reply(nest(kMaxJsonDepth + 1)));
  EXPECT_EQ(param, "messages[1].tool_calls[0].function.arguments");
  EXPECT_NE(message.find("nests arrays/objects deeper than 32 levels (the JSON depth limit)"), std::string::npos)
      << message;
  EXPECT_EQ(refusal(tool_reply(nest(200000))).first, "messages[1].tool_calls[0].function.arguments");
}

std::string with_grammar(const std::string& gbnf) {
  return json{{"prompt", "a"}, {"grammar", gbnf}}.dump();
}

TEST(RequestLimits, GrammarNesting) {
  auto groups = [](int n) {
    return "root ::= " + std::string(static_cast<size_t>(n), '(') + "\"a\"" + std::string(static_cast<size_t>(n), ')');
  };
  EXPECT_EQ(parse(with_grammar(groups(grammar::kMaxGroupNesting)), Endpoint::Completions).grammar_param, "grammar");
  auto [param, message] = refusal(with_grammar(groups(grammar::kMaxGroupNesting + 1)), Endpoint::Completions);
  EXPECT_EQ(param, "grammar");
  EXPECT_NE(message.find("groups nest deeper than 64 levels (the GBNF nesting limit)"), std::string::npos) << message;
  EXPECT_EQ(refusal(with_grammar(groups(17500)), Endpoint::Completions).first, "grammar");
}

TEST(RequestLimits, GrammarRuleChain) {
  auto chain = [](int n) {
    std::string g = "root ::= r1\n";
    for (int i = 1; i + 1 < n; ++i) g += "r" + std::to_string(i) + " ::= r" + std::to_string(i + 1) + "\n";
    return g + "r" + std::to_string(n - 1) + " ::= \"a\"\n";
  };
  (void)parse(with_grammar(chain(grammar::kMaxRuleChain)), Endpoint::Completions);
  auto [param, message] = refusal(with_grammar(chain(grammar::kMaxRuleChain + 1)), Endpoint::Completions);
  EXPECT_EQ(param, "grammar");
  EXPECT_NE(message.find("more than 1000 rules chained"), std::string::npos) << message;
}

// {"$defs": {"d0": LINK(d1), ...}, "$ref": "#/$defs/d0"}: flat JSON, `defs` + 1 levels.
json ref_chain(int defs, const std::function<json(json)>& link = [](json j) { return j; }) {
  json d = json::object();
  for (int i = 0; i + 1 < defs; ++i) d["d" + std::to_string(i)] = link({{"$ref", "#/$defs/d" + std::to_string(i + 1)}});
  d["d" + std::to_string(defs - 1)] = {{"type", "string"}};
  return {{"$defs", d}, {"$ref", "#/$defs/d0"}};
}

std::string with_schema(const json& schema) {
  return json{{"messages", {kUser}},
              {"response_format", {{"type", "json_schema"}, {"json_schema", {{"name", "s"}, {"schema", schema}}}}}}
      .dump();
}

std::string with_tool(const json& parameters) {
  json tool = {{"type", "function"}, {"function", {{"name", "f"}, {"parameters", parameters}}}};
  return json{{"messages", {kUser}}, {"tools", {tool}}, {"tool_choice", "required"}}.dump();
}

TEST(RequestLimits, ResponseFormatRefChain) {
  EXPECT_FALSE(parse(with_schema(ref_chain(grammar::kMaxSchemaDepth - 1))).grammar.empty());
  auto [param, message] = refusal(with_schema(ref_chain(grammar::kMaxSchemaDepth)));
  EXPECT_EQ(param, "response_format.json_schema.schema");
  EXPECT_NE(message.find("#/$defs/d63: the schema nests deeper than 64 levels"), std::string::npos) << message;
  EXPECT_NE(message.find("the schema depth limit"), std::string::npos) << message;
  EXPECT_EQ(refusal(with_schema(ref_chain(4000))).first, "response_format.json_schema.schema");
  // Through anyOf, two levels a link.
  auto any_of = [](json j) { return json{{"anyOf", {j, {{"type", "null"}}}}}; };
  (void)parse(with_schema(ref_chain(grammar::kMaxSchemaDepth / 2, any_of)));
  EXPECT_EQ(refusal(with_schema(ref_chain(4000, any_of))).first, "response_format.json_schema.schema");
}

TEST(RequestLimits, ToolParametersRefChain) {
  EXPECT_FALSE(parse(with_tool(ref_chain(grammar::kMaxSchemaDepth - 1))).grammar.empty());
  auto [param, message] = refusal(with_tool(ref_chain(grammar::kMaxSchemaDepth)));
  EXPECT_EQ(param, "tools[0].function.parameters");
  EXPECT_NE(message.find("the schema nests deeper than 64 levels"), std::string::npos) << message;
  EXPECT_EQ(refusal(with_tool(ref_chain(4000))).first, "tools[0].function.parameters");
}

// Nested `items` cost a JSON level each, so a request meets the body's depth limit
// before the schema's.
TEST(RequestLimits, DeepItemsInARequestMeetTheJsonDepthLimit) {
  json schema = {{"type", "string"}};
  for (int i = 0; i < 40; ++i) schema = {{"type", "array"}, {"items", schema}};
  auto [param, message] = refusal(with_schema(schema));
  EXPECT_NE(message.find("the JSON depth limit"), std::string::npos) << message;
}

TEST(RequestLimits, ModelTextNestedTooDeepIsNotAToolCall) {
  const std::string deep_args = std::string(100000, '[') + std::string(100000, ']');
  const std::string text = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": " + deep_args + "}}\n</tool_call>";
  std::string content;
  EXPECT_FALSE(parse_tool_calls(text, {"f"}, &content));
  const std::string shallow = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": " + nest(kMaxJsonDepth - 3) + "}}\n</tool_call>";
  EXPECT_TRUE(parse_tool_calls(shallow, {"f"}, &content));
}

}  // namespace
}  // namespace seer::server
