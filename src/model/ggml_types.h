#pragma once
// Tensor element types as numbered by GGML/GGUF, with their block layouts.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace seer {

enum class GgmlType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ4_NL = 20,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  BF16 = 30,
};

struct GgmlTypeInfo {
  std::string_view name;
  int64_t block_elems;  // elements per block
  int64_t block_bytes;  // bytes per block
  bool computable;      // seer's kernels can run it
};

// nullopt for type ids seer does not know at all.
std::optional<GgmlTypeInfo> ggml_type_info(uint32_t type);
std::string_view ggml_type_name(GgmlType t);
// Parses "f32", "F16", "q8_0", ... (case-insensitive).
std::optional<GgmlType> ggml_type_from_name(std::string_view name);
// "F32, F16, Q4_0, ..." in GGML's numbering order: the types seer computes with.
std::string computable_type_names();
// Bits of storage per element, scales included (4.5 for Q4_K).
double ggml_bits_per_weight(const GgmlTypeInfo& info);
// Bytes of one row of n elements; n must be a multiple of the block size.
size_t ggml_row_bytes(GgmlType t, int64_t n);

}  // namespace seer
