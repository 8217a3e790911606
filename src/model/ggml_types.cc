#include "model/ggml_types.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cctype>
#include <string>

namespace seer {
namespace {

struct Entry {
  GgmlType type;
  GgmlTypeInfo info;
};

constexpr std::array kTypes = {
    Entry{GgmlType::F32, {"F32", 1, 4, true}},
    Entry{GgmlType::F16, {"F16", 1, 2, true}},
    Entry{GgmlType::Q4_0, {"Q4_0", 32, 18, true}},
    Entry{GgmlType::Q4_1, {"Q4_1", 32, 20, true}},
    Entry{GgmlType::Q5_0, {"Q5_0", 32, 22, true}},
    Entry{GgmlType::Q5_1, {"Q5_1", 32, 24, true}},
    Entry{GgmlType::Q8_0, {"Q8_0", 32, 34, true}},
    Entry{GgmlType::Q8_1, {"Q8_1", 32, 36, false}},
    Entry{GgmlType::Q2_K, {"Q2_K", 256, 84, true}},
    Entry{GgmlType::Q3_K, {"Q3_K", 256, 110, true}},
    Entry{GgmlType::Q4_K, {"Q4_K", 256, 144, true}},
    Entry{GgmlType::Q5_K, {"Q5_K", 256, 176, true}},
    Entry{GgmlType::Q6_K, {"Q6_K", 256, 210, true}},
    Entry{GgmlType::Q8_K, {"Q8_K", 256, 292, false}},
    Entry{GgmlType::IQ4_NL, {"IQ4_NL", 32, 18, true}},
    Entry{GgmlType::IQ4_XS, {"IQ4_XS", 256, 136, true}},
    Entry{GgmlType::I8, {"I8", 1, 1, false}},
    Entry{GgmlType::I16, {"I16", 1, 2, false}},
    Entry{GgmlType::I32, {"I32", 1, 4, false}},
    Entry{GgmlType::I64, {"I64", 1, 8, false}},
    Entry{GgmlType::F64, {"F64", 1, 8, false}},
    Entry{GgmlType::BF16, {"BF16", 1, 2, true}},
};

}  // namespace

std::optional<GgmlTypeInfo> ggml_type_info(uint32_t type) {
  for (const auto& e : kTypes)
    if (static_cast<uint32_t>(e.type) == type) return e.info;
  return std::nullopt;
}

std::string computable_type_names() {
  std::string names;
  for (const auto& e : kTypes) {
    if (!e.info.computable) continue;
    if (!names.empty()) names += ", ";
    names += e.info.name;
  }
  return names;
}

std::string_view ggml_type_name(GgmlType t) {
  auto info = ggml_type_info(static_cast<uint32_t>(t));
  return info ? info->name : std::string_view("unknown");
}

std::optional<GgmlType> ggml_type_from_name(std::string_view name) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  for (const auto& e : kTypes)
    if (e.info.name == upper) return e.type;
  return std::nullopt;
}


double ggml_bits_per_weight(const GgmlTypeInfo& info) {
  return 8.0 * static_cast<double>(info.block_bytes) / static_cast<double>(info.block_elems);
}

size_t ggml_row_bytes(GgmlType t, int64_t n) {
  auto info = ggml_type_info(static_cast<uint32_t>(t));
  assert(info && n % info->block_elems == 0);
  return static_cast<size_t>(n / info->block_elems * info->block_bytes);
}

}  // namespace seer
