// A stateful chat turn without max_tokens (absent, or null) may generate up to the
// context left after the conversation's history and the new message, on every
// turn: the default must count the history, or the second turn of any chat whose
// client leaves max_tokens out fails with 400 context_length_exceeded.
#include <gtest/gtest.h>

#include "e2e/api_calls.h"
#include "e2e/server_process.h"

namespace seer::e2e {
namespace {

using nlohmann::json;

constexpr int kTinyContext = 512;  // seer make-model --shape tiny
constexpr int kBos = 1;            // a continued turn's message is added without its BOS

// Single characters the random model emits often: a turn with them as stop strings
// ends long before the context does.
const json kStops = json::array({"e", "t", "a", "o", "i", "n", " ", "s", "h", "r", "d", "l", "u", ".", ",", "\n"});

json user(const std::string& content) { return json::array({{{"role", "user"}, {"content", content}}}); }

std::string finish_reason(const HttpResult& r) {
  json j = json_of(r);
  if (j.is_discarded() || !j.contains("choices") || j["choices"].empty()) return "";
  return j["choices"][0].value("finish_reason", "");
}

TEST(ServeStatefulChat, SecondTurnWithoutMaxTokensSucceeds) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model());
  ASSERT_TRUE(s.up());
  // Turn 1: no max_tokens, EOS on (sampling with a fixed seed, ended by EOS or a stop).
  json body{{"messages", user("Once upon a time")}, {"stop", kStops}, {"seed", 7}, {"conversation", "new"}};
  HttpResult t1 = http_post(s.port(), "/v1/chat/completions", body.dump());
  ASSERT_EQ(t1.status, 200) << t1.body;
  ASSERT_NE(finish_reason(t1), "length") << "turn 1 ran to the end of the context; pick other stop strings";
  const std::string id = t1.header("X-Conversation-Id");
  ASSERT_FALSE(id.empty()) << "no X-Conversation-Id for \"conversation\": \"new\"";

  // Turn 2: only the new message, again without max_tokens.
  body["messages"] = user("What happened next?");
  body["conversation"] = id;
  HttpResult t2 = http_post(s.port(), "/v1/chat/completions", body.dump());
  ASSERT_EQ(t2.status, 200) << t2.body;
  EXPECT_GT(prompt_tokens(t2), prompt_tokens(t1)) << "turn 2 did not carry turn 1's history";
  EXPECT_LE(prompt_tokens(t2) + completion_tokens(t2), kTinyContext);
  ASSERT_NE(finish_reason(t2), "length") << "turn 2 filled the context; pick other stop strings";

  // Turn 3 with "max_tokens": null, the same default.
  body["messages"] = user("And then?");
  body["max_tokens"] = nullptr;
  HttpResult t3 = http_post(s.port(), "/v1/chat/completions", body.dump());
  ASSERT_EQ(t3.status, 200) << t3.body;
  EXPECT_GT(prompt_tokens(t3), prompt_tokens(t2));
  EXPECT_LE(prompt_tokens(t3) + completion_tokens(t3), kTinyContext);
}

// With EOS ignored, the default shows exactly: the turn fills the context left.
TEST(ServeStatefulChat, DefaultMaxTokensIsTheContextLeftAfterTheHistory) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model(), {"--trust-client-conversation-ids"});
  ASSERT_TRUE(s.up());
  HttpResult alone = http_post(s.port(), "/v1/chat/completions", chat_body("What happened next?", 8));
  ASSERT_EQ(alone.status, 200) << alone.body;
  for (const bool explicit_null : {false, true}) {
    const std::string conversation = explicit_null ? "chat-null" : "chat-absent";
    SCOPED_TRACE(conversation);
    HttpResult t1 = http_post(s.port(), "/v1/chat/completions", chat_body("Once upon a time", 8, conversation));
    ASSERT_EQ(t1.status, 200) << t1.body;
    json body{{"messages", user("What happened next?")}, {"temperature", 0}, {"ignore_eos", true},
              {"conversation", conversation}};
    if (explicit_null) body["max_tokens"] = nullptr;
    HttpResult t2 = http_post(s.port(), "/v1/chat/completions", body.dump());
    ASSERT_EQ(t2.status, 200) << t2.body;
    EXPECT_EQ(prompt_tokens(t2), prompt_tokens(t1) + completion_tokens(t1) + prompt_tokens(alone) - kBos);
    EXPECT_EQ(prompt_tokens(t2) + completion_tokens(t2), kTinyContext);
    EXPECT_EQ(finish_reason(t2), "length");
  }
}

}  // namespace
}  // namespace seer::e2e
