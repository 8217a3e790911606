#pragma once
// Compiled grammars by GBNF text, for one vocabulary: requests that send the same
// schema share one CompiledGrammar and so one mask cache. The vocabulary trie is
// built on first use (a 150k vocabulary takes tens of milliseconds). Thread-safe.
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>

#include "common/thread_annotations.h"
#include "grammar/token_mask.h"

namespace seer::grammar {

class GrammarCache {
 public:
  explicit GrammarCache(std::function<std::shared_ptr<const TokenTrie>()> make_trie, size_t capacity = 64)
      : make_trie_(std::move(make_trie)), capacity_(capacity) {}
  GrammarCache(const GrammarCache&) = delete;
  GrammarCache& operator=(const GrammarCache&) = delete;

  // Throws seer::Error when the text does not parse.
  [[nodiscard]] std::shared_ptr<const CompiledGrammar> get(const std::string& gbnf);

 private:
  std::function<std::shared_ptr<const TokenTrie>()> make_trie_;
  const size_t capacity_;
  Mutex mutex_;
  std::shared_ptr<const TokenTrie> trie_ GUARDED_BY(mutex_);
  std::list<std::string> order_ GUARDED_BY(mutex_);  // most recent first
  std::unordered_map<std::string, std::pair<std::shared_ptr<const CompiledGrammar>, std::list<std::string>::iterator>>
      by_text_ GUARDED_BY(mutex_);
};

}  // namespace seer::grammar
