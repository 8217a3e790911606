// Every tool-call format (server/tool_formats/): a reply in its canonical rendering is
// read back whole and streamed cut at every point, the same calls either way; its
// forcing grammar admits that rendering and not another format's; and what is
// particular to each (Qwen3-Coder's typed parameters, Python literals, the fallback
// to the Hermes / Llama / Mistral reading).
#include <gtest/gtest.h>

#include "server/api_error.h"
#include "server/tool_calls.h"
#include "tool_format_helpers.h"

namespace seer::server {
namespace {

using nlohmann::ordered_json;
using testing::PlainCall;
using testing::render_calls;
using testing::stream_reply;

const std::vector<ToolFunction> kTools = {
    {"get_weather", "", ordered_json::parse(R"({"type": "object", "properties": {"city": {"type": "string"},
        "unit": {"enum": ["C", "F"]}, "days": {"type": "integer"}}, "required": ["city", "unit"]})")},
    {"add", "", ordered_json::parse(R"({"type": "object", "properties": {"a": {"type": "integer"},
        "b": {"type": "array"}, "c": {"type": "object"}}})")}};

const std::vector<PlainCall> kCalls = {
    {"get_weather", ordered_json::parse(R"({"city": "Paris \"centre\"", "unit": "C", "days": 3})")},
    {"add", ordered_json::parse(R"({"a": 1, "b": [2.5, "x"], "c": {"d": null}})")}};

// Formats whose calls are the whole reply (no marker may follow text).
bool whole_reply(std::string_view f) { return f == "pythonic" || f == "llama3_json" || f == "generic_json"; }

void expect_calls(const std::vector<PlainCall>& want, const std::vector<ToolCall>& got, const std::string& where) {
  ASSERT_EQ(got.size(), want.size()) << where;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].name, want[i].name) << where;
    EXPECT_EQ(nlohmann::json::parse(got[i].arguments), nlohmann::json(want[i].arguments)) << where << ": " << got[i].arguments;
  }
}

void expect_streamed(const std::vector<PlainCall>& want, const testing::StreamedReply& got, const std::string& content,
                     const std::string& where) {
  EXPECT_TRUE(got.called) << where;
  EXPECT_TRUE(got.ok) << where;
  EXPECT_EQ(got.content, content) << where;
  ASSERT_EQ(got.calls.size(), want.size()) << where;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got.calls[i].name, want[i].name) << where;
    EXPECT_EQ(nlohmann::json(got.calls[i].arguments), nlohmann::json(want[i].arguments)) << where;
  }
}

TEST(ToolFormats, EachReadsItsRenderingWholeAndStreamedCutAnywhere) {
  for (const ToolFormat* f : all_tool_formats()) {
    const std::string name(f->name());
    const std::string prefix = whole_reply(name) ? "" : "Let me look that up.\n";
    const std::string reply = prefix + render_calls(name, kCalls);
    std::string content;
    auto calls = f->parse(reply, kTools, &content);
    ASSERT_TRUE(calls) << name << ": " << reply;
    expect_calls(kCalls, *calls, name);
    EXPECT_EQ(content, whole_reply(name) ? "" : "Let me look that up.") << name;
    const std::string streamed_content = whole_reply(name) ? "" : "Let me look that up.";
    for (size_t cut : testing::char_boundaries(reply)) {
      auto got = stream_reply(*f, kTools, reply, {cut});
      // Content goes out as it comes; held text that turned out plain at the end.
      got.content.erase(got.content.find_last_not_of(" \n") + 1);
      expect_streamed(kCalls, got, streamed_content, name + " cut at " + std::to_string(cut));
    }
    auto bytewise = stream_reply(*f, kTools, reply, testing::char_boundaries(reply));
    bytewise.content.erase(bytewise.content.find_last_not_of(" \n") + 1);
    expect_streamed(kCalls, bytewise, streamed_content, name + " character by character");
  }
}

TEST(ToolFormats, StreamsTheNameBeforeTheCallEnds) {
  // Fed one character at a time, the first call's name must go out while its
  // arguments are still arriving (not all at the end).
  for (const ToolFormat* f : all_tool_formats()) {
    const std::string name(f->name());
    const std::string reply = render_calls(name, {kCalls[0]});
    ToolCallStream stream(*f, kTools);
    size_t named_at = std::string::npos;
    for (size_t i = 0; i < reply.size() && named_at == std::string::npos; ++i)
      for (const ToolCallDelta& d : stream.push(reply.substr(i, 1)).calls)
        if (!d.name.empty()) named_at = i;
    EXPECT_LT(named_at, reply.find("Paris")) << name;
  }
}

TEST(ToolFormats, Qwen3CoderStreamsAStringParameterAsItArrives) {
  const std::string body = "def f():\n    return \"</parameter> is not the end\"\n";
  const std::string reply = "<tool_call>\n<function=get_weather>\n<parameter=city>\n" + body +
                            "\n</parameter>\n<parameter=unit>\nC\n</parameter>\n</function>\n</tool_call>";
  ToolCallStream stream(qwen3_coder_tool_format(), kTools);
  int fragments_before_end = 0;
  std::string args;
  const size_t value_end = reply.find("\n</parameter>\n<parameter=unit>");
  for (size_t i = 0; i < reply.size(); ++i)
    for (const ToolCallDelta& d : stream.push(reply.substr(i, 1)).calls) {
      if (!d.arguments.empty() && i < value_end) ++fragments_before_end;
      args += d.arguments;
    }
  bool called = false;
  std::string held;
  for (const ToolCallDelta& d : stream.finish(&held, &called)) args += d.arguments;
  EXPECT_TRUE(called);
  EXPECT_GT(fragments_before_end, 20);
  EXPECT_EQ(ordered_json::parse(args), ordered_json({{"city", body}, {"unit", "C"}}));
}

TEST(ToolFormats, ForcingGrammarAdmitsItsOwnRenderingOnly) {
  const std::vector<PlainCall> calls = {
      {"get_weather", ordered_json::parse(R"({"city": "Oslo", "unit": "F", "days": 2})")},
      {"add", ordered_json::parse(R"({"a": 1})")}};
  const std::vector<PlainCall> bad_enum = {{"get_weather", ordered_json::parse(R"({"city": "Oslo", "unit": "K"})")}};
  const std::vector<PlainCall> no_unit = {{"get_weather", ordered_json::parse(R"({"city": "Oslo"})")}};
  for (const ToolFormat* f : all_tool_formats()) {
    const std::string name(f->name());
    const bool one_call = name == "llama3_json";
    const std::vector<PlainCall> mine = one_call ? std::vector<PlainCall>{calls[0]} : calls;
    const std::string any = f->forced_call_grammar(kTools, {ToolChoiceMode::Required, ""}, true, grammar::JsonWhitespace::Compact);
    EXPECT_TRUE(testing::grammar_accepts(any, render_calls(name, mine))) << name << "\n" << render_calls(name, mine) << "\n" << any;
    EXPECT_TRUE(testing::grammar_accepts(any, render_calls(name, {calls[0]}))) << name;
    EXPECT_FALSE(testing::grammar_accepts(any, render_calls(name, bad_enum))) << name;
    EXPECT_FALSE(testing::grammar_accepts(any, render_calls(name, no_unit))) << name;
    const std::string other = name == "hermes" ? "qwen3_coder" : "hermes";
    EXPECT_FALSE(testing::grammar_accepts(any, render_calls(other, {calls[0]}))) << name << " admits " << other;
    const std::string named = f->forced_call_grammar(kTools, {ToolChoiceMode::Named, "add"}, false, grammar::JsonWhitespace::Compact);
    EXPECT_TRUE(testing::grammar_accepts(named, render_calls(name, {calls[1]}))) << name;
    EXPECT_FALSE(testing::grammar_accepts(named, render_calls(name, {calls[0]}))) << name;
    if (!one_call) {
      EXPECT_FALSE(testing::grammar_accepts(named, render_calls(name, {calls[1], calls[1]}))) << name;
    }
    // What the grammar admits, the format reads back.
    auto back = f->parse(render_calls(name, mine), kTools, nullptr);
    ASSERT_TRUE(back) << name;
    expect_calls(mine, *back, name);
  }
}

TEST(ToolFormats, ForcingGrammarNamesTheSchemaItCannotCompile) {
  const std::vector<ToolFunction> tools = {
      {"ok", "", nullptr},
      {"bad", "", ordered_json::parse(R"({"type": "object", "properties": {"p": {"type": "string", "pattern": "(a)\\1"}}})")}};
  for (const ToolFormat* f : all_tool_formats()) {
    try {
      (void)f->forced_call_grammar(tools, {ToolChoiceMode::Required, ""}, true, grammar::JsonWhitespace::Compact);
      ADD_FAILURE() << f->name() << " compiled a pattern with a back-reference";
    } catch (const ApiError& e) {
      EXPECT_NE(std::string(e.body()).find("tools[1].function.parameters"), std::string::npos) << f->name() << e.body();
    }
  }
}

TEST(ToolFormats, Qwen3CoderParametersTakeTheirSchemaTypes) {
  const std::vector<ToolFunction> tools = {
      {"f", "", ordered_json::parse(R"({"type": "object", "properties": {"n": {"type": "integer"},
          "s": {"type": "string"}, "o": {"type": "object"}, "b": {"type": "boolean"}, "x": {"type": ["number", "null"]},
          "free": {}}})")}};
  const std::string reply =
      "<tool_call>\n<function=f>\n<parameter=n>\n42\n</parameter>\n<parameter=s>\n42\n</parameter>\n"
      "<parameter=o>\n{\"k\": [1, \"</parameter>\"]}\n</parameter>\n<parameter=b>\ntrue\n</parameter>\n"
      "<parameter=x>\nnot a number\n</parameter>\n<parameter=free>\n</parameter> inside </function> text\n\n</parameter>\n"
      "</function>\n</tool_call>";
  auto calls = qwen3_coder_tool_format().parse(reply, tools, nullptr);
  ASSERT_TRUE(calls);
  EXPECT_EQ(ordered_json::parse((*calls)[0].arguments),
            ordered_json::parse(R"({"n": 42, "s": "42", "o": {"k": [1, "</parameter>"]}, "b": true,
                                    "x": "not a number", "free": "</parameter> inside </function> text\n"})"));
  // Without <tool_call>, and with no parameters.
  calls = qwen3_coder_tool_format().parse("<function=f>\n</function>", tools, nullptr);
  ASSERT_TRUE(calls);
  EXPECT_EQ((*calls)[0].arguments, "{}");
  EXPECT_FALSE(qwen3_coder_tool_format().parse("<tool_call>\n<function=nope>\n</function>\n</tool_call>", tools, nullptr));
  EXPECT_FALSE(qwen3_coder_tool_format().parse("<tool_call>\n<function=f>\n<parameter=n>\n1\n", tools, nullptr));
}

TEST(ToolFormats, PythonicReadsPythonLiterals) {
  const std::vector<ToolFunction> tools = {{"f", "", nullptr}, {"g", "", nullptr}};
  auto calls = pythonic_tool_format().parse(
      R"( [f(a='it\'s', b="tab\there", c=True, d=None, e=-1.5e3, l=[1, (2, 3)], m={'k': False}, u="\u00e9\U0001F600\xe9"), g()] )",
      tools, nullptr);
  ASSERT_TRUE(calls);
  ASSERT_EQ(calls->size(), 2u);
  EXPECT_EQ(ordered_json::parse((*calls)[0].arguments),
            ordered_json::parse("{\"a\": \"it's\", \"b\": \"tab\\there\", \"c\": true, \"d\": null, \"e\": -1500.0, "
                                "\"l\": [1, [2, 3]], \"m\": {\"k\": false}, \"u\": \"\u00e9\U0001F600\u00e9\"}"));
  EXPECT_EQ((*calls)[1].arguments, "{}");
  for (const char* not_call : {"[f(1)]", "[f(a=1)] and more", "[h(a=1)]", "[1, 2]", "[f(a=1"})
    EXPECT_FALSE(pythonic_tool_format().parse(not_call, tools, nullptr)) << not_call;
}

TEST(ToolFormats, AnotherFamilysCallsAreStillRead) {
  // A Qwen3-Coder or pythonic model writing Hermes JSON loses nothing, streamed or not.
  const std::string hermes = render_calls("hermes", kCalls);
  for (const ToolFormat* f : {&qwen3_coder_tool_format(), &pythonic_tool_format(), &granite_tool_format()}) {
    auto calls = f->parse(hermes, kTools, nullptr);
    ASSERT_TRUE(calls) << f->name();
    expect_calls(kCalls, *calls, std::string(f->name()));
    expect_streamed(kCalls, stream_reply(*f, kTools, hermes, testing::char_boundaries(hermes)), "",
                    std::string(f->name()));
  }
}

TEST(ToolFormats, JsonListsAreReadWithoutTheirMarker) {
  // Granite's <|tool_call|> is a control token: decoded to no text, the list remains.
  const std::string bare = testing::json_list(kCalls);
  for (const ToolFormat* f : {&granite_tool_format(), &functools_tool_format(), &nemotron_tool_format()}) {
    auto calls = f->parse(bare, kTools, nullptr);
    ASSERT_TRUE(calls) << f->name();
    expect_calls(kCalls, *calls, std::string(f->name()));
    expect_streamed(kCalls, stream_reply(*f, kTools, bare, testing::char_boundaries(bare)), "", std::string(f->name()));
  }
  EXPECT_FALSE(granite_tool_format().parse("Some text [" + bare.substr(1), kTools, nullptr));
}

TEST(ToolFormats, PlainTextIsContentInEveryFormat) {
  const std::string text = "[1] says: use <b>bold</b> and {braces}; functools is a module.";
  for (const ToolFormat* f : all_tool_formats()) {
    EXPECT_FALSE(f->parse(text, kTools, nullptr)) << f->name();
    auto got = stream_reply(*f, kTools, text, testing::char_boundaries(text));
    EXPECT_FALSE(got.called) << f->name();
    EXPECT_EQ(got.content, text) << f->name();
    EXPECT_TRUE(got.calls.empty()) << f->name();
  }
}

}  // namespace
}  // namespace seer::server
