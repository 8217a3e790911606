// Tool calls: parsing every family's format, the streaming hold-back, the forcing
// grammar, the prompt seam, and the request fields.
#include "server/tool_calls.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "grammar/gbnf_parser.h"
#include "grammar/grammar_check.h"
#include "grammar/grammar_matcher.h"
#include "server/openai_request.h"
#include "server/tool_prompt.h"
#include "support/test_paths.h"
#include "tokenizer/chat_template.h"

namespace seer::server {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

const std::vector<std::string> kNames = {"get_weather", "add"};

TEST(ToolCalls, HermesQwenFormatWithSeveralCalls) {
  std::string content;
  auto calls = parse_tool_calls(
      "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n"
      "<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}</tool_call>",
      kNames, &content);
  ASSERT_TRUE(calls);
  ASSERT_EQ(calls->size(), 2u);
  EXPECT_EQ(content, "Let me check.");
  EXPECT_EQ((*calls)[0].name, "get_weather");
  EXPECT_EQ(json::parse((*calls)[0].arguments), json::parse(R"({"city": "Paris"})"));
  EXPECT_EQ((*calls)[1].name, "add");
  EXPECT_EQ((*calls)[0].id.rfind("call_", 0), 0u);
  EXPECT_NE((*calls)[0].id, (*calls)[1].id);
}

TEST(ToolCalls, Llama3JsonAndPythonTag) {
  std::string content;
  auto a = parse_tool_calls(R"({"name": "add", "parameters": {"a": 1, "b": 2}})", kNames, &content);
  ASSERT_TRUE(a);
  EXPECT_EQ((*a)[0].name, "add");
  EXPECT_EQ(json::parse((*a)[0].arguments), json::parse(R"({"a": 1, "b": 2})"));
  auto b = parse_tool_calls(R"(<|python_tag|>{"name": "get_weather", "arguments": {"city": "Oslo"}})", kNames, &content);
  ASSERT_TRUE(b);
  EXPECT_EQ((*b)[0].name, "get_weather");
  auto c = parse_tool_calls(R"({"name": "add", "parameters": {"a": 1}}; {"name": "add", "parameters": {"a": 2}})",
                            kNames, &content);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->size(), 2u);
}

TEST(ToolCalls, MistralBothFormats) {
  std::string content;
  auto a = parse_tool_calls(R"([TOOL_CALLS][{"name": "add", "arguments": {"a": 1}}, {"name": "get_weather", "arguments": {}}])",
                            kNames, &content);
  ASSERT_TRUE(a);
  ASSERT_EQ(a->size(), 2u);
  EXPECT_EQ((*a)[1].name, "get_weather");
  auto b = parse_tool_calls(R"([TOOL_CALLS]add[ARGS]{"a": 5}[TOOL_CALLS]get_weather[ARGS]{"city": "Rome"})", kNames,
                            &content);
  ASSERT_TRUE(b);
  ASSERT_EQ(b->size(), 2u);
  EXPECT_EQ(json::parse((*b)[1].arguments)["city"], "Rome");
}

TEST(ToolCalls, PlainTextAndUnknownFunctionsAreNotCalls) {
  std::string content;
  EXPECT_FALSE(parse_tool_calls("The weather is fine.", kNames, &content));
  EXPECT_FALSE(parse_tool_calls(R"({"name": "rm_rf", "arguments": {}})", kNames, &content));
  EXPECT_FALSE(parse_tool_calls(R"({"answer": 42})", kNames, &content));
  EXPECT_FALSE(parse_tool_calls("<tool_call>{not json}</tool_call>", kNames, &content));
}

TEST(ToolCalls, StreamHoldsBackOnlyWhatMayBeACall) {
  ToolCallStream plain(kNames);
  EXPECT_EQ(plain.push("Hello ").content, "Hello ");
  EXPECT_EQ(plain.push("world <tool").content, "world ");  // "<tool" may begin <tool_call>
  EXPECT_EQ(plain.push("bar> ok").content, "<toolbar> ok");
  std::string held;
  bool called = true;
  EXPECT_TRUE(plain.finish(&held, &called).empty());
  EXPECT_FALSE(called);
  EXPECT_EQ(held, "");

  ToolCallStream text_then_call(kNames);
  std::string sent = text_then_call.push("Sure. ").content;
  sent += text_then_call.push("<tool_call>{\"name\": \"add\", \"arguments\": {}}</tool_call>").content;
  EXPECT_EQ(sent, "Sure. ");
  (void)text_then_call.finish(&held, &called);
  EXPECT_TRUE(called);
}

// What a client accumulates from the deltas of a reply fed in pieces of `step` bytes.
struct Streamed {
  std::string content;
  std::vector<ToolCall> calls;  // by index: id, name, concatenated arguments
  int argument_deltas = 0;
  bool called = false;
};

Streamed stream_in_pieces(const std::string& reply, size_t step) {
  ToolCallStream stream(kNames);
  Streamed out;
  auto take = [&](const std::vector<ToolCallDelta>& deltas) {
    for (const ToolCallDelta& d : deltas) {
      if (static_cast<size_t>(d.index) >= out.calls.size()) {
        EXPECT_EQ(static_cast<size_t>(d.index), out.calls.size()) << "indexes come in order";
        EXPECT_FALSE(d.id.empty()) << "a call's first delta carries its id";
        out.calls.push_back({d.id, d.name, ""});
      }
      out.calls[static_cast<size_t>(d.index)].arguments += d.arguments;
      out.argument_deltas += !d.arguments.empty();
    }
  };
  for (size_t i = 0; i < reply.size(); i += step) {
    ToolStreamOutput part = stream.push(reply.substr(i, step));
    out.content += part.content;
    take(part.calls);
  }
  std::string held;
  take(stream.finish(&held, &out.called));
  out.content += held;
  return out;
}

TEST(ToolCalls, StreamsNameThenArgumentsPieceByPieceInEveryFormat) {
  const std::vector<std::string> replies = {
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo {x}\", \"unit\": \"C\"}}\n</tool_call>",
      "<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": [1, 2], \"b\": {\"c\": \"}\\\"\"}}}</tool_call>\n"
      "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}</tool_call>",
      "{\"name\": \"add\", \"parameters\": {\"a\": 1, \"b\": 2}}",
      "<|python_tag|>{\"name\": \"add\", \"parameters\": {\"a\": 3}}",
      "[TOOL_CALLS][{\"name\": \"add\", \"arguments\": {\"a\":1}}, {\"name\": \"get_weather\", \"arguments\": {}}]",
      "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}",
      "Let me check. <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lima\"}}</tool_call>",
  };
  for (const std::string& reply : replies) {
    SCOPED_TRACE(reply);
    std::string content;
    const auto parsed = parse_tool_calls(reply, kNames, &content);
    ASSERT_TRUE(parsed);
    for (size_t step : {1u, 3u, 1000u}) {
      SCOPED_TRACE(step);
      const Streamed s = stream_in_pieces(reply, step);
      EXPECT_TRUE(s.called);
      EXPECT_EQ(s.content.substr(0, content.size()), content);  // streamed content is not trimmed
      ASSERT_EQ(s.calls.size(), parsed->size());
      for (size_t i = 0; i < parsed->size(); ++i) {
        EXPECT_EQ(s.calls[i].name, (*parsed)[i].name);
        EXPECT_EQ(json::parse(s.calls[i].arguments), json::parse((*parsed)[i].arguments)) << s.calls[i].arguments;
      }
      // Byte by byte, a call's arguments arrive in as many pieces as they have bytes.
      if (step == 1) {
        EXPECT_GT(s.argument_deltas, static_cast<int>(parsed->size()));
      }
    }
  }
}

TEST(ToolCalls, WhatTheScannerCannotStreamComesWholeAtTheEnd) {
  // Arguments before the name, or given as a JSON string: sent whole at the end.
  for (std::string reply : {std::string("{\"arguments\": {\"a\": 1}, \"name\": \"add\"}"),
                            std::string("{\"name\": \"add\", \"arguments\": \"{\\\"a\\\": 1}\"}")}) {
    SCOPED_TRACE(reply);
    const Streamed s = stream_in_pieces(reply, 1);
    EXPECT_TRUE(s.called);
    ASSERT_EQ(s.calls.size(), 1u);
    EXPECT_EQ(s.calls[0].name, "add");
    EXPECT_EQ(json::parse(s.calls[0].arguments), json::parse(R"({"a": 1})"));
  }
  // An unknown function is not a call: no deltas, the text is content.
  const Streamed unknown = stream_in_pieces(R"({"name": "rm_rf", "arguments": {}})", 1);
  EXPECT_FALSE(unknown.called);
  EXPECT_TRUE(unknown.calls.empty());
  EXPECT_EQ(unknown.content, R"({"name": "rm_rf", "arguments": {}})");
}

TEST(ToolCalls, ForcingGrammarAdmitsOnlyValidCalls) {
  std::vector<ToolFunction> tools = {
      {"get_weather", "", ordered_json::parse(R"({"type": "object", "properties": {"city": {"type": "string"},
          "unit": {"enum": ["C", "F"]}}, "required": ["city", "unit"], "additionalProperties": false})")},
      {"add", "", nullptr}};
  auto matches = [](const grammar::Grammar& g, const std::string& text) {
    grammar::StackMachine m(g);
    grammar::MatchState s = m.initial();
    return m.accept(s, text) && grammar::StackMachine::can_end(s);
  };
  const grammar::Grammar any = grammar::parse_gbnf(tool_call_grammar(tools, {ToolChoiceMode::Required, ""}, true));
  EXPECT_TRUE(matches(any, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":\"X\",\"unit\":\"C\"}}\n</tool_call>"));
  EXPECT_TRUE(matches(any, "<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\":1}}\n</tool_call>\n"
                           "<tool_call>\n{\"name\": \"add\", \"arguments\": {}}\n</tool_call>"));
  EXPECT_FALSE(matches(any, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":\"X\",\"unit\":\"K\"}}\n</tool_call>"));
  EXPECT_FALSE(matches(any, "<tool_call>\n{\"name\": \"nope\", \"arguments\": {}}\n</tool_call>"));
  const grammar::Grammar named = grammar::parse_gbnf(tool_call_grammar(tools, {ToolChoiceMode::Named, "add"}, false));
  EXPECT_TRUE(matches(named, "<tool_call>\n{\"name\": \"add\", \"arguments\": {}}\n</tool_call>"));
  EXPECT_FALSE(matches(named, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":\"X\",\"unit\":\"C\"}}\n</tool_call>"));
  EXPECT_FALSE(matches(named, "<tool_call>\n{\"name\": \"add\", \"arguments\": {}}\n</tool_call>\n"
                              "<tool_call>\n{\"name\": \"add\", \"arguments\": {}}\n</tool_call>"));  // not parallel
}

TEST(ToolCalls, RequestRoundTripRendersToolsCallsAndResults) {
  ParseLimits limits;
  limits.vocab_size = 512;
  ApiRequest r = parse_api_request(R"({"messages": [
      {"role": "system", "content": "Be brief."},
      {"role": "user", "content": "Weather in Paris?"},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
        "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp\": 21}"}],
      "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Current weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}],
      "tool_choice": "auto", "parallel_tool_calls": false})",
                                   Endpoint::ChatCompletions, limits);
  EXPECT_EQ(r.tools.size(), 1u);
  EXPECT_EQ(r.tool_choice.mode, ToolChoiceMode::Auto);
  EXPECT_FALSE(r.parallel_tool_calls);
  EXPECT_TRUE(r.grammar.empty());  // auto: the model chooses
  ASSERT_EQ(r.message_tools.size(), 4u);
  EXPECT_EQ(r.message_tools[2].tool_calls.at(0).name, "get_weather");
  EXPECT_EQ(r.message_tools[3].tool_call_id, "call_1");
  auto msgs = prompt_messages_with_tools(r.messages, r.message_tools, r.tools, r.tool_choice);
  ASSERT_EQ(msgs.size(), 4u);
  EXPECT_EQ(msgs[0].role, "system");
  EXPECT_EQ(msgs[0].content.rfind("Be brief.", 0), 0u);
  EXPECT_NE(msgs[0].content.find("\"name\":\"get_weather\""), std::string::npos);
  EXPECT_NE(msgs[2].content.find("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Paris\"}}"),
            std::string::npos);
  EXPECT_EQ(msgs[3].role, "user");
  EXPECT_EQ(msgs[3].content, "<tool_response>\n{\"temp\": 21}\n</tool_response>");

  ApiRequest forced = parse_api_request(R"({"messages": [{"role": "user", "content": "x"}],
      "tools": [{"type": "function", "function": {"name": "f"}}], "tool_choice": "required"})",
                                        Endpoint::ChatCompletions, limits);
  EXPECT_FALSE(forced.grammar.empty());
  EXPECT_EQ(forced.grammar_param, "tools");
  ApiRequest none = parse_api_request(R"({"messages": [{"role": "user", "content": "x"}],
      "tools": [{"type": "function", "function": {"name": "f"}}], "tool_choice": "none"})",
                                      Endpoint::ChatCompletions, limits);
  EXPECT_EQ(prompt_messages_with_tools(none.messages, none.message_tools, none.tools, none.tool_choice).size(), 1u);
}

ChatTemplate fixture_template(const std::string& family, const ChatTokens& tokens) {
  std::ifstream in(testing::source_dir() + "/tests/data/chat_templates/" + family + "/template.jinja");
  std::stringstream text;
  text << in.rdbuf();
  return ChatTemplate::from_model(text.str(), tokens);
}

// A model template that takes tools renders them, the calls and the replies itself;
// one that does not (Phi-3) gets the Hermes-style preamble.
TEST(ToolCalls, ToolsGoThroughTheModelsOwnTemplateWhenItTakesThem) {
  ParseLimits limits;
  limits.vocab_size = 512;
  ApiRequest r = parse_api_request(R"({"messages": [
      {"role": "user", "content": "Weather in Paris?"},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
        "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp\": 21}"}],
      "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Current weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]})",
                                   Endpoint::ChatCompletions, limits);
  const ChatTemplate qwen = fixture_template("qwen2.5", {"", "<|im_end|>"});
  ASSERT_TRUE(qwen.takes_tools()) << qwen.fallback_reason();
  const std::string p = render_chat_prompt(qwen, r.messages, r.message_tools, r.tools, r.tool_choice);
  EXPECT_NE(p.find("<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"get_weather\""), std::string::npos) << p;
  EXPECT_NE(p.find("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"),
            std::string::npos) << p;
  EXPECT_NE(p.find("<tool_response>\n{\"temp\": 21}\n</tool_response>"), std::string::npos) << p;
  EXPECT_EQ(p.find("# Tools\n\nYou can call functions"), std::string::npos) << p;  // not the preamble
  EXPECT_EQ(p.substr(p.size() - 22), "<|im_start|>assistant\n");

  const ChatTemplate phi3 = fixture_template("phi-3", {"<s>", "<|endoftext|>"});
  ASSERT_TRUE(phi3.is_model_template()) << phi3.fallback_reason();
  EXPECT_FALSE(phi3.takes_tools());
  const std::string q = render_chat_prompt(phi3, r.messages, r.message_tools, r.tools, r.tool_choice);
  EXPECT_NE(q.find("# Tools\n\nYou can call functions"), std::string::npos) << q;
  EXPECT_NE(q.find("<tool_response>"), std::string::npos) << q;
}

TEST(StructuredRequest, ResponseFormatsAndGrammarBecomeGbnf) {
  ParseLimits limits;
  limits.vocab_size = 512;
  ApiRequest a = parse_api_request(R"({"prompt": "x", "response_format": {"type": "json_object"}})",
                                   Endpoint::Completions, limits);
  EXPECT_NE(a.grammar.find("root ::= object"), std::string::npos);
  ApiRequest b = parse_api_request(R"({"prompt": "x", "response_format": {"type": "json_schema", "json_schema":
      {"name": "p", "strict": true, "schema": {"type": "object", "properties": {"z": {"type": "integer"},
       "a": {"type": "string"}}, "required": ["z", "a"], "additionalProperties": false}}}})",
                                   Endpoint::Completions, limits);
  // The client's property order (z before a) survives into the grammar.
  const grammar::Grammar g = grammar::parse_gbnf(b.grammar);
  grammar::StackMachine m(g);
  grammar::MatchState s = m.initial();
  EXPECT_TRUE(m.accept(s, R"({"z":1,"a":"b"})") && grammar::StackMachine::can_end(s));
  s = m.initial();
  EXPECT_FALSE(m.accept(s, R"({"z": 1)"));  // compact unless the request asks for flexible whitespace
  ApiRequest flexible = parse_api_request(R"({"prompt": "x", "json_whitespace": "flexible", "response_format": {"type": "json_object"}})",
                                          Endpoint::Completions, limits);
  EXPECT_TRUE(grammar::GrammarChecker(flexible.grammar).accepts(R"({"z": 1, "a": "b"})"));
  ApiRequest c = parse_api_request(R"({"prompt": "x", "grammar": "root ::= \"yes\" | \"no\""})", Endpoint::Completions, limits);
  EXPECT_EQ(c.grammar_param, "grammar");
  ApiRequest d = parse_api_request(R"({"prompt": "x", "response_format": {"type": "text"}})", Endpoint::Completions, limits);
  EXPECT_TRUE(d.grammar.empty());
}

}  // namespace
}  // namespace seer::server
