// Paged K/V storage with layer groups (kv/kv_layer_groups.h): a block holds one
// group's layers, each layer at its slot, and the per-layer part of a plan's ops
// (what the pipelined forward pass runs, layer by layer) leaves the same bytes in
// both tiers as running the whole ops, even where layers of different groups share a
// slot and an op overwrites another's source.
#include <cmath>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "backend/paged_attention.h"
#include "backend/paged_kv_storage.h"
#include "kv/kv_manager.h"
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

// A sequence recomputing its leading range [0, 6) and computing [20, 24) in one batch
// (the conversation cache's dropped blocks, recomputed with the new message): the
// local layer's blocks between the two ranges are freed. Each range is its own tile,
// reading only its windows (debug builds assert on a freed block), and both match a
// direct computation. (One query head per K/V head: a tile of up to 16 tokens would
// hold both ranges.)
TEST(PagedKvGroups, TwoRangesOfASequenceReadOnlyTheirWindows) {
  const int n_heads = 1, n_kv = 1, hd = 32, bs = 4, window = 4;
  KvShape shape{2, n_kv, hd, bs, KvType::F32};
  shape.layer_groups = kv_layer_groups({true, false});  // layer 0 local, layer 1 global: 2 groups
  PagedKvStorage kv(shape, 16, 0);
  // Logical blocks 0..5; the local group's blocks 2 and 3 are trimmed.
  ForwardSequence seq;
  for (int32_t lb = 0; lb < 6; ++lb) {
    seq.block_table.push_back(2 * lb);
    seq.block_table.push_back(lb == 2 || lb == 3 ? KvTable::kTrimmed : 2 * lb + 1);
  }
  std::vector<float> keys(24 * hd), values(24 * hd);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = std::sin(0.37f * i), values[i] = std::cos(0.11f * i);
  ForwardBatch batch;
  batch.sequences.push_back(seq);
  for (int p = 0; p < 24; ++p) {
    if (p >= 6 && p < 20) continue;
    kv.write(kv.block_of(seq.block_table, p / bs, 0), p % bs, 0, &keys[p * hd], &values[p * hd]);
    batch.add(0, 0, p, true);
  }
  for (int p = 16; p < 20; ++p)  // the window of position 20 reaches back to 17
    kv.write(kv.block_of(seq.block_table, p / bs, 0), p % bs, 0, &keys[p * hd], &values[p * hd]);
  std::vector<float> q(batch.size() * n_heads * hd), out(q.size());
  for (size_t i = 0; i < q.size(); ++i) q[i] = std::sin(0.05f * i + 1.0f);
  ThreadPool pool(2);
  PagedAttention att(n_heads, n_kv, hd, pool.size(), 0.0f, 0.0f);
  att.run(pool, batch, kv, 0, q.data(), out.data(), window);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  for (size_t t = 0; t < batch.size(); ++t) {
    const int pos = batch.positions[t];
    for (int h = 0; h < n_heads; ++h) {
      const float* qh = &q[(t * n_heads + h) * hd];
      std::vector<double> w;
      double mx = -1e300, sum = 0;
      for (int j = std::max(0, pos - window + 1); j <= pos; ++j) {
        double s = 0;
        for (int d = 0; d < hd; ++d) s += qh[d] * keys[j * hd + d];
        w.push_back(s * scale);
        mx = std::max(mx, w.back());
      }
      for (double& x : w) sum += (x = std::exp(x - mx));
      for (int d = 0; d < hd; ++d) {
        double o = 0;
        for (size_t k = 0; k < w.size(); ++k) o += w[k] / sum * values[(std::max(0, pos - window + 1) + k) * hd + d];
        EXPECT_NEAR(out[(t * n_heads + h) * hd + d], o, 1e-4) << "position " << pos << " head " << h;
      }
    }
  }
}

}  // namespace
}  // namespace seer
