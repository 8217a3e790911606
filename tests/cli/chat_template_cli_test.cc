// `seer chat-template` as a user runs it: the rendered prompt on stdout, byte for
// byte; the fallback and its warning; errors.
#include <gtest/gtest.h>

#include <fstream>

#include "run_seer.h"
#include "support/test_paths.h"

namespace seer {
namespace {

using testing::run_seer;
using testing::scratch_dir;
using testing::slurp;

std::string write(const std::string& name, const std::string& text) {
  const std::string path = scratch_dir() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string fixture(const std::string& rel) { return testing::source_dir() + "/tests/data/chat_templates/" + rel; }

TEST(ChatTemplateCli, RendersAFixtureTemplateByteForByte) {
  // The multi_turn case of conversations.json with Qwen3's template, as the reference rendered it.
  const std::string messages = write("qwen3_messages.json", R"([
      {"role": "system", "content": "Answer briefly."},
      {"role": "user", "content": "Hi there"},
      {"role": "assistant", "content": "Hello! How can I help?"},
      {"role": "user", "content": "Tell me a joke.\nA short one."}])");
  auto r = run_seer({"chat-template", "--chat-template", fixture("qwen3/template.jinja"), "--messages", messages,
                     "--bos-token", "<s>", "--eos-token", "</s>"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, slurp(fixture("qwen3/multi_turn.txt")));
  EXPECT_EQ(r.err, "");
}

TEST(ChatTemplateCli, ToolsAndNoGenerationPrompt) {
  const std::string tmpl = write("tools.jinja",
                                 "{% for t in tools %}{{ t.function.name }}:{{ t | tojson }}\n{% endfor %}"
                                 "{% for m in messages %}{{ m.role }}={{ m.content }}\n{% endfor %}"
                                 "{% if add_generation_prompt %}>{% endif %}{{ eos_token }}");
  const std::string messages = write("m.json", R"({"messages": [{"role": "user", "content": "héllo"}]})");
  const std::string tools = write("t.json", R"([{"type": "function", "function": {"name": "f", "parameters": {}}}])");
  auto r = run_seer({"chat-template", "--chat-template", tmpl, "--messages", messages, "--tools", tools,
                     "--no-generation-prompt", "--eos-token", "</s>"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "f:{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": {}}}\nuser=héllo\n</s>");
}

TEST(ChatTemplateCli, ModelWithoutTemplateFallsBackWithAWarning) {
  SEER_REQUIRE_SHARED_FILE(model, "models/stories260K.gguf");
  const std::string messages = write("m2.json", R"([{"role": "user", "content": "hi"}])");
  auto r = run_seer({"chat-template", "--model", model, "--messages", messages});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "<s><|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_NE(r.err.find("warning: chat template: the model has no chat template; formatting as chatml"), std::string::npos)
      << r.err;
}

TEST(ChatTemplateCli, TemplateErrorsExitOneWithThePosition) {
  const std::string messages = write("m3.json", R"([{"role": "user", "content": "hi"}])");
  auto broken = run_seer({"chat-template", "--chat-template", write("bad.jinja", "{% for m in messages %}\n{{ m.role + }}"),
                          "--messages", messages});
  EXPECT_EQ(broken.exit_code, 1);
  EXPECT_NE(broken.err.find("line 2, column 13"), std::string::npos) << broken.err;
  auto refused = run_seer({"chat-template", "--chat-template",
                           write("raise.jinja", "{% if messages | length < 2 %}{{ raise_exception('need two') }}{% endif %}x"),
                           "--messages", messages});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("need two"), std::string::npos) << refused.err;
  auto neither = run_seer({"chat-template", "--messages", messages});
  EXPECT_EQ(neither.exit_code, 1);
  EXPECT_NE(neither.err.find("give --model FILE"), std::string::npos) << neither.err;
}

}  // namespace
}  // namespace seer
