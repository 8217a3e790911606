// POST /tokenize and /detokenize (llama-server's and vLLM's shapes), GET /props and
// /v1/models' context length against a real `seer serve`: the ids /tokenize gives for
// a chat are the ones a chat completion is charged for, text survives the round trip,
// and bad input is a 400 naming the field; keys guard these routes too.
#include <filesystem>

#include <gtest/gtest.h>

#include "e2e/api_calls.h"
#include "e2e/server_process.h"
#include "support/test_paths.h"

namespace seer::e2e {
namespace {

using nlohmann::json;

json post_json(const ServerProcess& s, const std::string& path, const json& body, int want = 200) {
  HttpResult r = http_post(s.port(), path, body.dump());
  EXPECT_EQ(r.status, want) << path << " " << body.dump() << " -> " << r.body;
  return json::parse(r.body, nullptr, false);
}

// The built-in model (stories260K, a SentencePiece vocabulary with whole-word pieces,
// next to the binary); the tiny random model's byte vocabulary spells a space as the
// three bytes of U+2581, which only a real SentencePiece piece turns back into one.
const std::string& builtin_model() {
  static const std::string path =
      (std::filesystem::path(seer::testing::seer_binary()).parent_path() / "models" / "stories260K.gguf").string();
  return path;
}

TEST(ServeTokenize, RoundTripsAndCountsWhatAChatIsCharged) {
  ASSERT_TRUE(std::filesystem::exists(builtin_model())) << builtin_model();
  ServerProcess s(builtin_model());
  ASSERT_TRUE(s.up());
  const std::string text = "Once upon a time there was a little girl";
  json plain = post_json(s, "/tokenize", {{"content", text}});
  ASSERT_TRUE(plain["tokens"].is_array());
  EXPECT_EQ(plain["count"], plain["tokens"].size());
  json with_bos = post_json(s, "/tokenize", {{"prompt", text}});  // vLLM: add_special_tokens defaults true
  EXPECT_EQ(with_bos["tokens"].size(), plain["tokens"].size() + 1);
  json back = post_json(s, "/detokenize", {{"tokens", plain["tokens"]}});
  EXPECT_EQ(back["content"], text);
  EXPECT_EQ(back["prompt"], text);
  json pieces = post_json(s, "/tokenize", {{"content", text}, {"with_pieces", true}});
  std::string joined;
  for (const json& t : pieces["tokens"]) joined += t["piece"].get<std::string>();
  EXPECT_EQ(joined, " " + text) << "pieces carry SentencePiece's leading space";

  const json messages = {{{"role", "user"}, {"content", "Tell me a story"}}};
  json counted = post_json(s, "/tokenize", {{"messages", messages}});
  HttpResult chat = http_post(s.port(), "/v1/chat/completions", json{{"messages", messages}, {"max_tokens", 1}}.dump());
  ASSERT_EQ(chat.status, 200) << chat.body;
  EXPECT_EQ(counted["count"], prompt_tokens(chat));

  json props = json::parse(http_get(s.port(), "/props").body);
  EXPECT_GT(props["max_model_len"].get<int>(), 0);
  EXPECT_EQ(props["n_ctx"], props["max_model_len"]);
  json models = json::parse(http_get(s.port(), "/v1/models").body);
  EXPECT_EQ(models["data"][0]["max_model_len"], props["max_model_len"]);
}

TEST(ServeTokenize, BadInputIsA400NamingTheField) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model());
  ASSERT_TRUE(s.up());
  struct Case {
    const char* path;
    json body;
    const char* param;
  };
  const Case cases[] = {
      {"/detokenize", {{"tokens", {1, 99999}}}, "tokens[1]"},
      {"/detokenize", {{"tokens", "abc"}}, "tokens"},
      {"/tokenize", json::object(), "content"},
      {"/tokenize", {{"content", 5}}, "content"},
      {"/tokenize", {{"content", "a"}, {"with_pieces", "yes"}}, "with_pieces"},
      {"/tokenize", {{"content", "a"}, {"messages", json::array()}}, "messages"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body.dump());
    json e = post_json(s, c.path, c.body, 400);
    ASSERT_TRUE(e.contains("error"));
    EXPECT_EQ(e["error"]["param"], c.param) << e.dump();
  }
  EXPECT_EQ(post_json(s, "/detokenize", {{"tokens", json::array()}})["content"], "");
  EXPECT_EQ(http_post(s.port(), "/tokenize", "{not json").status, 400);
  EXPECT_EQ(http_get(s.port(), "/health").status, 200);
}

TEST(ServeTokenize, KeysGuardTheRoutes) {
  ASSERT_FALSE(tiny_model().empty());
  const std::string key = "sk-tokenize-3a9c0e17";
  ServerProcess s(tiny_model(), {"--api-key", key});
  ASSERT_TRUE(s.up());
  EXPECT_EQ(http_post(s.port(), "/tokenize", R"({"content": "a"})").status, 401);
  EXPECT_EQ(http_get(s.port(), "/props").status, 401);
  EXPECT_EQ(http_request(s.port(), "POST", "/tokenize", R"({"content": "a"})", bearer(key)).status, 200);
}

}  // namespace
}  // namespace seer::e2e
