#include "grammar/token_mask.h"

#include <gtest/gtest.h>

#include "grammar/gbnf_parser.h"
#include "grammar/json_schema_to_gbnf.h"
#include "sampling/rng.h"

namespace seer::grammar {
namespace {

// A vocabulary with shared prefixes, multi-byte characters split over tokens, a
// control token ("") and an end-of-generation token (id 1).
std::vector<std::string> small_vocab() {
  std::vector<std::string> v = {"", "", "{", "}", "\"", "\":", ",", " ", "\n", "a", "ab", "abc", "b", "1", "12", "-",
                                "0", ".", "e", "true", "tr", "ue", "null", "[", "]", "{\"", "\"}", "\\", "\\\"", "é",
                                "\xC3", "\xA9", "x\xC3", "\"a\"", "fal", "se", ":", "9", "ok", "\t"};
  return v;
}

// The mask by brute force: each token's bytes fed to a fresh copy of the state.
TokenMask brute_force(const Grammar& g, const MatchState& s, const TokenTrie& trie) {
  TokenMask m((static_cast<size_t>(trie.vocab_size()) + 63) / 64, 0);
  StackMachine machine(g);
  for (int32_t t = 0; t < trie.vocab_size(); ++t) {
    bool ok;
    if (trie.bytes(t).empty()) {
      ok = std::find(trie.end_of_generation().begin(), trie.end_of_generation().end(), t) !=
               trie.end_of_generation().end() &&
           StackMachine::can_end(s);
    } else {
      MatchState c = s;
      ok = machine.accept(c, trie.bytes(t));
    }
    if (ok) m[t >> 6] |= uint64_t{1} << (t & 63);
  }
  return m;
}

TEST(TokenTrie, EveryTokenWithBytesIsInTheTrieOnce) {
  TokenTrie trie(small_vocab(), {1});
  std::vector<int> seen(small_vocab().size(), 0);
  for (const auto& n : trie.nodes())
    for (uint32_t k = n.tokens_begin; k < n.tokens_end; ++k) ++seen[trie.tokens()[k]];
  for (size_t t = 0; t < seen.size(); ++t) EXPECT_EQ(seen[t], small_vocab()[t].empty() ? 0 : 1) << t;
}

TEST(TokenMask, TrieWalkEqualsBruteForceAlongRandomPaths) {
  auto trie = std::make_shared<TokenTrie>(small_vocab(), std::vector<int32_t>{1});
  const Grammar g = parse_gbnf(json_object_gbnf());
  auto compiled = std::make_shared<CompiledGrammar>(g, trie, "");
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Rng rng(seed);
    GrammarConstraint c(compiled);
    StackMachine machine(g);
    MatchState shadow = machine.initial();
    for (int step = 0; step < 40; ++step) {
      TokenMask want = brute_force(g, shadow, *trie);
      ASSERT_EQ(c.mask(), want) << "seed " << seed << " step " << step;
      std::vector<int32_t> allowed;
      for (int32_t t = 0; t < trie->vocab_size(); ++t)
        if (mask_allows(want, t)) allowed.push_back(t);
      ASSERT_FALSE(allowed.empty());
      const int32_t t = allowed[rng.next() % allowed.size()];
      ASSERT_TRUE(c.accept(t));
      if (t == 1) break;  // end of generation
      ASSERT_TRUE(machine.accept(shadow, trie->bytes(t)));
    }
  }
  EXPECT_GT(compiled->cache_size(), 0u);
}

TEST(TokenMask, EndOfGenerationOnlyWhenComplete) {
  auto trie = std::make_shared<TokenTrie>(small_vocab(), std::vector<int32_t>{1});
  auto compiled = std::make_shared<CompiledGrammar>(parse_gbnf(R"(root ::= "ab")"), trie, "");
  GrammarConstraint c(compiled);
  EXPECT_FALSE(mask_allows(c.mask(), 1));
  EXPECT_TRUE(mask_allows(c.mask(), 10));   // "ab"
  EXPECT_TRUE(mask_allows(c.mask(), 9));    // "a"
  EXPECT_FALSE(mask_allows(c.mask(), 11));  // "abc"
  EXPECT_FALSE(mask_allows(c.mask(), 0));   // a control token
  EXPECT_FALSE(c.accept(1));
  ASSERT_TRUE(c.accept(10));
  EXPECT_TRUE(c.can_end());
  const TokenMask& m = c.mask();
  for (int32_t t = 0; t < trie->vocab_size(); ++t) EXPECT_EQ(mask_allows(m, t), t == 1) << t;
  std::vector<float> logits(small_vocab().size(), 1.0f);
  c.apply(logits);
  EXPECT_EQ(logits[1], 1.0f);
  EXPECT_EQ(logits[9], -std::numeric_limits<float>::infinity());
}

TEST(TokenMask, SplitCharacterTokens) {
  auto trie = std::make_shared<TokenTrie>(small_vocab(), std::vector<int32_t>{1});
  auto compiled = std::make_shared<CompiledGrammar>(parse_gbnf(R"(root ::= "x" [é-ë])"), trie, "");
  GrammarConstraint c(compiled);
  ASSERT_TRUE(c.accept(32));                // "x\xC3": x plus half of é
  EXPECT_TRUE(mask_allows(c.mask(), 31));   // "\xA9" completes it
  EXPECT_FALSE(mask_allows(c.mask(), 29));  // a whole "é" would be a lead byte mid-character
  ASSERT_TRUE(c.accept(31));
  EXPECT_TRUE(c.can_end());
}

}  // namespace
}  // namespace seer::grammar
