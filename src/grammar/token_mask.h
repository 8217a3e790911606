#pragma once
// Which tokens a grammar allows next. A CompiledGrammar is a Grammar bound to a
// vocabulary's TokenTrie plus a cache of masks by matcher state, shared (read-mostly,
// behind a mutex) by every request that uses the same grammar text; a
// GrammarConstraint is one request's position in it. A mask is a bit per token:
// walk the trie from the current state, prune every subtree whose prefix the
// matcher refuses; the end-of-generation tokens are allowed exactly when the grammar
// can end.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/thread_annotations.h"
#include "grammar/grammar.h"
#include "grammar/grammar_matcher.h"
#include "grammar/token_trie.h"

namespace seer::grammar {

using TokenMask = std::vector<uint64_t>;  // bit t set: token t allowed

inline bool mask_allows(const TokenMask& m, int32_t t) { return (m[static_cast<size_t>(t) >> 6] >> (t & 63)) & 1; }

class CompiledGrammar {
 public:
  CompiledGrammar(Grammar g, std::shared_ptr<const TokenTrie> trie, std::string source);
  const Grammar& grammar() const { return grammar_; }
  const TokenTrie& trie() const { return *trie_; }
  const std::string& source() const { return source_; }  // the GBNF text

  // Cached mask for a state key, or null.
  std::shared_ptr<const TokenMask> cached(const std::string& key) const;
  void remember(std::string key, std::shared_ptr<const TokenMask> mask) const;
  size_t cache_size() const;

  // Memory the mask cache may hold; past it, it is cleared (the states a request
  // revisits come back within a few steps).
  static constexpr size_t kCacheBytes = 64u << 20;

 private:
  Grammar grammar_;
  std::shared_ptr<const TokenTrie> trie_;
  std::string source_;
  mutable Mutex mutex_;
  mutable std::unordered_map<std::string, std::shared_ptr<const TokenMask>> cache_ GUARDED_BY(mutex_);
  mutable size_t cache_bytes_ GUARDED_BY(mutex_) = 0;
};

// Computes the mask of `state` by a trie walk (no cache).
void compute_token_mask(StackMachine& m, const MatchState& state, const TokenTrie& trie, TokenMask& out);

class GrammarConstraint {
 public:
  explicit GrammarConstraint(std::shared_ptr<const CompiledGrammar> g);

  // The tokens allowed after what was accepted so far (cached by state).
  const TokenMask& mask();
  // True when mask() is computed for the current state (it returns it at once).
  bool mask_ready() const { return mask_ != nullptr; }
  // Sets every refused token's logit to -inf. When no token is allowed (the grammar
  // is complete and the vocabulary has no end-of-generation token, or the vocabulary
  // cannot spell what the grammar needs), the end-of-generation ids are let through.
  void apply(std::span<float> logits);
  // Advances by a sampled token; false when the grammar refuses it (the state is then
  // unchanged). End-of-generation tokens are accepted when can_end().
  [[nodiscard]] bool accept(int32_t token);
  bool can_end() const { return StackMachine::can_end(state_); }
  size_t accepted() const { return accepted_; }
  const CompiledGrammar& grammar() const { return *g_; }

 private:
  std::shared_ptr<const CompiledGrammar> g_;
  StackMachine machine_;
  MatchState state_;
  std::shared_ptr<const TokenMask> mask_;  // of state_, null when stale
  size_t accepted_ = 0;
};

}  // namespace seer::grammar
