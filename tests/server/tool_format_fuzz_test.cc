// Property test: arguments whose strings hold every format's delimiters, quotes,
// braces, escapes, newlines and non-ASCII text come back intact from a call rendered
// in each format, read whole and streamed in random pieces. (A delimiter inside a
// string must never end or lose a call.)
#include <gtest/gtest.h>

#include <random>

#include "tool_format_helpers.h"

namespace seer::server {
namespace {

using nlohmann::ordered_json;
using testing::PlainCall;

const std::vector<std::string> kPieces = {
    "</tool_call>", "<tool_call>", "<|tool_call|>", "functools[", ")]", "\"}", "\\", "\\\"", "\"", "'", "{", "}", "[",
    "]", "(", ")", ",", "=", ";", ":", "\n", "\n\n", " ", "\t", "\r", "\x01", "é", "😀", "中文", "[TOOL_CALLS]", "[ARGS]",
    "<|python_tag|>", "<function=add>", "<parameter=text>", "</parameter>", "</function>", "<TOOLCALL>", "</TOOLCALL>",
    "<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>", "```json", "```",
    "{\"name\": \"add\", \"arguments\": {}}", "add(text=1)", "\\u0041", "\\n", "None", "True", "abc", "x"};

std::string random_text(std::mt19937& rng) {
  std::string s;
  const size_t n = rng() % 12;
  for (size_t i = 0; i < n; ++i) s += kPieces[rng() % kPieces.size()];
  return s;
}

const std::vector<ToolFunction> kTools = {
    {"add", "", ordered_json::parse(R"({"type": "object", "properties": {"text": {"type": "string"},
        "n": {"type": "integer"}, "list": {"type": "array"}, "nested": {"type": "object"}}})")},
    {"get_weather", "", ordered_json::parse(R"({"type": "object", "properties": {"city": {"type": "string"}}})")}};

std::vector<PlainCall> random_calls(std::mt19937& rng) {
  std::vector<PlainCall> calls;
  calls.push_back({"add", {{"text", random_text(rng)},
                           {"n", static_cast<int>(rng() % 2001) - 1000},
                           {"list", {random_text(rng), random_text(rng)}},
                           {"nested", {{random_text(rng), random_text(rng)}}}}});
  calls.push_back({"get_weather", {{"city", random_text(rng)}}});
  return calls;
}

// Qwen3-Coder's values are raw text: one that holds </parameter> followed by the
// next tag is where the value itself would end, which no reader can tell apart.
bool qwen3_coder_can_write(const std::vector<PlainCall>& calls) {
  for (const PlainCall& c : calls)
    for (const auto& [k, v] : c.arguments.items()) {
      const std::string text = (v.is_string() ? v.get<std::string>() : v.dump()) + "\n";
      for (size_t at = text.find("</parameter>"); at != std::string::npos; at = text.find("</parameter>", at + 1)) {
        size_t after = text.find_first_not_of(" \t\r\n", at + 12);
        std::string_view rest = after == std::string::npos ? "" : std::string_view(text).substr(after);
        if (rest.empty() || rest.rfind("<parameter=", 0) == 0 || rest.rfind("</function>", 0) == 0) return false;
      }
    }
  return true;
}

std::vector<size_t> random_cuts(const std::string& text, std::mt19937& rng) {
  std::vector<size_t> cuts;
  for (size_t at : testing::char_boundaries(text))
    if (rng() % 7 == 0) cuts.push_back(at);
  return cuts;
}

TEST(ToolFormatFuzz, DelimitersInsideArgumentsNeverLoseACall) {
  std::mt19937 rng(20261202);
  int checked = 0, skipped = 0;
  for (int round = 0; round < 150; ++round) {
    const std::vector<PlainCall> calls = random_calls(rng);
    for (const ToolFormat* f : all_tool_formats()) {
      const std::string name(f->name());
      if (name == "qwen3_coder" && !qwen3_coder_can_write(calls)) {
        ++skipped;
        continue;
      }
      const std::vector<PlainCall> want =
          name == "llama3_json" ? std::vector<PlainCall>{calls[0]} : calls;  // one call a turn
      const std::string reply = testing::render_calls(name, want);
      auto got = f->parse(reply, kTools, nullptr);
      ASSERT_TRUE(got) << name << ": " << reply;
      ASSERT_EQ(got->size(), want.size()) << name << ": " << reply;
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ((*got)[i].name, want[i].name) << name;
        EXPECT_EQ(nlohmann::json::parse((*got)[i].arguments), nlohmann::json(want[i].arguments)) << name << ": " << reply;
      }
      for (int chunking = 0; chunking < 2; ++chunking) {
        auto streamed = testing::stream_reply(*f, kTools, reply, random_cuts(reply, rng));
        EXPECT_TRUE(streamed.called && streamed.ok) << name << ": " << reply;
        ASSERT_EQ(streamed.calls.size(), want.size()) << name << ": " << reply;
        for (size_t i = 0; i < want.size(); ++i) {
          EXPECT_EQ(streamed.calls[i].name, want[i].name) << name;
          EXPECT_EQ(nlohmann::json(streamed.calls[i].arguments), nlohmann::json(want[i].arguments)) << name << ": " << reply;
        }
      }
      ++checked;
    }
  }
  // The exclusion is rare: the property is checked for nearly every Qwen3-Coder case.
  EXPECT_LT(skipped, 15);
  EXPECT_GT(checked, 150 * 11);
}

}  // namespace
}  // namespace seer::server
