#include "model/kv_type.h"

#include "common/error.h"
#include "model/model_config.h"

namespace seer {

const char* kv_type_name(KvType t) {
  switch (t) {
    case KvType::F32: return "f32";
    case KvType::F16: return "f16";
    case KvType::BF16: return "bf16";
    case KvType::Q8_0: return "q8_0";
    case KvType::Q4_0: return "q4_0";
  }
  return "?";
}

std::optional<KvType> kv_type_from_name(std::string_view name) {
  for (KvType t : {KvType::F32, KvType::F16, KvType::BF16, KvType::Q8_0, KvType::Q4_0})
    if (name == kv_type_name(t)) return t;
  return std::nullopt;
}

KvType parse_kv_type(std::string_view name, std::string_view flag) {
  if (auto t = kv_type_from_name(name)) return *t;
  fail("{} must be f32, f16, bf16, q8_0 or q4_0, got '{}'", flag, name);
}

void check_kv_head_dim(KvType t, int head_dim) {
  const int block = kv_type_block_elems(t);
  if (head_dim % block != 0)
    fail("KV type {} stores head rows in blocks of {} elements, but this model's head dimension is {}: "
         "use --kv-type f16 (or f32, bf16)", kv_type_name(t), block, head_dim);
}

size_t kv_bytes_per_token(const ModelConfig& c, KvType t) {
  check_kv_head_dim(t, c.head_dim);
  return kv_bytes_per_token(c.n_layers, c.n_kv_heads, c.head_dim, t);
}

}  // namespace seer
