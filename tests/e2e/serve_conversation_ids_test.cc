// Conversation ids of `seer serve`. Without API keys every client shares one
// anonymous tenant, so a guessable id would let anyone read, continue or delete
// another client's conversation: the server issues the ids ("conversation": "new",
// or X-Conversation-Id: new, gives conv_ + 32 hex digits in the X-Conversation-Id
// response header and the body's "conversation" field) and refuses any other id
// (400 conversation_id_not_issued), unless --trust-client-conversation-ids. A
// DELETE also removes the conversation from the shared Redis tier, so that no
// replica restores the deleted history.
#include <regex>
#include <set>

#include <gtest/gtest.h>

#include "e2e/api_calls.h"
#include "e2e/server_process.h"
#include "e2e/wait.h"
#include "server/redis_client.h"
#include "support/redis_server.h"

namespace seer::e2e {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr int kBos = 1;  // a continued turn's message is added without its BOS
const Headers kJson = {{"Content-Type", "application/json"}};

bool issued(const std::string& id) { return std::regex_match(id, std::regex(kIssuedIdPattern)); }

HttpResult chat(const ServerProcess& s, const std::string& message, const std::string& conversation = "") {
  return http_post(s.port(), "/v1/chat/completions", chat_body(message, 8, conversation));
}

TEST(ServeConversationIds, WithoutKeysAClientChosenIdIsRefused) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model());
  ASSERT_TRUE(s.up());
  for (const char* path : {"/v1/completions", "/v1/chat/completions"}) {
    SCOPED_TRACE(path);
    const bool is_chat = std::string(path) == "/v1/chat/completions";
    auto body = [&](const std::string& conversation) {
      return is_chat ? chat_body("Hello", 4, conversation) : completion_body("Hello", 4, conversation);
    };
    // In the body...
    HttpResult in_body = http_post(s.port(), path, body("my-own-id"));
    EXPECT_EQ(in_body.status, 400) << in_body.body;
    EXPECT_EQ(error_code(in_body), "conversation_id_not_issued") << in_body.body;
    // ...or in the header a load balancer hashes on.
    Headers header = kJson;
    header.emplace_back("X-Conversation-Id", "my-own-id");
    HttpResult in_header = http_request(s.port(), "POST", path, body(""), header);
    EXPECT_EQ(in_header.status, 400) << in_header.body;
    EXPECT_EQ(error_code(in_header), "conversation_id_not_issued") << in_header.body;
    // Requests without a conversation are served as before.
    HttpResult plain = http_post(s.port(), path, body(""));
    EXPECT_EQ(plain.status, 200) << plain.body;
  }
}

TEST(ServeConversationIds, NewIssuesAnIdThatContinuesTheConversation) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model());
  ASSERT_TRUE(s.up());
  HttpResult t1 = chat(s, "Once upon a time", "new");
  ASSERT_EQ(t1.status, 200) << t1.body;
  const std::string id = t1.header("X-Conversation-Id");
  EXPECT_TRUE(issued(id)) << "X-Conversation-Id: '" << id << "'";
  EXPECT_EQ(json_of(t1).value("conversation", ""), id) << t1.body;

  // The issued id continues the conversation: its prompt is the history plus the
  // new message.
  HttpResult alone = chat(s, "What happened next?");
  HttpResult t2 = chat(s, "What happened next?", id);
  ASSERT_EQ(alone.status, 200) << alone.body;
  ASSERT_EQ(t2.status, 200) << t2.body;
  EXPECT_EQ(prompt_tokens(t2), prompt_tokens(t1) + completion_tokens(t1) + prompt_tokens(alone) - kBos);

  // Every "new" is another conversation with another id, asked for in the body or
  // in the header, on either endpoint.
  std::set<std::string> ids{id};
  for (int i = 0; i < 3; ++i) {
    Headers header = kJson;
    header.emplace_back("X-Conversation-Id", "new");
    HttpResult r = i == 0   ? chat(s, "Once upon a time", "new")
                   : i == 1 ? http_post(s.port(), "/v1/completions", completion_body("Once upon a time", 4, "new"))
                            : http_request(s.port(), "POST", "/v1/completions",
                                           completion_body("Once upon a time", 4), header);
    ASSERT_EQ(r.status, 200) << r.body;
    const std::string other = r.header("X-Conversation-Id");
    EXPECT_TRUE(issued(other)) << "X-Conversation-Id: '" << other << "'";
    EXPECT_EQ(json_of(r).value("conversation", ""), other) << r.body;
    EXPECT_TRUE(ids.insert(other).second) << "issued twice: " << other;
  }
  // A fresh "new" conversation does not carry the first one's history.
  HttpResult fresh = chat(s, "What happened next?", "new");
  ASSERT_EQ(fresh.status, 200) << fresh.body;
  EXPECT_EQ(prompt_tokens(fresh), prompt_tokens(alone));

  HttpResult del = http_request(s.port(), "DELETE", "/v1/conversations/" + id);
  EXPECT_EQ(del.status, 200) << del.body;
}

TEST(ServeConversationIds, StreamedNewCarriesTheIdInTheHeaderAndEveryChunk) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model());
  ASSERT_TRUE(s.up());
  for (const char* path : {"/v1/chat/completions", "/v1/completions"}) {
    SCOPED_TRACE(path);
    json body{{"max_tokens", 6}, {"ignore_eos", true}, {"stream", true},
              {"stream_options", {{"include_usage", true}}}, {"conversation", "new"}};
    if (std::string(path) == "/v1/completions") body["prompt"] = "Once upon a time";
    else body["messages"] = json::array({{{"role", "user"}, {"content", "Once upon a time"}}});
    HttpResult r = http_post(s.port(), path, body.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    const std::string id = r.header("X-Conversation-Id");
    EXPECT_TRUE(issued(id)) << "X-Conversation-Id: '" << id << "'";
    std::vector<std::string> events = sse_data(r.body);
    ASSERT_GE(events.size(), 4u) << r.body;
    EXPECT_EQ(events.back(), "[DONE]");
    for (const std::string& e : events) {
      if (e == "[DONE]") continue;
      json chunk = json::parse(e, nullptr, false);
      ASSERT_FALSE(chunk.is_discarded()) << e;
      EXPECT_EQ(chunk.value("conversation", ""), id) << e;
    }
  }
}

TEST(ServeConversationIds, TrustClientConversationIdsAcceptsAChosenId) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model(), {"--trust-client-conversation-ids"});
  ASSERT_TRUE(s.up());
  HttpResult t1 = chat(s, "Once upon a time", "my-own-id");
  ASSERT_EQ(t1.status, 200) << t1.body;
  HttpResult alone = chat(s, "What happened next?");
  HttpResult t2 = chat(s, "What happened next?", "my-own-id");
  ASSERT_EQ(alone.status, 200) << alone.body;
  ASSERT_EQ(t2.status, 200) << t2.body;
  EXPECT_EQ(prompt_tokens(t2), prompt_tokens(t1) + completion_tokens(t1) + prompt_tokens(alone) - kBos);
  // Ids outside 1-128 characters of [A-Za-z0-9_.:-] stay refused.
  HttpResult bad = chat(s, "Hello", "../../etc");
  EXPECT_EQ(bad.status, 400) << bad.body;
}

// ---- the shared Redis tier ----------------------------------------------------

std::string completion(const std::string& prompt, const std::string& conversation = "") {
  return completion_body(prompt, 8, conversation);
}

TEST(ServeConversationIds, DeleteRemovesTheConversationFromTheSharedTier) {
  if (seer::testing::redis_server_binary().empty())
    GTEST_SKIP() << "redis-server is not installed (scripts/install-deps.sh installs it)";
  ASSERT_FALSE(tiny_model().empty());
  seer::testing::RedisServer redis;
  ASSERT_TRUE(redis.up());
  const std::vector<std::string> flags = {"--policy", "pensieve", "--swap-blocks", "64", "--shared-kv", redis.url(),
                                          "--trust-client-conversation-ids"};
  ServerProcess home(tiny_model(), flags), other(tiny_model(), flags);
  ASSERT_TRUE(home.up() && other.up());

  // Three conversations on `home`: two to delete (one checked on each replica), one
  // kept to show that `other` does restore what Redis holds.
  for (const char* conv : {"conv-del-home", "conv-del-other", "conv-kept"}) {
    HttpResult r = http_post(home.port(), "/v1/completions", completion("Once upon a time", conv));
    ASSERT_EQ(r.status, 200) << conv << ": " << r.body;
  }
  // The write-through runs off the engine loop: wait until Redis holds the three
  // histories (keys ending in ":h", kv/redis_kv_store.h).
  RedisClient client(RedisEndpoint{"127.0.0.1", redis.port()}, 5000ms);
  auto histories = [&] {
    std::optional<RedisReply> r = client.command({"KEYS", "*:h"});
    return r && r->type == RedisReply::Type::Array ? r->elements.size() : size_t{0};
  };
  ASSERT_TRUE(wait_until([&] { return histories() >= 3; })) << histories() << " histories in Redis";

  for (const char* conv : {"conv-del-home", "conv-del-other"}) {
    HttpResult del = http_request(home.port(), "DELETE", std::string("/v1/conversations/") + conv);
    EXPECT_EQ(del.status, 200) << conv << ": " << del.body;
  }
  EXPECT_TRUE(wait_until([&] { return histories() == 1; }))
      << histories() << " histories in Redis after deleting two of three";

  HttpResult alone = http_post(other.port(), "/v1/completions", completion(" and then"));
  ASSERT_EQ(alone.status, 200) << alone.body;
  const int fresh = prompt_tokens(alone);
  // The kept conversation comes back on the other replica, from Redis...
  HttpResult kept = http_post(other.port(), "/v1/completions", completion(" and then", "conv-kept"));
  ASSERT_EQ(kept.status, 200) << kept.body;
  EXPECT_GT(prompt_tokens(kept), fresh) << "the other replica did not restore a kept conversation from Redis";
  // ...the deleted ones come back nowhere: a new conversation under the old id.
  HttpResult on_other = http_post(other.port(), "/v1/completions", completion(" and then", "conv-del-other"));
  ASSERT_EQ(on_other.status, 200) << on_other.body;
  EXPECT_EQ(prompt_tokens(on_other), fresh) << "a deleted history was restored from Redis on another replica";
  HttpResult on_home = http_post(home.port(), "/v1/completions", completion(" and then", "conv-del-home"));
  ASSERT_EQ(on_home.status, 200) << on_home.body;
  EXPECT_EQ(prompt_tokens(on_home), fresh) << "a deleted history was restored from Redis on its own replica";
}

}  // namespace
}  // namespace seer::e2e
