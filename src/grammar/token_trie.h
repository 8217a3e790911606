#pragma once
// The vocabulary as the grammar sees it: every token's decoded bytes in a trie laid
// out in preorder, so a mask walk feeds each shared prefix to the matcher once and
// skips a whole subtree the moment its prefix is refused. Built once per model and
// shared by every constrained request.
#include <cstdint>
#include <string>
#include <vector>

namespace seer::grammar {

class TokenTrie {
 public:
  struct Node {
    uint8_t byte = 0;
    uint16_t depth = 0;        // 1 for a first byte
    uint32_t subtree_end = 0;  // index of the first node after this subtree
    uint32_t tokens_begin = 0, tokens_end = 0;  // ids ending here: tokens()[begin, end)
  };

  // token_bytes[id]: the raw bytes of token id ("" for control tokens, which are
  // never allowed under a grammar except the end-of-generation ids, allowed when the
  // grammar can end).
  TokenTrie(const std::vector<std::string>& token_bytes, std::vector<int32_t> end_of_generation);

  int32_t vocab_size() const { return vocab_size_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<int32_t>& tokens() const { return sorted_ids_; }
  const std::vector<int32_t>& end_of_generation() const { return eog_; }
  const std::string& bytes(int32_t id) const { return bytes_[id]; }
  size_t max_depth() const { return max_depth_; }

 private:
  int32_t vocab_size_ = 0;
  std::vector<std::string> bytes_;
  std::vector<Node> nodes_;
  std::vector<int32_t> sorted_ids_;
  std::vector<int32_t> eog_;
  size_t max_depth_ = 0;
};

}  // namespace seer::grammar
