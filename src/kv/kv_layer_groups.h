#pragma once
// How a model's layers share pool blocks (docs/models.md, "K/V of sliding-window
// layers"; vLLM v1's hybrid allocator in one pool). A pool block holds the K/V of
// G layers for block_size positions, G = the number of layers that attend to every
// position (global). Those form group 0; the sliding-window (local) layers form
// groups of G after it, the last one padded. Every logical block then takes one
// pool block per group, and a local group's blocks behind every window can be
// freed (KvManager::trim) while the global group's stay.
//
// A model without local layers, or with local layers only, has one group of every
// layer: one pool block per logical block, nothing trimmed.
#include <cstdint>
#include <vector>

#include "kv/kv_manager.h"

namespace seer {

struct KvLayerGroups {
  int32_t groups = 1;
  int32_t local_groups = 0;      // the last ones
  int32_t layers_per_block = 0;  // G
  std::vector<int32_t> group;    // per layer
  std::vector<int32_t> slot;     // per layer: its place among the block's G layers

  // The groups into `kv` (block_size, pool sizes and bytes are the caller's).
  void apply(KvConfig& kv, int32_t window) const;
  // The part of a quantity summed over every layer (K/V bytes per token) that one
  // pool block's layers hold.
  double block_share(double every_layer) const {
    if (one_block_holds_all()) return every_layer;
    return every_layer / static_cast<double>(group.size()) * layers_per_block;
  }
  int64_t block_share(int64_t every_layer) const {
    if (one_block_holds_all()) return every_layer;
    return every_layer / static_cast<int64_t>(group.size()) * layers_per_block;
  }
  bool one_block_holds_all() const {
    return group.empty() || layers_per_block == static_cast<int32_t>(group.size());
  }
};

// `local[l]`: layer l attends to a sliding window. `split` false keeps one group
// (every position of every layer kept: --swa-kv full).
KvLayerGroups kv_layer_groups(const std::vector<bool>& local, bool split = true);

}  // namespace seer
