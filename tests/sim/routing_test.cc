// Routing policies of the replica set: round-robin spreads, least-loaded picks
// the least loaded, conversation affinity keeps a conversation on one replica
// and moves only a dead replica's conversations.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <set>

#include "common/error.h"
#include "sim/routing/router.h"

namespace seer {
namespace {

TEST(Routing, RoundRobinSpreadsEvenlyAndSkipsDeadReplicas) {
  auto r = make_router("round-robin");
  std::vector<ReplicaLoad> loads(4);
  std::map<size_t, int> count;
  for (int i = 0; i < 40; ++i) ++count[r->route({"c", 10}, loads)];
  for (size_t k = 0; k < 4; ++k) EXPECT_EQ(count[k], 10);
  loads[2].alive = false;
  for (int i = 0; i < 30; ++i) EXPECT_NE(r->route({"", 10}, loads), 2u);
}

TEST(Routing, LeastLoadedPicksFewestOutstandingRequestsThenTokens) {
  auto r = make_router("least-loaded");
  std::vector<ReplicaLoad> loads(3);
  loads[0].outstanding_requests = 3;
  loads[1].outstanding_requests = 1;
  loads[2].outstanding_requests = 2;
  EXPECT_EQ(r->route({"", 5}, loads), 1u);
  loads[2].outstanding_requests = 1;
  loads[1].outstanding_tokens = 900;
  loads[2].outstanding_tokens = 100;
  EXPECT_EQ(r->route({"", 5}, loads), 2u);
  loads[2].alive = false;
  EXPECT_EQ(r->route({"", 5}, loads), 1u);
  // An idle cluster still spreads.
  std::vector<ReplicaLoad> idle(4);
  std::set<size_t> used;
  for (int i = 0; i < 4; ++i) used.insert(r->route({"", 5}, idle));
  EXPECT_EQ(used.size(), 4u);
}

TEST(Routing, ConversationAffinityKeepsAConversationOnOneReplica) {
  auto r = make_router("conversation-affinity");
  std::vector<ReplicaLoad> loads(8);
  std::map<std::string, size_t> home;
  std::set<size_t> used;
  for (int c = 0; c < 400; ++c) {
    const std::string id = fmt::format("conv-{}", c);
    home[id] = r->route({id, 10}, loads);
    used.insert(home[id]);
  }
  EXPECT_EQ(used.size(), 8u);
  for (int round = 0; round < 3; ++round) {
    loads[static_cast<size_t>(round)].outstanding_requests += 50;  // load does not move a conversation
    for (const auto& [id, replica] : home) EXPECT_EQ(r->route({id, 10}, loads), replica) << id;
  }
  // A dead replica's conversations move; no other conversation does.
  loads[5].alive = false;
  int moved = 0;
  for (const auto& [id, replica] : home) {
    const size_t now = r->route({id, 10}, loads);
    EXPECT_NE(now, 5u);
    if (replica != 5) {
      EXPECT_EQ(now, replica) << id;
    }
    moved += now != replica;
  }
  EXPECT_GT(moved, 0);
  // Requests without a conversation go round-robin.
  std::set<size_t> anonymous;
  for (int i = 0; i < 7; ++i) anonymous.insert(r->route({"", 10}, loads));
  EXPECT_EQ(anonymous.size(), 7u);
}

TEST(Routing, UnknownPolicyNamesTheFlag) {
  try {
    make_router("random");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--routing"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("conversation-affinity"), std::string::npos);
  }
}

}  // namespace
}  // namespace seer
