#pragma once
// A GGUF metadata value: one of the 13 GGUF value types, arrays possibly nested.
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace seer {

enum class GgufType : uint32_t {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
};

std::string_view gguf_type_name(GgufType t);

struct GgufArray;

struct GgufValue {
  GgufType type = GgufType::UINT8;
  // Integers (signed or not) and bools live in i64/u64, floats in f64.
  std::variant<uint64_t, int64_t, double, std::string, std::vector<GgufValue>> v;
  GgufType elem_type = GgufType::UINT8;  // for ARRAY

  bool is_integer() const;
  bool is_float() const { return type == GgufType::FLOAT32 || type == GgufType::FLOAT64; }
  bool is_string() const { return type == GgufType::STRING; }
  bool is_array() const { return type == GgufType::ARRAY; }

  // Conversions throw seer::Error naming `key` when the type does not fit.
  int64_t as_int(std::string_view key) const;
  double as_float(std::string_view key) const;  // accepts integers too
  bool as_bool(std::string_view key) const;
  const std::string& as_string(std::string_view key) const;
  const std::vector<GgufValue>& as_array(std::string_view key) const;

  // Short human-readable rendering (arrays abbreviated) for `seer inspect`.
  std::string summary(size_t max_items = 8) const;
};

}  // namespace seer
