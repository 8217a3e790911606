// The conversation id from the body field and the X-Conversation-Id header.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "server/api_error.h"
#include "server/conversation_id.h"

namespace seer::server {
namespace {

constexpr size_t kMax = 128;
const ConversationIdRules kChosen{kMax, /*client_chosen_ids=*/true};
const ConversationIdRules kIssuedOnly{kMax, /*client_chosen_ids=*/false};

TEST(ConversationId, HeaderAloneNamesTheConversation) {
  EXPECT_EQ(resolve_conversation_id("", "c-7:a.b_c", kChosen), "c-7:a.b_c");
}

TEST(ConversationId, BodyAloneNamesTheConversation) { EXPECT_EQ(resolve_conversation_id("c1", "", kChosen), "c1"); }

TEST(ConversationId, NeitherMeansNone) { EXPECT_EQ(resolve_conversation_id("", "", kChosen), ""); }

TEST(ConversationId, SameIdInBothIsAccepted) { EXPECT_EQ(resolve_conversation_id("c1", "c1", kChosen), "c1"); }

TEST(ConversationId, DifferentIdsAre400NamingBoth) {
  try {
    (void)resolve_conversation_id("c1", "c2", kChosen);
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
      (void)resolve_conversation_id("", bad, kChosen);
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

TEST(ConversationId, NewIssuesAFreshRandomIdFromBodyOrHeader) {
  const std::string a = resolve_conversation_id("new", "", kIssuedOnly);
  const std::string b = resolve_conversation_id("", "new", kIssuedOnly);
  EXPECT_TRUE(is_issued_conversation_id(a)) << a;
  EXPECT_TRUE(is_issued_conversation_id(b)) << b;
  EXPECT_NE(a, b);
  EXPECT_EQ(a.size(), 37u);
}

TEST(ConversationId, WithoutKeysOnlyIssuedIdsAreAccepted) {
  const std::string issued = issue_conversation_id();
  EXPECT_EQ(resolve_conversation_id(issued, "", kIssuedOnly), issued);
  EXPECT_EQ(resolve_existing_conversation_id(issued, issued, kIssuedOnly), issued);
  for (const char* chosen : {"acct-alice-1", "conv_0123", "conv_0123456789ABCDEF0123456789abcdef"}) {
    try {
      (void)resolve_conversation_id(chosen, "", kIssuedOnly);
      ADD_FAILURE() << chosen << " was accepted";
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status(), 400);
      EXPECT_EQ(e.code(), "conversation_id_not_issued");
    }
  }
  EXPECT_EQ(resolve_conversation_id("acct-alice-1", "", kChosen), "acct-alice-1");
}

TEST(ConversationId, NewNamesNothingToDelete) {
  EXPECT_THROW((void)resolve_existing_conversation_id("new", "", kChosen), ApiError);
}

}  // namespace
}  // namespace seer::server
