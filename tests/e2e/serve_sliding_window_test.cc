// `seer serve --swa-kv`: a Gemma 3 model's local layers in block groups of their own,
// trimmed behind the window (docs/models.md, "K/V of sliding-window layers"), answer
// exactly as the layout that keeps every position, over HTTP, in a conversation whose
// second turn continues the cached K/V; the start-up line says which layout runs.
#include <string>

#include <gtest/gtest.h>

#include "e2e/api_calls.h"
#include "e2e/server_process.h"
#include "support/test_paths.h"

namespace seer::e2e {
namespace {

using nlohmann::json;

std::string gemma3_model() {
  const std::string model = seer::testing::scratch_dir() + "/gemma3-window8.gguf";
  int status = 0;
  run_command(seer::testing::seer_binary() + " make-model --shape tiny --type f16 --quiet --arch gemma3 --layers 6 "
                  "--head-dim 32 --tied --sliding-window 8 -o " + model + " 2>&1",
              &status);
  return status == 0 ? model : "";
}

json ids(int n, int salt) {
  json a = json::array();
  for (int i = 0; i < n; ++i) a.push_back((i * 7 + salt * 13) % 200 + 1);
  return a;
}

// Two turns of one conversation: a 61-token prompt, then 9 more tokens continuing it.
std::vector<json> converse(const ServerProcess& s) {
  std::vector<json> replies;
  std::string conversation = "new";
  for (int turn = 0; turn < 2; ++turn) {
    json body = {{"prompt", ids(turn == 0 ? 61 : 9, turn)}, {"max_tokens", 12}, {"temperature", 0},
                 {"ignore_eos", true}, {"logprobs", 0}, {"conversation", conversation}};
    HttpResult r = http_post(s.port(), "/v1/completions", body.dump());
    EXPECT_EQ(r.status, 200) << r.body;
    replies.push_back(json_of(r));
    conversation = replies.back().value("conversation", "");
  }
  return replies;
}

TEST(ServeSlidingWindow, TrimmedWindowsAnswerAsKeepingEveryPosition) {
  const std::string model = gemma3_model();
  ASSERT_FALSE(model.empty()) << "make-model failed";
  ServerProcess windowed(model, {"--block-size", "4", "--policy", "pensieve"});
  ServerProcess full(model, {"--block-size", "4", "--policy", "pensieve", "--swa-kv", "full"});
  ASSERT_TRUE(windowed.up() && full.up());
  EXPECT_NE(windowed.stderr_text().find("in 6 layer groups (window 8"), std::string::npos) << windowed.stderr_text();
  EXPECT_EQ(full.stderr_text().find("layer groups"), std::string::npos) << full.stderr_text();
  const std::vector<json> a = converse(windowed), b = converse(full);
  for (size_t turn = 0; turn < 2; ++turn) {
    SCOPED_TRACE(turn);
    EXPECT_EQ(a[turn]["choices"][0]["text"], b[turn]["choices"][0]["text"]);
    const json& la = a[turn]["choices"][0]["logprobs"]["token_logprobs"];
    const json& lb = b[turn]["choices"][0]["logprobs"]["token_logprobs"];
    ASSERT_EQ(la.size(), lb.size());
    for (size_t i = 0; i < la.size(); ++i) EXPECT_NEAR(la[i].get<double>(), lb[i].get<double>(), 1e-4) << i;
  }
  EXPECT_EQ(a[1]["usage"]["prompt_tokens"], 61 + 12 + 9);  // the history, then the new tokens
  EXPECT_EQ(b[1]["usage"]["prompt_tokens"], 61 + 12 + 9);
  EXPECT_GT(cache_hit_tokens(windowed.port()).value_or(0), 60);  // turn 2 continued the cached K/V
}

TEST(ServeSlidingWindow, AnUnknownLayoutIsRefusedAtStart) {
  const std::string model = gemma3_model();
  ASSERT_FALSE(model.empty()) << "make-model failed";
  int status = 0;
  const std::string out =
      run_command(seer::testing::seer_binary() + " serve --model " + model + " --port 0 --swa-kv half 2>&1", &status);
  EXPECT_NE(status, 0);
  EXPECT_NE(out.find("--swa-kv"), std::string::npos) << out;
}

}  // namespace
}  // namespace seer::e2e
