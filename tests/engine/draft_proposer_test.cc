// Prompt-lookup drafting: the longest recent n-gram match's continuation.
#include <gtest/gtest.h>

#include "common/error.h"
#include "engine/draft_proposer.h"

namespace seer {
namespace {

using V = std::vector<int32_t>;

TEST(NgramDraftProposer, ContinuesTheMostRecentLongestMatch) {
  NgramDraftProposer d(3);
  // Last 3 tokens (7 8 9) occur at 0; their continuation is 1 2 3.
  EXPECT_EQ(d.propose(0, V{7, 8, 9, 1, 2, 3, 4}, V{5, 7, 8, 9}, 10), (V{1, 2, 3}));
  // The more recent occurrence of the trigram wins.
  EXPECT_EQ(d.propose(0, V{7, 8, 9, 1, 7, 8, 9, 4, 4}, V{7, 8, 9}, 10), (V{4, 4, 7}));
}

TEST(NgramDraftProposer, ARepeatingTextGoesOnRepeating) {
  NgramDraftProposer d(5);
  EXPECT_EQ(d.propose(0, V{5, 5, 5}, V{5}, 10), (V{5, 5, 5, 5, 5}));
  // Period 2: the match two back continues "3 4 3 4 ...".
  EXPECT_EQ(d.propose(0, V{1, 3, 4, 3, 4}, V{3, 4}, 10), (V{3, 4, 3, 4, 3}));
}

TEST(NgramDraftProposer, FallsBackToShorterNgrams) {
  NgramDraftProposer d(2);
  // No earlier "5 9" or "1 5 9"; "9" alone occurs at 1, followed by 6 6.
  EXPECT_EQ(d.propose(0, V{3, 9, 6, 6, 1, 5}, V{9}, 10), (V{6, 6}));
  NgramDraftProposer bigrams(2, 2, 3);
  EXPECT_TRUE(bigrams.propose(0, V{3, 9, 6, 6, 1, 5}, V{9}, 10).empty());
}

TEST(NgramDraftProposer, RespectsTheLimitAndHasNoGuessWithoutAMatch) {
  NgramDraftProposer d(4);
  EXPECT_EQ(d.propose(0, V{1, 2, 3, 4, 5, 1, 2}, V{}, 1), (V{3}));
  EXPECT_TRUE(d.propose(0, V{1, 2, 3, 4, 5, 1, 2}, V{}, 0).empty());
  EXPECT_TRUE(d.propose(0, V{1, 2, 3}, V{4}, 10).empty());
  EXPECT_TRUE(d.propose(0, V{1}, V{}, 10).empty());
}

TEST(NgramDraftProposer, RejectsBadSizes) {
  EXPECT_THROW(NgramDraftProposer(0), Error);
  EXPECT_THROW(NgramDraftProposer(4, 0, 3), Error);
  EXPECT_THROW(NgramDraftProposer(4, 3, 2), Error);
}

}  // namespace
}  // namespace seer
