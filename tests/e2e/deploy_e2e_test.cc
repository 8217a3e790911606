// The scale-out recipe (deploy/start.sh, docs/deploy.md) end to end on loopback: three
// `seer serve` replicas behind HAProxy. A conversation's turns stay on one replica
// (cache hits there) and move to another when it dies; a draining replica (SIGTERM)
// finishes its stream while the balancer sends new turns elsewhere; a replica killed
// mid-stream ends that stream with an error instead of a hang. Skips when haproxy is
// not installed (scripts/install-deps.sh installs it).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "bench/streaming_client.h"
#include "e2e/deployment.h"
#include "e2e/server_process.h"
#include "e2e/wait.h"
#include "support/test_paths.h"

namespace seer::e2e {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

class DeployE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    if (haproxy_binary().empty()) GTEST_SKIP() << "haproxy is not installed (scripts/install-deps.sh installs it)";
    int status = 0;
    run_command("curl --version > /dev/null 2>&1", &status);
    if (status != 0) GTEST_SKIP() << "curl is not installed (deploy/start.sh needs it)";
  }
};

// Server-issued ids (docs/security.md): a conversation starts with "new" in its body
// on any replica; the balancer learns the issued id from that replica's
// X-Conversation-Id response header and sends the later turns back to it.
TEST_F(DeployE2e, IssuedConversationIdsStayOnTheReplicaThatIssuedThem) {
  ASSERT_FALSE(tiny_model().empty());
  Deployment d(3, tiny_model(), {"--policy", "pensieve", "--swap-blocks", "64"});
  ASSERT_TRUE(d.up());
  std::set<std::string> homes;
  for (int c = 0; c < 4; ++c) {
    nlohmann::json body = nlohmann::json::parse(completion_body("Hello", 8));
    body["conversation"] = "new";
    LbResponse t1 = lb_post(d.lb_port(), body.dump(), "");
    ASSERT_EQ(t1.status, 200) << t1.body;
    const std::string id = nlohmann::json::parse(t1.body).value("conversation", "");
    ASSERT_EQ(id.rfind("conv_", 0), 0u) << t1.body;
    homes.insert(t1.replica);
    for (int turn = 0; turn < 2; ++turn) {
      const double hits_before = cache_hits(d.replica(t1.replica));
      LbResponse next = lb_post(d.lb_port(), completion_body(" again", 8), id);
      ASSERT_EQ(next.status, 200) << next.body;
      EXPECT_EQ(next.replica, t1.replica) << "turn " << turn + 2 << " of " << id << " left the replica that issued it";
      EXPECT_GT(cache_hits(d.replica(t1.replica)), hits_before) << "the turn did not reuse its history's KV";
    }
  }
  EXPECT_GE(homes.size(), 2u) << "new conversations were not spread over the replicas";
}

TEST_F(DeployE2e, ConversationStaysOnOneReplicaAndMovesWhenItDies) {
  ASSERT_FALSE(tiny_model().empty());
  Deployment d(3, tiny_model(), {"--policy", "pensieve", "--swap-blocks", "64", "--trust-client-conversation-ids"});
  ASSERT_TRUE(d.up());

  LbResponse t1 = lb_post(d.lb_port(), completion_body("Hello", 8), "conv-affinity");
  ASSERT_EQ(t1.status, 200) << t1.body;
  ASSERT_FALSE(t1.replica.empty());
  const Replica& home = d.replica(t1.replica);
  EXPECT_EQ(cache_hits(home), 0);
  LbResponse t2 = lb_post(d.lb_port(), completion_body(" again", 8), "conv-affinity");
  ASSERT_EQ(t2.status, 200) << t2.body;
  EXPECT_EQ(t2.replica, home.name) << "the second turn left the conversation's replica";
  EXPECT_GT(cache_hits(home), 0) << "the second turn did not reuse the first turn's KV";

  // Without the header the balancer spreads requests (round-robin).
  std::set<std::string> spread;
  for (int i = 0; i < 6; ++i) {
    LbResponse r = lb_post(d.lb_port(), completion_body("Hi", 2), "");
    EXPECT_EQ(r.status, 200) << r.body;
    spread.insert(r.replica);
  }
  EXPECT_GE(spread.size(), 2u);

  ASSERT_EQ(kill(home.pid, SIGKILL), 0);
  ASSERT_TRUE(wait_until([&] { return gone(home); }));
  // Its health check fails; from then on the hash sends the conversation elsewhere.
  ASSERT_TRUE(wait_until([&] { return lb_status(d, home).rfind("DOWN", 0) == 0; })) << lb_status(d, home);
  LbResponse t3 = lb_post(d.lb_port(), completion_body(" and then", 8), "conv-affinity");
  ASSERT_EQ(t3.status, 200) << t3.body;
  EXPECT_NE(t3.replica, home.name);
  // The conversation now lives on its new replica: the next turn stays there and hits.
  LbResponse t4 = lb_post(d.lb_port(), completion_body(" the end", 8), "conv-affinity");
  ASSERT_EQ(t4.status, 200) << t4.body;
  EXPECT_EQ(t4.replica, t3.replica);
  EXPECT_GT(cache_hits(d.replica(t4.replica)), 0);

  // DELETE carries the id in its path; with the header the balancer routes it to the
  // conversation's replica (a header naming another conversation is refused).
  const std::string del = "DELETE /v1/conversations/conv-affinity HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  LbResponse mismatch = lb_send(d.lb_port(), del + "X-Conversation-Id: conv-other\r\n\r\n");
  EXPECT_EQ(mismatch.status, 400) << mismatch.body;
  LbResponse deleted = lb_send(d.lb_port(), del + "X-Conversation-Id: conv-affinity\r\n\r\n");
  EXPECT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_EQ(deleted.replica, t4.replica);
}

TEST_F(DeployE2e, DrainingReplicaFinishesItsStreamWhileNewTurnsGoElsewhere) {
  ASSERT_FALSE(tiny_long_context_model().empty());
  Deployment d(3, tiny_long_context_model(), {"--shutdown-timeout", "60", "--trust-client-conversation-ids"});
  ASSERT_TRUE(d.up());
  WallClock clock;
  bench::ClientResult result;
  // A jthread joins even when an ASSERT ends the test early (a std::thread would
  // terminate the process and leave the deployment running).
  std::jthread stream([&] {
    bench::ClientRequest r;
    r.prompt = "Hi";
    r.max_tokens = 3000;
    r.conversation = "conv-drain";
    r.timeout_s = 120;
    result = bench::send_streaming(bench::parse_server_url(d.lb_url()), r, clock);
  });
  std::string busy;
  ASSERT_TRUE(wait_until([&] { return !(busy = running_replica(d)).empty(); }));
  const Replica& draining = d.replica(busy);
  ASSERT_EQ(kill(draining.pid, SIGTERM), 0);
  // While it finishes the stream, its health check fails and new requests are refused...
  ASSERT_TRUE(wait_until([&] { return http_get(draining.port, "/health").status != 200; }));
  EXPECT_TRUE(wait_until([&] { return lb_status(d, draining).rfind("DOWN", 0) == 0; })) << lb_status(d, draining);
  // ...and the balancer sends the conversation's next turn to another replica.
  LbResponse next = lb_post(d.lb_port(), completion_body("Hello", 4), "conv-drain");
  EXPECT_EQ(next.status, 200) << next.body;
  EXPECT_NE(next.replica, draining.name);
  stream.join();
  EXPECT_TRUE(result.ok) << result.error;
  EXPECT_EQ(result.completion_tokens, 3000);
  EXPECT_EQ(result.finish_reason, "length");
  EXPECT_TRUE(wait_until([&] { return gone(draining); }));
  EXPECT_NE(d.log(draining.name).find("SIGTERM received"), std::string::npos);
}

TEST_F(DeployE2e, ReplicaKilledMidStreamEndsTheStreamWithAnError) {
  ASSERT_FALSE(tiny_long_context_model().empty());
  Deployment d(3, tiny_long_context_model(), {"--trust-client-conversation-ids"});
  ASSERT_TRUE(d.up());
  WallClock clock;
  bench::ClientResult result;
  std::jthread stream([&] {
    bench::ClientRequest r;
    r.prompt = "Hi";
    r.max_tokens = 16000;  // seconds on the 16k-context tiny model
    r.conversation = "conv-crash";
    r.timeout_s = 120;     // a hang would end here, with a time-out error
    result = bench::send_streaming(bench::parse_server_url(d.lb_url()), r, clock);
  });
  std::string busy;
  ASSERT_TRUE(wait_until([&] { return !(busy = running_replica(d)).empty(); }));
  const Replica& dead = d.replica(busy);
  ASSERT_EQ(kill(dead.pid, SIGKILL), 0);
  stream.join();
  EXPECT_FALSE(result.ok);
  std::fprintf(stderr, "the stream ended with: %s\n", result.error.c_str());
  EXPECT_LT(result.completion_tokens, 16000);
  EXPECT_EQ(result.error.find("timeout"), std::string::npos) << result.error;
  EXPECT_EQ(result.error.find("Timeout"), std::string::npos) << result.error;
  // The conversation's next turn is served by a surviving replica.
  LbResponse next = lb_post(d.lb_port(), completion_body("Hello", 4), "conv-crash");
  EXPECT_EQ(next.status, 200) << next.body;
  EXPECT_NE(next.replica, dead.name);
}

}  // namespace
}  // namespace seer::e2e
