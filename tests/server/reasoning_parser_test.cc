#include "server/reasoning_parser.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "server/tool_calls.h"

namespace seer::server {
namespace {

const ReasoningTags kThink{"<think>", "</think>"};

// Feeds `text` in chunks of `size` bytes (one token each) and joins what comes out.
struct Fed {
  ReasoningSplit all;
  int32_t reasoning_tokens = 0;
};
Fed feed_in_chunks(std::string_view text, size_t size, bool starts_inside = false) {
  ReasoningSplitter s(kThink, starts_inside);
  Fed f;
  for (size_t i = 0; i < text.size(); i += size) {
    ReasoningSplit part = s.push(text.substr(i, size), 1);
    f.all.reasoning += part.reasoning;
    f.all.content += part.content;
  }
  ReasoningSplit rest = s.finish();
  f.all.reasoning += rest.reasoning;
  f.all.content += rest.content;
  f.reasoning_tokens = s.reasoning_tokens();
  return f;
}

TEST(ReasoningParser, SplitsThinkBlockFromAnswer) {
  ReasoningSplit s = split_reasoning("<think>\nTwo plus two is four.\n</think>\n\nIt is 4.", kThink, false);
  EXPECT_EQ(s.reasoning, "Two plus two is four.");
  EXPECT_EQ(s.content, "It is 4.");
}

TEST(ReasoningParser, EveryChunkSizeGivesTheSameSplit) {
  const std::string text = "  <think>\nfirst, add.\n\nthen check < and </ signs\n</think>\n\nThe answer: 4 <think>x</think>";
  for (size_t size = 1; size <= text.size(); ++size) {
    Fed f = feed_in_chunks(text, size);
    EXPECT_EQ(f.all.reasoning, "first, add.\n\nthen check < and </ signs") << "chunks of " << size;
    EXPECT_EQ(f.all.content, "The answer: 4 <think>x</think>") << "chunks of " << size;  // later tags are text
  }
}

TEST(ReasoningParser, TagSplitAcrossChunksIsHeldUntilKnown) {
  ReasoningSplitter s(kThink, false);
  EXPECT_EQ(s.push("<th").content, "");
  EXPECT_FALSE(s.in_reasoning());
  EXPECT_EQ(s.push("ink>abc </").reasoning, "abc");  // the space before a possible tag is held too
  ReasoningSplit p = s.push("thin");
  EXPECT_EQ(p.reasoning, "");
  p = s.push("g!");  // not the close tag after all
  EXPECT_EQ(p.reasoning, " </thing!");
  p = s.push("</think>ok");
  EXPECT_EQ(p.content, "ok");
  EXPECT_FALSE(s.in_reasoning());
}

TEST(ReasoningParser, NoTagsIsAllContentUntouched) {
  Fed f = feed_in_chunks("\n  Hello <thinking> world", 3);
  EXPECT_EQ(f.all.reasoning, "");
  EXPECT_EQ(f.all.content, "\n  Hello <thinking> world");
  EXPECT_EQ(f.reasoning_tokens, 0);
  // A reply that is only the beginning of a tag stays text.
  EXPECT_EQ(split_reasoning("<thi", kThink, false).content, "<thi");
}

TEST(ReasoningParser, UnterminatedThinkIsAllReasoning) {
  Fed f = feed_in_chunks("<think>\nstill going </thi", 2);
  EXPECT_EQ(f.all.reasoning, "still going </thi");
  EXPECT_EQ(f.all.content, "");
  EXPECT_EQ(f.reasoning_tokens, 13);  // every chunk of 2 bytes
}

TEST(ReasoningParser, PromptThatOpensTheTagStartsInside) {
  EXPECT_TRUE(prompt_opens_reasoning("<｜Assistant｜><think>\n", kThink));
  EXPECT_FALSE(prompt_opens_reasoning("<｜Assistant｜><think>\n</think>", kThink));
  EXPECT_FALSE(prompt_opens_reasoning("user: what is <think>?\nassistant:", kThink));
  EXPECT_FALSE(prompt_opens_reasoning("<|im_start|>assistant\n", kThink));
  Fed f = feed_in_chunks("weigh it up\n</think>\n\nYes.", 4, /*starts_inside=*/true);
  EXPECT_EQ(f.all.reasoning, "weigh it up");
  EXPECT_EQ(f.all.content, "Yes.");
  // A model that writes the open tag again anyway.
  EXPECT_EQ(split_reasoning("\n<think>\nhm</think>ok", kThink, true).reasoning, "hm");
}

TEST(ReasoningParser, CountsTheTokensOfReasoningAndTags) {
  ReasoningSplitter s(kThink, false);
  (void)s.push("<", 1);
  (void)s.push("think>", 1);  // the tag held over two tokens: both count
  (void)s.push("a b c", 3);
  (void)s.push("</think>\n\nHi", 2);
  (void)s.push(" there", 1);
  (void)s.finish();
  EXPECT_EQ(s.reasoning_tokens(), 7);
  ReasoningSplitter plain(kThink, false);
  (void)plain.push("<", 1);
  (void)plain.push("b>", 1);
  EXPECT_EQ(plain.reasoning_tokens(), 0);
}

TEST(ReasoningParser, ToolCallAfterTheThinkIsInTheContent) {
  const std::string text =
      "<think>I should look it up.</think>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
      "</tool_call>";
  Fed f = feed_in_chunks(text, 5);
  EXPECT_EQ(f.all.reasoning, "I should look it up.");
  std::string before;
  auto calls = parse_tool_calls(f.all.content, {"get_weather"}, &before);
  ASSERT_TRUE(calls);
  ASSERT_EQ(calls->size(), 1u);
  EXPECT_EQ((*calls)[0].name, "get_weather");
  EXPECT_EQ(before, "");
}

TEST(ReasoningParser, CommandR7bTags) {
  auto tags = reasoning_tags_of("{{ '<|START_THINKING|>' + thought + '<|END_THINKING|>' }} <think>");
  ASSERT_TRUE(tags);
  EXPECT_EQ(tags->open, "<|START_THINKING|>");
  EXPECT_EQ(split_reasoning("<|START_THINKING|>plan<|END_THINKING|>go", *tags, false).content, "go");
}

// Every family of the fixture set whose template prints think tags is found, and
// the others are not.
TEST(ReasoningParser, FixtureTemplatesWithThinkTags) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(SEER_SOURCE_DIR) / "tests/data/chat_templates";
  auto tags_of = [&](const std::string& family) {
    std::ifstream in(root / family / "template.jinja", std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return reasoning_tags_of(ss.str());
  };
  for (const char* f : {"qwen3", "qwq", "deepseek-r1-distill-qwen", "deepseek-r1-distill-llama", "granite-3.3",
                        "glm-4.6", "smollm3", "nemotron-nano-v2", "minicpm5", "deepseek-v3.1"}) {
    auto t = tags_of(f);
    ASSERT_TRUE(t) << f;
    EXPECT_EQ(t->open, "<think>") << f;
  }
  EXPECT_EQ(tags_of("command-r7b")->open, "<|START_THINKING|>");
  for (const char* f : {"llama-3.1", "qwen2.5", "mistral-nemo", "gemma-3", "gpt-oss"}) EXPECT_FALSE(tags_of(f)) << f;
}

}  // namespace
}  // namespace seer::server
