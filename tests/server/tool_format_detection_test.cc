// Which tool-call format each chat template of the fixture set
// (tests/data/chat_templates/<family>/template.jinja) gets, plus the pythonic Llama 3.2
// template written for these tests (tests/data/tool_templates/). Every family in the
// fixture set is listed, so a new fixture must be given its format here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "server/tool_formats/registry.h"
#include "tokenizer/chat_template.h"

namespace seer::server {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string format_of(const fs::path& template_file) {
  return std::string(tool_format_of(ChatTemplate::from_model(read_file(template_file), ChatTokens{"<s>", "</s>"})).name());
}

// Families whose templates take no tools and show no calls get Hermes through seer's
// tools preamble; those that take tools but show no format seer reads get the
// generic JSON object.
const std::map<std::string, std::string> kFormats = {
    {"apertus", "generic_json"},
    {"command-r-plus-tool-use", "generic_json"},
    {"command-r7b", "generic_json"},
    {"deepseek-r1-distill-llama", "deepseek_r1"},
    {"deepseek-r1-distill-qwen", "deepseek_r1"},
    {"deepseek-v3.1", "deepseek_v3"},
    {"devstral-small", "mistral_args"},
    {"firefunction-v2", "hermes"},  // seer cannot render it (nor could the references): built-in format
    {"functionary-v3.2", "generic_json"},
    {"gemma-2", "hermes"},
    {"gemma-3", "hermes"},
    {"gemma-4", "generic_json"},
    {"glm-4.6", "generic_json"},
    {"gpt-oss", "generic_json"},
    {"granite-3.3", "granite"},
    {"granite-4.0", "hermes"},
    {"hermes-2-pro-tool-use", "hermes"},
    {"hermes-3-tool-use", "hermes"},
    {"kimi-k2", "generic_json"},
    {"lfm2", "generic_json"},
    {"llama-2", "hermes"},
    {"llama-3.1", "llama3_json"},
    {"llama-3.2", "llama3_json"},
    {"llama-3.3", "llama3_json"},
    {"minicpm5", "generic_json"},
    {"mistral-nemo", "mistral"},
    {"mistral-small-3.2", "mistral_args"},
    {"nemotron-nano-v2", "nemotron"},
    {"olmo-2", "hermes"},
    {"phi-3", "hermes"},
    {"phi-3.5", "hermes"},
    {"phi-4", "hermes"},
    {"qwen2.5", "hermes"},
    {"qwen3", "hermes"},
    {"qwen3-coder", "qwen3_coder"},
    {"qwq", "hermes"},
    {"smollm2", "hermes"},
    {"smollm3", "hermes"},
    {"zephyr", "hermes"},
};

TEST(ToolFormatDetection, EveryFixtureFamilyGetsItsFormat) {
  const fs::path root = fs::path(SEER_SOURCE_DIR) / "tests/data/chat_templates";
  size_t families = 0;
  for (const auto& d : fs::directory_iterator(root)) {
    if (!d.is_directory()) continue;
    const std::string family = d.path().filename().string();
    ++families;
    auto it = kFormats.find(family);
    ASSERT_NE(it, kFormats.end()) << "give the fixture family " << family << " its tool-call format here";
    EXPECT_EQ(format_of(d.path() / "template.jinja"), it->second) << family;
  }
  EXPECT_EQ(families, kFormats.size());
}

TEST(ToolFormatDetection, PythonicTemplateAndBuiltInFormats) {
  // FireFunction's template shows functools[...] (Phi-4-mini's format too).
  const fs::path fire = fs::path(SEER_SOURCE_DIR) / "tests/data/chat_templates/firefunction-v2/template.jinja";
  EXPECT_EQ(tool_format_of_source(read_file(fire)).name(), "functools");
  // Phi-4-mini's template (not in the fixture set) lists the tools this way.
  EXPECT_EQ(tool_format_of_source("{{- '<|system|>' + system + '<|tool|>' + tools | tojson + '<|/tool|>' + '<|end|>' }}").name(),
            "functools");
  EXPECT_EQ(format_of(fs::path(SEER_SOURCE_DIR) / "tests/data/tool_templates/llama-3.2-pythonic.jinja"), "pythonic");
  EXPECT_EQ(tool_format_of(ChatTemplate::of(ChatFormat::Llama3)).name(), "hermes");  // no Jinja: the preamble
}

TEST(ToolFormatDetection, EveryFormatIsFoundByItsName) {
  for (const ToolFormat* f : all_tool_formats()) EXPECT_EQ(tool_format_named(f->name()), f);
  EXPECT_EQ(tool_format_named("nope"), nullptr);
}

}  // namespace
}  // namespace seer::server
