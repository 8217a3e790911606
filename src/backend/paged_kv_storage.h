#pragma once
// K/V storage of the CPU backend: two tiers of fixed-size blocks (device = the
// bounded RAM pool the forward pass reads, host = the slower/larger tier swapped
// to). One block holds block_size positions of every KV head of a layer group
// (every layer, for a model without sliding-window groups), so a swap or copy is
// one memcpy. A sequence's block table has groups() entries per logical block:
// layer l reads entry (position / block_size) * groups() + group_of(l).
// Elements are f32, f16, bf16, q8_0 or q4_0 (KvShape::type): K/V
// are rounded (quantized) once when written and widened to f32 inside the attention
// kernels.
//
// Within a block, for each layer and KV head: K transposed as [head_dim][block_size]
// (the attention kernel computes block_size scores with one vector FMA per head
// element), then V as [block_size][head_dim]. Q8_0 and Q4_0 keep K untransposed,
// like V: [block_size][head_dim / 32] blocks each, since their blocks run along the
// head dimension.
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "kv/kv_layer_groups.h"
#include "kv/kv_types.h"
#include "model/kv_type.h"

namespace seer {

struct KvShape {
  int n_layers = 0;
  int n_kv_heads = 0;
  int head_dim = 0;
  int block_size = 16;
  KvType type = KvType::F32;
  // Layers per block and their places (kv/kv_layer_groups.h); empty: every layer in
  // one block, layer l at slot l.
  KvLayerGroups layer_groups{};
};

class PagedKvStorage {
 public:
  // Throws seer::Error for a head dimension the type cannot store (check_kv_head_dim).
  PagedKvStorage(const KvShape& shape, int device_blocks, int host_blocks);

  const KvShape& shape() const { return shape_; }
  KvType type() const { return shape_.type; }
  int device_blocks() const { return device_blocks_; }
  int host_blocks() const { return host_blocks_; }
  size_t block_bytes() const { return block_bytes_; }
  int groups() const { return shape_.layer_groups.groups; }
  int group_of(int layer) const { return shape_.layer_groups.group[static_cast<size_t>(layer)]; }
  // The device block of `layer` for logical block `logical` in a sequence's table.
  int32_t block_of(const std::vector<int32_t>& table, int32_t logical, int layer) const {
    return table[static_cast<size_t>(logical) * groups() + group_of(layer)];
  }
  // K and V bytes of one token across all layers.
  size_t bytes_per_token() const {
    return kv_bytes_per_token(shape_.n_layers, shape_.n_kv_heads, shape_.head_dim, shape_.type);
  }

  // [head_dim][block_size] keys of (device block, layer, KV head), elements of type()
  // ([block_size] rows of 32-element blocks for Q8_0 / Q4_0).
  const void* k_block(int32_t block, int layer, int kv_head) const { return head_base(block, layer, kv_head); }
  // [block_size][head_dim] values of (device block, layer, KV head), elements of type()
  // (rows of 32-element blocks for Q8_0 / Q4_0).
  const void* v_block(int32_t block, int layer, int kv_head) const {
    return head_base(block, layer, kv_head) + head_bytes();
  }
  // Bytes of one (layer, KV head) K or V piece of a block.
  size_t head_bytes() const {
    return kv_row_bytes(shape_.type, shape_.head_dim) * shape_.block_size;
  }
  // Stores the K and V of one token (n_kv_heads x head_dim each, f32) into a slot,
  // rounded (quantized) to type().
  void write(int32_t block, int slot, int layer, const float* k, const float* v);

  void copy_device_block(int32_t src, int32_t dst);
  void swap_out(int32_t device_block, int32_t host_block);
  void swap_in(int32_t host_block, int32_t device_block);
  // Copies one whole block (block_bytes()) out of the named tier / into the host tier.
  void read_block(bool host, int32_t block, void* dst) const;
  void write_host_block(int32_t block, const void* src);

  // The layer-`layer` part of a planned op: every (slot, KV head) piece of a block
  // is independent, so running every op's layer l part in plan order, for each
  // layer, leaves the same bytes as running the whole ops in plan order. Layers of
  // different groups share a slot; the first of them copies it, before any reads it.
  void run_layer(const KvOp& op, int layer);
  // Throws seer::Error naming the block when an op's source or target is out of range.
  void check(const KvOp& op) const;

 private:
  // Anonymous mappings (zero pages until written, so unused blocks cost no memory),
  // with transparent huge pages requested: attention reads each block's (layer,
  // head) pieces scattered over the pool, and 4 KiB pages made every piece a TLB
  // miss.
  struct Mapping {
    uint8_t* data = nullptr;
    size_t bytes = 0;
    Mapping() = default;
    Mapping(size_t bytes, const char* tier);
    Mapping(Mapping&& o) noexcept : data(std::exchange(o.data, nullptr)), bytes(o.bytes) {}
    Mapping& operator=(Mapping&& o) noexcept;
    ~Mapping();
    uint8_t* get() const { return data; }
  };
  int slot_of(int layer) const { return shape_.layer_groups.slot[static_cast<size_t>(layer)]; }
  uint8_t* head_base(int32_t block, int layer, int kv_head) const {
    assert(block >= 0 && block < device_blocks_);  // a freed (trimmed) entry is never read
    return device_.get() + static_cast<size_t>(block) * block_bytes_ +
           (static_cast<size_t>(slot_of(layer)) * shape_.n_kv_heads + kv_head) * 2 * head_bytes();
  }
  void check_device(int32_t b, const char* what) const;
  // The bytes of `layer`'s slot in block `b` of a tier (all KV heads, K and V).
  uint8_t* layer_of(const Mapping& tier, int32_t b, int layer) const {
    return tier.get() + static_cast<size_t>(b) * block_bytes_ + static_cast<size_t>(slot_of(layer)) * layer_bytes();
  }
  size_t layer_bytes() const { return static_cast<size_t>(shape_.n_kv_heads) * 2 * head_bytes(); }
  void check_host(int32_t b, const char* what) const;

  KvShape shape_;
  std::vector<char> first_in_slot_;  // per layer: the lowest layer with its slot (run_layer copies it)
  int device_blocks_;
  int host_blocks_;
  size_t block_bytes_;
  Mapping device_;
  Mapping host_;
};

}  // namespace seer
