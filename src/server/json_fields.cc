#include "server/json_fields.h"

#include <cmath>

#include "server/api_error.h"

namespace seer::server {

using nlohmann::json;

int json_nesting_depth(std::string_view text) {
  int depth = 0, max_depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') max_depth = std::max(max_depth, ++depth);
    else if (c == ']' || c == '}') --depth;
  }
  return max_depth;
}

json parse_json_object(std::string_view body, int max_depth) {
  if (json_nesting_depth(body) > max_depth)
    throw ApiError(400, "invalid_request_error", "", "invalid_json",
                   fmt::format("the request body nests arrays/objects deeper than {} levels (the JSON depth limit)", max_depth));
  json v;
  try {
    v = json::parse(body.begin(), body.end());
  } catch (const json::exception& e) {
    throw malformed_json_error(e.what());
  }
  if (!v.is_object())
    throw ApiError(400, "invalid_request_error", "", "invalid_json",
                   fmt::format("the request body must be a JSON object, not {}", json_type_name(v)));
  return v;
}

const char* json_type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    case json::value_t::number_float: return "number";
    case json::value_t::string: return "string";
    case json::value_t::array: return "array";
    case json::value_t::object: return "object";
    default: return "value";
  }
}

namespace {

const json* find_present(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

[[noreturn]] void wrong_type(const std::string& path, const char* expected, const json& v) {
  bad_request(path, "'{}' must be {}, not {}", path, expected, json_type_name(v));
}

}  // namespace

std::optional<bool> read_bool(const json& obj, const char* key, const std::string& path) {
  const json* v = find_present(obj, key);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) wrong_type(path, "a boolean", *v);
  return v->get<bool>();
}

std::optional<int64_t> read_int(const json& obj, const char* key, const std::string& path, int64_t min,
                                int64_t max) {
  const json* v = find_present(obj, key);
  if (!v) return std::nullopt;
  if (v->is_number_unsigned()) {
    uint64_t u = v->get<uint64_t>();
    if (u > static_cast<uint64_t>(max) || (min > 0 && u < static_cast<uint64_t>(min)))
      bad_request(path, "'{}' must be between {} and {}, got {}", path, min, max, u);
    return static_cast<int64_t>(u);
  }
  if (!v->is_number_integer()) wrong_type(path, "an integer", *v);
  int64_t i = v->get<int64_t>();
  if (i < min || i > max) bad_request(path, "'{}' must be between {} and {}, got {}", path, min, max, i);
  return i;
}

std::optional<double> read_number(const json& obj, const char* key, const std::string& path, double min,
                                  double max) {
  const json* v = find_present(obj, key);
  if (!v) return std::nullopt;
  if (!v->is_number()) wrong_type(path, "a number", *v);
  double d = v->get<double>();
  if (!std::isfinite(d) || d < min || d > max)
    bad_request(path, "'{}' must be between {} and {}, got {}", path, min, max, d);
  return d;
}

std::optional<std::string> read_string(const json& obj, const char* key, const std::string& path,
                                       size_t max_bytes) {
  const json* v = find_present(obj, key);
  if (!v) return std::nullopt;
  if (!v->is_string()) wrong_type(path, "a string", *v);
  const auto& s = v->get_ref<const std::string&>();
  if (s.size() > max_bytes) bad_request(path, "'{}' is longer than {} bytes", path, max_bytes);
  return s;
}

std::optional<uint64_t> read_seed(const json& obj, const char* key, const std::string& path) {
  const json* v = find_present(obj, key);
  if (!v) return std::nullopt;
  if (v->is_number_unsigned()) return v->get<uint64_t>();
  if (v->is_number_integer()) return static_cast<uint64_t>(v->get<int64_t>());
  wrong_type(path, "an integer", *v);
}

}  // namespace seer::server
