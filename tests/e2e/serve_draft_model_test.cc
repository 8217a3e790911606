// `seer serve --draft-model F` (docs/speculative.md): with stories260K drafting for
// itself, the same greedy text as llama.cpp's reference (and as without
// speculation), streamed or not, almost every draft accepted, as /metrics reports.
#include <fstream>

#include <gtest/gtest.h>

#include "e2e/server_process.h"
#include "support/test_paths.h"

namespace seer::e2e {
namespace {

using nlohmann::json;

HttpResult post(const ServerProcess& s, const json& body) { return http_post(s.port(), "/v1/completions", body.dump()); }

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \n\t"), e = s.find_last_not_of(" \n\t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

TEST(ServeDraftModel, SelfDraftingKeepsTheGreedyTextAndIsAlmostAlwaysAccepted) {
  SEER_REQUIRE_SHARED_FILE(model, "models/stories260K.gguf");
  SEER_REQUIRE_SHARED_FILE(reference, "models/reference/stories260K-once-upon-a-time.txt");
  std::ifstream in(reference);
  std::string expected((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ServerProcess s(model, {"--draft-model", model, "--draft-tokens", "4", "--speculate-gate", "always",
                          "--draft-slots", "4"});
  ASSERT_TRUE(s.up());
  EXPECT_NE(s.stderr_text().find("speculative decoding model (4 draft tokens)"), std::string::npos)
      << s.stderr_text();
  EXPECT_NE(s.stderr_text().find("4 requests x"), std::string::npos) << s.stderr_text();
  auto r = post(s, {{"prompt", "Once upon a time"}, {"max_tokens", 128}, {"temperature", 0}});
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string text = json::parse(r.body)["choices"][0]["text"].get<std::string>();
  EXPECT_EQ(trim("Once upon a time" + text), trim(expected));
  auto st = post(s, {{"prompt", "Once upon a time"}, {"max_tokens", 128}, {"temperature", 0}, {"stream", true}});
  std::string streamed;
  for (const auto& ev : sse_data(st.body))
    if (ev != "[DONE]") streamed += json::parse(ev)["choices"][0]["text"].get<std::string>();
  EXPECT_EQ(streamed, text);
  const double drafted = metric(s.port(), "seer_spec_draft_tokens_total").value_or(0);
  const double accepted = metric(s.port(), "seer_spec_accepted_tokens_total").value_or(0);
  EXPECT_GT(drafted, 100);
  EXPECT_GE(accepted, 0.95 * drafted);
  EXPECT_NEAR(metric(s.port(), "seer_spec_acceptance_rate").value_or(-1), accepted / drafted, 1e-6);
  EXPECT_GT(metric(s.port(), "seer_spec_tokens_per_step").value_or(0), 4.0);
}

}  // namespace
}  // namespace seer::e2e
