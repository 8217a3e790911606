// `seer serve --policy ecoserve` on the real stories260K model: concurrent
// requests of different lengths all complete (with a KV pool small enough that
// generation tasks wait in groups and get preempted offload-free) and every KV
// block is free afterwards (seen in /metrics).
#include <future>
#include <vector>

#include <gtest/gtest.h>

#include "e2e/server_process.h"
#include "support/test_paths.h"

namespace seer::e2e {
namespace {

using nlohmann::json;

void serve_concurrently(const std::string& policy, const std::vector<std::string>& extra = {}) {
  SEER_REQUIRE_SHARED_FILE(model, "models/stories260K.gguf");
  // 48 blocks of 16 tokens: fewer than the requests below need together.
  std::vector<std::string> args = {"--policy", policy, "--kv-blocks", "48", "--block-size", "16", "--token-budget", "64",
                                   "--swap-blocks", "64", "--threads", "2"};
  args.insert(args.end(), extra.begin(), extra.end());
  ServerProcess s(model, args);
  ASSERT_TRUE(s.up());
  std::vector<std::future<HttpResult>> replies;
  for (int i = 0; i < 12; ++i) {
    json body = {{"prompt", "Once upon a time"}, {"max_tokens", 20 + 15 * (i % 5)}, {"ignore_eos", true},
                 {"temperature", 0}};
    replies.push_back(std::async(std::launch::async, [&s, b = body.dump()] { return http_post(s.port(), "/v1/completions", b); }));
  }
  for (size_t i = 0; i < replies.size(); ++i) {
    HttpResult r = replies[i].get();
    ASSERT_EQ(r.status, 200) << r.body;
    json j = json::parse(r.body);
    EXPECT_EQ(j["usage"]["completion_tokens"], 20 + 15 * (static_cast<int>(i) % 5)) << r.body;
  }
  // Every reply is complete, and the server publishes the freed KV before it delivers
  // a request's end (e2e/wait.h): nothing to wait for.
  EXPECT_EQ(metric(s.port(), "seer_kv_blocks_used").value_or(-1), 0);
}

TEST(ServeEcoServe, ConcurrentRequestsCompleteAndKvReturnsToZero) { serve_concurrently("ecoserve"); }
TEST(ServeEcoServe, AblationDAlsoServes) { serve_concurrently("ecoserve-d"); }
// The paper's behaviours where seer's default differs (docs/ecoserve.md).
TEST(ServeEcoServe, ThePapersBehavioursServe) {
  serve_concurrently("ecoserve", {"--eco-admission", "on-free", "--eco-overrun", "group-slack", "--eco-order", "kv-first",
                                  "--eco-pipelining", "paper"});
}

}  // namespace
}  // namespace seer::e2e
