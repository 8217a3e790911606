#include "grammar/grammar_cache.h"

#include "grammar/gbnf_parser.h"

namespace seer::grammar {

std::shared_ptr<const CompiledGrammar> GrammarCache::get(const std::string& gbnf) {
  std::shared_ptr<const TokenTrie> trie;
  {
    MutexLock lock(mutex_);
    if (auto it = by_text_.find(gbnf); it != by_text_.end()) {
      order_.splice(order_.begin(), order_, it->second.second);
      return it->second.first;
    }
    if (!trie_) trie_ = make_trie_();
    trie = trie_;
  }
  auto compiled = std::make_shared<const CompiledGrammar>(parse_gbnf(gbnf), trie, gbnf);
  MutexLock lock(mutex_);
  if (auto it = by_text_.find(gbnf); it != by_text_.end()) return it->second.first;
  order_.push_front(gbnf);
  by_text_[gbnf] = {compiled, order_.begin()};
  if (by_text_.size() > capacity_) {
    by_text_.erase(order_.back());
    order_.pop_back();
  }
  return compiled;
}

}  // namespace seer::grammar
