#pragma once
// Element type of the K/V cache and the one formula for its size: the backend's
// storage, the server's pool sizing, the calibration and bench_forward's bounds all
// ask here instead of assuming sizeof(float).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace seer {

struct ModelConfig;

enum class KvType : uint8_t { F32, F16, BF16 };
// The default of the CPU backend, `seer serve` and `seer generate`.
inline constexpr KvType kDefaultKvType = KvType::F16;

// Bytes of one stored K or V element.
constexpr size_t kv_type_bytes(KvType t) { return t == KvType::F32 ? 4 : 2; }
const char* kv_type_name(KvType t);  // "f32", "f16", "bf16"
std::optional<KvType> kv_type_from_name(std::string_view name);
// Parses a --kv-type value; throws seer::Error naming `flag` and the choices.
KvType parse_kv_type(std::string_view name, std::string_view flag = "--kv-type");

// K and V bytes of one token across all layers and KV heads.
constexpr size_t kv_bytes_per_token(int n_layers, int n_kv_heads, int head_dim, KvType t) {
  return 2 * kv_type_bytes(t) * static_cast<size_t>(n_layers) * static_cast<size_t>(n_kv_heads) *
         static_cast<size_t>(head_dim);
}
size_t kv_bytes_per_token(const ModelConfig& c, KvType t);

}  // namespace seer
