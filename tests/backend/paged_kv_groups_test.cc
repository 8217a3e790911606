// Paged K/V storage with layer groups (kv/kv_layer_groups.h): a block holds one
// group's layers, each layer at its slot, and the per-layer part of a plan's ops
// (what the pipelined forward pass runs, layer by layer) leaves the same bytes in
// both tiers as running the whole ops, even where layers of different groups share a
// slot and an op overwrites another's source.
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "backend/paged_kv_storage.h"
#include "common/error.h"

namespace seer {
namespace {

// Layers 0, 1 and 3 attend to a window, layer 2 everywhere: blocks of one layer, four
// groups (layer 2's, then one per local layer), every layer at slot 0.
KvShape grouped_shape() {
  KvShape s{4, 2, 32, 4, KvType::F32};
  s.layer_groups = kv_layer_groups({true, true, false, true});
  return s;
}

std::vector<uint8_t> bytes(const PagedKvStorage& kv, bool host, int32_t blocks) {
  std::vector<uint8_t> all(kv.block_bytes() * static_cast<size_t>(blocks));
  for (int32_t b = 0; b < blocks; ++b) kv.read_block(host, b, all.data() + kv.block_bytes() * static_cast<size_t>(b));
  return all;
}

TEST(PagedKvGroups, ABlockHoldsOneGroupsLayersAtTheirSlots) {
  PagedKvStorage kv(grouped_shape(), 8, 0);
  EXPECT_EQ(kv.groups(), 4);
  EXPECT_EQ(kv.group_of(2), 0);
  EXPECT_EQ(kv.group_of(0), 1);
  EXPECT_EQ(kv.group_of(3), 3);
  EXPECT_EQ(kv.block_bytes(), 2u * 2 * 32 * 4 * sizeof(float));  // one layer: K and V of 2 heads
  // Logical block 1 of a table with 4 entries per logical block.
  const std::vector<int32_t> table = {0, 1, 2, 3, 7, 6, 5, 4};
  EXPECT_EQ(kv.block_of(table, 1, 2), 7);
  EXPECT_EQ(kv.block_of(table, 1, 0), 6);
  EXPECT_EQ(kv.block_of(table, 1, 3), 4);
  // Layers 0 and 2 share slot 0 of different blocks: writing one leaves the other.
  std::vector<float> k(64, 1.0f), v(64, 2.0f), k2(64, 3.0f), v2(64, 4.0f);
  kv.write(5, 1, 0, k.data(), v.data());
  kv.write(6, 1, 2, k2.data(), v2.data());
  EXPECT_EQ(static_cast<const float*>(kv.k_block(5, 0, 0))[1], 1.0f);  // K transposed: [head_dim][block_size]
  EXPECT_EQ(static_cast<const float*>(kv.k_block(6, 2, 0))[1], 3.0f);
  EXPECT_EQ(static_cast<const float*>(kv.v_block(5, 0, 1))[32], 2.0f);  // V: [block_size][head_dim], slot 1
}

TEST(PagedKvGroups, RejectsGroupsThatDoNotCoverTheModelsLayers) {
  KvShape s = grouped_shape();
  s.n_layers = 5;
  EXPECT_THROW(PagedKvStorage(s, 4, 0), Error);
}

TEST(PagedKvGroups, PerLayerOpsLeaveTheBytesOfWholeOps) {
  const int32_t device = 8, host = 4;
  PagedKvStorage whole(grouped_shape(), device, host), layered(grouped_shape(), device, host);
  // Distinct bytes in every device block, layer and slot.
  for (PagedKvStorage* kv : {&whole, &layered})
    for (int32_t b = 0; b < device; ++b)
      for (int layer = 0; layer < 4; ++layer)
        for (int slot = 0; slot < 4; ++slot) {
          std::vector<float> k(64), v(64);
          for (int i = 0; i < 64; ++i) k[i] = static_cast<float>(b * 1000 + layer * 100 + slot * 10 + i % 10), v[i] = -k[i];
          kv->write(b, slot, layer, k.data(), v.data());
        }
  // Block 1 copied to 2, then 3 into 1 (1 was a source), a swap out and back in.
  const std::vector<KvOp> ops = {{KvOpKind::Copy, 1, 2},
                                 {KvOpKind::Copy, 3, 1},
                                 {KvOpKind::SwapOut, 2, 0},
                                 {KvOpKind::SwapIn, 0, 5},
                                 {KvOpKind::SwapOut, 4, 3}};
  for (const KvOp& op : ops) {
    switch (op.kind) {
      case KvOpKind::Copy: whole.copy_device_block(op.src, op.dst); break;
      case KvOpKind::SwapOut: whole.swap_out(op.src, op.dst); break;
      case KvOpKind::SwapIn: whole.swap_in(op.src, op.dst); break;
    }
  }
  for (int layer = 0; layer < 4; ++layer)
    for (const KvOp& op : ops) layered.run_layer(op, layer);
  EXPECT_EQ(bytes(layered, false, device), bytes(whole, false, device));
  EXPECT_EQ(bytes(layered, true, host), bytes(whole, true, host));
}

}  // namespace
}  // namespace seer
