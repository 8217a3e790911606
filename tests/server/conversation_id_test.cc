// The conversation id from the body field and the X-Conversation-Id header.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "server/api_error.h"
#include "server/conversation_id.h"

namespace seer::server {
namespace {

constexpr size_t kMax = 128;

TEST(ConversationId, HeaderAloneNamesTheConversation) {
  EXPECT_EQ(resolve_conversation_id("", "c-7:a.b_c", kMax), "c-7:a.b_c");
}

TEST(ConversationId, BodyAloneNamesTheConversation) { EXPECT_EQ(resolve_conversation_id("c1", "", kMax), "c1"); }

TEST(ConversationId, NeitherMeansNone) { EXPECT_EQ(resolve_conversation_id("", "", kMax), ""); }

TEST(ConversationId, SameIdInBothIsAccepted) { EXPECT_EQ(resolve_conversation_id("c1", "c1", kMax), "c1"); }

TEST(ConversationId, DifferentIdsAre400NamingBoth) {
  try {
    (void)resolve_conversation_id("c1", "c2", kMax);
    FAIL() << "no error";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 400);
    EXPECT_EQ(e.code(), "conversation_mismatch");
    EXPECT_NE(std::string(e.what()).find("'c1'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'c2'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("X-Conversation-Id"), std::string::npos) << e.what();
  }
}

TEST(ConversationId, MalformedHeaderIs400NamingTheHeader) {
  for (const std::string& bad : std::vector<std::string>{"a b", "a/../b", std::string(kMax + 1, 'c'), "\xc3\xa9"}) {
    try {
      (void)resolve_conversation_id("", bad, kMax);
      FAIL() << "accepted '" << bad << "'";
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status(), 400);
      EXPECT_EQ(e.param(), "X-Conversation-Id");
    }
  }
}

TEST(ConversationId, ValidityFollowsTheBodyFieldsRule) {
  EXPECT_TRUE(valid_conversation_id("A-z_0.9:x", kMax));
  EXPECT_TRUE(valid_conversation_id(std::string(kMax, 'c'), kMax));
  EXPECT_FALSE(valid_conversation_id("", kMax));
  EXPECT_FALSE(valid_conversation_id(std::string(kMax + 1, 'c'), kMax));
  EXPECT_FALSE(valid_conversation_id("a\tb", kMax));
}

}  // namespace
}  // namespace seer::server
