#include "grammar/token_trie.h"

#include <algorithm>

#include "common/error.h"

namespace seer::grammar {

TokenTrie::TokenTrie(const std::vector<std::string>& token_bytes, std::vector<int32_t> end_of_generation)
    : vocab_size_(static_cast<int32_t>(token_bytes.size())), bytes_(token_bytes), eog_(std::move(end_of_generation)) {
  for (int32_t id = 0; id < vocab_size_; ++id)
    if (!bytes_[id].empty()) sorted_ids_.push_back(id);
  std::sort(sorted_ids_.begin(), sorted_ids_.end(),
            [&](int32_t a, int32_t b) { return bytes_[a] < bytes_[b] || (bytes_[a] == bytes_[b] && a < b); });
  // In sorted order, each string adds the nodes past its common prefix with the
  // previous one; open[d] is the node at depth d + 1 on the current path.
  std::vector<uint32_t> open;
  const std::string* prev = nullptr;
  for (size_t k = 0; k < sorted_ids_.size(); ++k) {
    const std::string& s = bytes_[sorted_ids_[k]];
    if (s.size() > 0xFFFF) fail("tokenizer: token {} is {} bytes long", sorted_ids_[k], s.size());
    size_t common = 0;
    if (prev) while (common < prev->size() && common < s.size() && (*prev)[common] == s[common]) ++common;
    for (size_t d = common; d < open.size(); ++d) nodes_[open[d]].subtree_end = static_cast<uint32_t>(nodes_.size());
    open.resize(common);
    for (size_t d = common; d < s.size(); ++d) {
      open.push_back(static_cast<uint32_t>(nodes_.size()));
      Node n;
      n.byte = static_cast<uint8_t>(s[d]);
      n.depth = static_cast<uint16_t>(d + 1);
      n.tokens_begin = n.tokens_end = static_cast<uint32_t>(k);
      nodes_.push_back(n);
    }
    Node& leaf = nodes_[open.back()];
    if (leaf.tokens_begin == leaf.tokens_end) leaf.tokens_begin = static_cast<uint32_t>(k);
    leaf.tokens_end = static_cast<uint32_t>(k + 1);
    max_depth_ = std::max(max_depth_, s.size());
    prev = &s;
  }
  for (uint32_t n : open) nodes_[n].subtree_end = static_cast<uint32_t>(nodes_.size());
}

}  // namespace seer::grammar
