#include "model/gguf_value.h"

#include <fmt/format.h>

#include "common/error.h"

namespace seer {

std::string_view gguf_type_name(GgufType t) {
  switch (t) {
    case GgufType::UINT8: return "u8";
    case GgufType::INT8: return "i8";
    case GgufType::UINT16: return "u16";
    case GgufType::INT16: return "i16";
    case GgufType::UINT32: return "u32";
    case GgufType::INT32: return "i32";
    case GgufType::FLOAT32: return "f32";
    case GgufType::BOOL: return "bool";
    case GgufType::STRING: return "string";
    case GgufType::ARRAY: return "array";
    case GgufType::UINT64: return "u64";
    case GgufType::INT64: return "i64";
    case GgufType::FLOAT64: return "f64";
  }
  return "?";
}

bool GgufValue::is_integer() const {
  return std::holds_alternative<uint64_t>(v) || std::holds_alternative<int64_t>(v);
}

int64_t GgufValue::as_int(std::string_view key) const {
  if (auto* u = std::get_if<uint64_t>(&v)) {
    if (*u > static_cast<uint64_t>(INT64_MAX)) fail("metadata '{}': value {} is too large", key, *u);
    return static_cast<int64_t>(*u);
  }
  if (auto* i = std::get_if<int64_t>(&v)) return *i;
  fail("metadata '{}': expected an integer, found {}", key, gguf_type_name(type));
}

double GgufValue::as_float(std::string_view key) const {
  if (auto* d = std::get_if<double>(&v)) return *d;
  if (is_integer() && type != GgufType::BOOL) return static_cast<double>(as_int(key));
  fail("metadata '{}': expected a number, found {}", key, gguf_type_name(type));
}

bool GgufValue::as_bool(std::string_view key) const {
  if (type == GgufType::BOOL) return std::get<uint64_t>(v) != 0;
  fail("metadata '{}': expected a bool, found {}", key, gguf_type_name(type));
}

const std::string& GgufValue::as_string(std::string_view key) const {
  if (auto* s = std::get_if<std::string>(&v)) return *s;
  fail("metadata '{}': expected a string, found {}", key, gguf_type_name(type));
}

const std::vector<GgufValue>& GgufValue::as_array(std::string_view key) const {
  if (auto* a = std::get_if<std::vector<GgufValue>>(&v)) return *a;
  fail("metadata '{}': expected an array, found {}", key, gguf_type_name(type));
}

std::string GgufValue::summary(size_t max_items) const {
  switch (type) {
    case GgufType::BOOL: return std::get<uint64_t>(v) ? "true" : "false";
    case GgufType::FLOAT32:
    case GgufType::FLOAT64: return fmt::format("{:g}", std::get<double>(v));
    case GgufType::STRING: {
      const auto& s = std::get<std::string>(v);
      std::string shown = s.size() > 60 ? s.substr(0, 57) + "..." : s;
      for (auto& c : shown)
        if (c == '\n') c = ' ';
      return fmt::format("\"{}\"", shown);
    }
    case GgufType::ARRAY: {
      const auto& a = std::get<std::vector<GgufValue>>(v);
      std::string out = fmt::format("[{} x {}]", a.size(), gguf_type_name(elem_type));
      if (max_items == 0) return out;
      out += " [";
      for (size_t i = 0; i < a.size() && i < max_items; ++i) out += (i ? ", " : "") + a[i].summary(0);
      if (a.size() > max_items) out += ", ...";
      return out + "]";
    }
    default:
      if (auto* u = std::get_if<uint64_t>(&v)) return fmt::format("{}", *u);
      return fmt::format("{}", std::get<int64_t>(v));
  }
}

}  // namespace seer
