// `seer bench --multi-turn --stateful` sends the conversation id also as the
// X-Conversation-Id header (a load balancer hashes on it, docs/deploy.md); a request
// without a conversation sends no such header. Checked against a loopback server.
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>

#include "bench/streaming_client.h"
#include "common/clock.h"

namespace seer::bench {
namespace {

class HeaderRecorder {
 public:
  HeaderRecorder() {
    server_.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) {
      header_ = req.has_header("X-Conversation-Id") ? req.get_header_value("X-Conversation-Id") : "<absent>";
      body_ = req.body;
      res.set_content("data: [DONE]\n\n", "text/event-stream");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    // Bound and listening already: a client's connection waits in the backlog until
    // the accept loop runs.
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~HeaderRecorder() {
    server_.stop();
    thread_.join();
  }
  HeaderRecorder(const HeaderRecorder&) = delete;
  HeaderRecorder& operator=(const HeaderRecorder&) = delete;

  ServerUrl url() const { return parse_server_url("http://127.0.0.1:" + std::to_string(port_)); }
  const std::string& header() const { return header_; }
  const std::string& body() const { return body_; }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::string header_, body_;  // written by the server thread before it answers
};

TEST(ConversationHeader, StatefulRequestsSendTheIdAsHeaderAndField) {
  HeaderRecorder server;
  ASSERT_GT(server.url().scheme_host_port.size(), 0u);
  ClientRequest r;
  r.prompt = "hello";
  r.conversation = "conv-7:a";
  WallClock clock;
  ClientResult result = send_streaming(server.url(), r, clock);
  EXPECT_TRUE(result.ok) << result.error;
  EXPECT_EQ(server.header(), "conv-7:a");
  EXPECT_EQ(nlohmann::json::parse(server.body()).value("conversation", ""), "conv-7:a");
}

TEST(ConversationHeader, RequestsWithoutAConversationSendNoHeader) {
  HeaderRecorder server;
  ClientRequest r;
  r.prompt = "hello";
  WallClock clock;
  ClientResult result = send_streaming(server.url(), r, clock);
  EXPECT_TRUE(result.ok) << result.error;
  EXPECT_EQ(server.header(), "<absent>");
}

}  // namespace
}  // namespace seer::bench
