// Chat through each architecture's own template, end to end: a random-weight model
// of the architecture carrying its family's chat template is served, and
// /v1/chat/completions must tokenize exactly what `seer chat-template --model`
// renders for the same messages. Llama 3.1 and Qwen3 carry their real vocabulary and
// template (tokenizer.json and tokenizer_config.json through `seer make-vocab`, then
// `seer make-model --tokenizer-from`); the others, whose tokenizer.json no package
// holds, a byte-level vocabulary and the family's template fixture
// (`make-model --chat-template`).
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "e2e/api_calls.h"
#include "e2e/family_model.h"
#include "e2e/server_process.h"
#include "support/test_paths.h"

namespace seer::e2e {
namespace {

using nlohmann::json;

// No system message: Gemma's templates refuse one (the server then moves it into the
// user's turn, which `seer chat-template` does not).
const json kMessages = json::parse(R"([{"role": "user", "content": "Hello there, how are you?"},
                                       {"role": "assistant", "content": "Fine, thanks."},
                                       {"role": "user", "content": "Name a colour."}])");

std::string seer_cmd(const std::string& args) { return seer::testing::seer_binary() + " " + args; }

// Token count of the prompt the server should build from what `seer chat-template`
// renders for `messages`: the rendering tokenized as the server does (with the BOS
// the vocabulary adds), less the template's own BOS when that makes two, as llama.cpp
// drops it. Two equal first ids can only be that: no template here starts with a
// repeated token. -1 when rendering fails.
int rendered_tokens(const std::string& model, const json& messages, const std::string& tools_file = "") {
  const std::string dir = seer::testing::scratch_dir();
  std::ofstream(dir + "/messages.json") << messages.dump();
  int status = 0;
  run_command(seer_cmd("chat-template --model " + model + " --messages " + dir + "/messages.json" +
                       (tools_file.empty() ? "" : " --tools " + tools_file) + " > " + dir + "/prompt.txt"),
              &status);
  if (status != 0) return -1;
  std::istringstream out(
      run_command(seer_cmd("tokenize --add-special --parse-special --model " + model + " < " + dir + "/prompt.txt")));
  std::vector<int> ids;
  for (int id; out >> id;) ids.push_back(id);
  if (ids.size() >= 2 && ids[0] == ids[1]) ids.erase(ids.begin());  // BOS twice: the template printed one
  return static_cast<int>(ids.size());
}

const Family kFamilies[] = {
    kQwen3,
    {"llama3_1", "--arch llama --llama3-rope --tied", "llama3_1", "llama-bpe", nullptr},
    {"qwen3moe", "--arch qwen3moe --head-dim 32 --experts 8 --experts-used 2", "qwen3", "qwen2", nullptr},
    {"mixtral", "--arch llama --experts 4 --experts-used 2", nullptr, nullptr, "mistral-nemo"},
    {"gemma2", "--arch gemma2 --head-dim 32 --tied --sliding-window 8 --attn-softcap 50 --final-softcap 30", nullptr,
     nullptr, "gemma-2"},
    {"gemma3", "--arch gemma3 --layers 6 --head-dim 32 --tied --sliding-window 8", nullptr, nullptr, "gemma-3"},
    {"phi3", "--arch phi3 --longrope", nullptr, nullptr, "phi-3.5"},
    {"phi4_mini", "--arch phi3 --rope-dim 12", nullptr, nullptr, "phi-4"},
    {"granite", "--arch granite", nullptr, nullptr, "granite-3.3"},
    {"qwen2", "--arch qwen2", nullptr, nullptr, "qwen2.5"},
};

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

INSTANTIATE_TEST_SUITE_P(Architectures, ServeModelTemplate, ::testing::ValuesIn(kFamilies),
                         [](const auto& info) { return std::string(info.param.name); });

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
