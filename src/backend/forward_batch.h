#pragma once
// The input of one forward pass: a flat batch of tokens from many sequences
// (docs/architecture.md §1.3). Any mix of whole prompts, prompt chunks and single decode tokens;
// one sequence may contribute several disjoint position ranges (recomputation of
// dropped leading tokens plus a new prompt, docs/architecture.md §1.6).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace seer {

struct ForwardSequence {
  // Device block ids; position p lives in block block_table[p / block_size],
  // slot p % block_size. Must cover every position the batch writes or reads.
  std::vector<int32_t> block_table;
};

struct ForwardBatch {
  std::vector<int32_t> tokens;     // one entry per token in the batch
  std::vector<int32_t> positions;  // absolute position of each token in its sequence
  std::vector<int32_t> seq_index;  // index into `sequences` for each token
  std::vector<ForwardSequence> sequences;
  // Indices into `tokens` whose logits are wanted, in output order.
  std::vector<int32_t> logit_rows;

  size_t size() const { return tokens.size(); }
  void add(int32_t seq, int32_t token, int32_t pos, bool want_logits) {
    if (want_logits) logit_rows.push_back(static_cast<int32_t>(tokens.size()));
    tokens.push_back(token);
    positions.push_back(pos);
    seq_index.push_back(seq);
  }
};

}  // namespace seer
