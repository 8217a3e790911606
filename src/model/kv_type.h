#pragma once
// Element type of the K/V cache and the one formula for its size: the backend's
// storage, the server's pool sizing, the calibration, the simulator and
// bench_forward's bounds all ask here instead of assuming sizeof(float).
//
// Q8_0 and Q4_0 store each head row (head_dim elements of one token, one KV head)
// as ggml blocks of 32 elements (an f16 scale and 32 int8, or 32 4-bit values
// offset by 8; model/quant_blocks.h), as llama.cpp's --cache-type-k/v q8_0 / q4_0
// do; head_dim must then be a multiple of 32.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "model/quant_blocks.h"

namespace seer {

struct ModelConfig;

enum class KvType : uint8_t { F32, F16, BF16, Q8_0, Q4_0 };
// The default of the CPU backend, `seer serve` and `seer generate`.
inline constexpr KvType kDefaultKvType = KvType::F16;
// The --kv-type help of every command that runs the backend.
inline constexpr const char* kKvTypeHelp =
    "K/V cache element type: f32, f16, bf16, q8_0 or q4_0 (bytes of f16: q8_0 0.53x, q4_0 0.28x; "
    "q8_0/q4_0 need a head dim that is a multiple of 32)";

// Whether head rows are stored as 32-element quantized blocks (Q8_0, Q4_0).
constexpr bool kv_type_is_quantized(KvType t) { return t == KvType::Q8_0 || t == KvType::Q4_0; }
// Elements of one storage unit along the head dimension (1, or 32 for a Q8_0 /
// Q4_0 block) and its bytes.
constexpr int kv_type_block_elems(KvType t) { return kv_type_is_quantized(t) ? kQK : 1; }
constexpr size_t kv_type_block_bytes(KvType t) {
  switch (t) {
    case KvType::F32: return 4;
    case KvType::F16:
    case KvType::BF16: return 2;
    case KvType::Q8_0: return sizeof(BlockQ8_0);
    case KvType::Q4_0: return sizeof(BlockQ4_0);
  }
  return 0;
}
// Bytes of `n` consecutive elements of one head row (n a multiple of the block).
constexpr size_t kv_row_bytes(KvType t, int n) {
  return static_cast<size_t>(n / kv_type_block_elems(t)) * kv_type_block_bytes(t);
}
// Mean bytes of one stored element (34/32 for Q8_0, 18/32 for Q4_0): the simulator's unit.
constexpr double kv_bytes_per_element(KvType t) {
  return static_cast<double>(kv_type_block_bytes(t)) / kv_type_block_elems(t);
}
const char* kv_type_name(KvType t);  // "f32", "f16", "bf16", "q8_0", "q4_0"
std::optional<KvType> kv_type_from_name(std::string_view name);
// Parses a --kv-type value; throws seer::Error naming `flag` and the choices.
KvType parse_kv_type(std::string_view name, std::string_view flag = "--kv-type");
// Throws seer::Error when rows of `head_dim` elements cannot be stored as `t`
// (Q8_0 or Q4_0 with a head dimension that is not a multiple of 32).
void check_kv_head_dim(KvType t, int head_dim);

// K and V bytes of one token across all layers and KV heads.
constexpr size_t kv_bytes_per_token(int n_layers, int n_kv_heads, int head_dim, KvType t) {
  return 2 * kv_row_bytes(t, head_dim) * static_cast<size_t>(n_layers) * static_cast<size_t>(n_kv_heads);
}
// The same for a model; throws (check_kv_head_dim) when its head dimension does not fit.
size_t kv_bytes_per_token(const ModelConfig& c, KvType t);

}  // namespace seer
