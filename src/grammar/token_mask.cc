#include "grammar/token_mask.h"

#include <algorithm>
#include <limits>

namespace seer::grammar {

CompiledGrammar::CompiledGrammar(Grammar g, std::shared_ptr<const TokenTrie> trie, std::string source)
    : grammar_(std::move(g)), trie_(std::move(trie)), source_(std::move(source)) {}

std::shared_ptr<const TokenMask> CompiledGrammar::cached(const std::string& key) const {
  MutexLock lock(mutex_);
  auto it = cache_.find(key);
  return it == cache_.end() ? nullptr : it->second;
}

void CompiledGrammar::remember(std::string key, std::shared_ptr<const TokenMask> mask) const {
  const size_t bytes = key.size() + mask->size() * sizeof(uint64_t);
  MutexLock lock(mutex_);
  if (cache_bytes_ + bytes > kCacheBytes) {
    cache_.clear();
    cache_bytes_ = 0;
  }
  if (cache_.emplace(std::move(key), std::move(mask)).second) cache_bytes_ += bytes;
}

size_t CompiledGrammar::cache_size() const {
  MutexLock lock(mutex_);
  return cache_.size();
}

void compute_token_mask(StackMachine& m, const MatchState& state, const TokenTrie& trie, TokenMask& out) {
  out.assign((static_cast<size_t>(trie.vocab_size()) + 63) / 64, 0);
  thread_local std::vector<MatchState> level;  // reused: its vectors keep their capacity
  if (level.size() < trie.max_depth() + 1) level.resize(trie.max_depth() + 1);
  level[0] = state;
  const auto& nodes = trie.nodes();
  const auto& ids = trie.tokens();
  for (size_t i = 0; i < nodes.size();) {
    const TokenTrie::Node& n = nodes[i];
    MatchState& next = level[n.depth];
    m.advance(level[n.depth - 1], n.byte, next);
    if (next.dead()) {
      i = n.subtree_end;
      continue;
    }
    for (uint32_t k = n.tokens_begin; k < n.tokens_end; ++k) {
      const auto t = static_cast<size_t>(ids[k]);
      out[t >> 6] |= uint64_t{1} << (t & 63);
    }
    ++i;
  }
  if (StackMachine::can_end(state))
    for (int32_t t : trie.end_of_generation())
      if (t >= 0 && t < trie.vocab_size()) out[static_cast<size_t>(t) >> 6] |= uint64_t{1} << (t & 63);
}

GrammarConstraint::GrammarConstraint(std::shared_ptr<const CompiledGrammar> g)
    : g_(std::move(g)), machine_(g_->grammar()), state_(machine_.initial()) {}

const TokenMask& GrammarConstraint::mask() {
  if (mask_) return *mask_;
  std::string key = state_.key();
  mask_ = g_->cached(key);
  if (!mask_) {
    auto m = std::make_shared<TokenMask>();
    compute_token_mask(machine_, state_, g_->trie(), *m);
    g_->remember(std::move(key), m);
    mask_ = std::move(m);
  }
  return *mask_;
}

void GrammarConstraint::apply(std::span<float> logits) {
  const TokenMask& m = mask();
  const auto n = static_cast<int32_t>(std::min<size_t>(logits.size(), static_cast<size_t>(g_->trie().vocab_size())));
  bool any = false;
  for (size_t w = 0; w < m.size() && !any; ++w) any = m[w] != 0;
  constexpr float kRefused = -std::numeric_limits<float>::infinity();
  if (!any) {
    if (g_->trie().end_of_generation().empty()) return;  // nothing to let through: leave the logits as they are
    std::vector<float> keep;
    for (int32_t t : g_->trie().end_of_generation()) keep.push_back(t >= 0 && t < n ? logits[t] : 0.0f);
    std::fill(logits.begin(), logits.end(), kRefused);
    const auto& eog = g_->trie().end_of_generation();
    for (size_t i = 0; i < eog.size(); ++i)
      if (eog[i] >= 0 && eog[i] < n) logits[eog[i]] = keep[i];
    return;
  }
  // A word at a time: all-allowed words (string contents) are skipped, all-refused
  // words (structure) filled, only mixed words go bit by bit.
  const auto end = static_cast<size_t>(n);
  for (size_t w = 0; w * 64 < end; ++w) {
    const uint64_t bits = m[w];
    const size_t base = w * 64, stop = std::min(base + 64, end);
    if (bits == ~uint64_t{0} && stop - base == 64) continue;
    if (bits == 0) {
      std::fill(logits.begin() + base, logits.begin() + stop, kRefused);
      continue;
    }
    for (size_t t = base; t < stop; ++t)
      if (!((bits >> (t - base)) & 1)) logits[t] = kRefused;
  }
  std::fill(logits.begin() + end, logits.end(), kRefused);
}

bool GrammarConstraint::accept(int32_t token) {
  const auto& eog = g_->trie().end_of_generation();
  if (std::find(eog.begin(), eog.end(), token) != eog.end()) {
    if (!can_end()) return false;
    ++accepted_;
    return true;
  }
  if (token < 0 || token >= g_->trie().vocab_size()) return false;
  const std::string& bytes = g_->trie().bytes(token);
  if (bytes.empty()) return false;
  MatchState next = state_;
  if (!machine_.accept(next, bytes)) return false;
  state_ = std::move(next);
  mask_.reset();
  ++accepted_;
  return true;
}

}  // namespace seer::grammar
