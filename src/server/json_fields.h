#pragma once
// Typed, range-checked reads of request-body fields. A missing field or JSON null
// means "not given"; a present field of the wrong type or out of range throws a 400
// ApiError whose `param` names the field. Unknown fields are simply never read.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "common/ordered_json_reader.h"

namespace seer::server {

// Arrays and objects nested in a request body, or in JSON a client sends inside a
// string (tool-call arguments). nlohmann::json parses and destroys without recursion
// but copies, compares and dumps by recursion, so deeper input is refused before it
// is parsed (docs/security.md).
constexpr int kMaxJsonDepth = 32;

// Parses a request body that must be a JSON object. Rejects nesting deeper than
// `max_depth` before parsing (so hostile input never drives a deep recursion).
nlohmann::json parse_json_object(std::string_view body, int max_depth);

// The deepest array/object nesting of a JSON text (strings are skipped).
int json_nesting_depth(std::string_view text);

// `text` as JSON, or a discarded value when it is not JSON or nests deeper than
// `max_depth` (checked first, so what is too deep is never built).
template <typename Json = nlohmann::json>
Json parse_json_within_depth(std::string_view text, int max_depth) {
  if (json_nesting_depth(text) > max_depth) return Json(Json::value_t::discarded);
  if constexpr (std::is_same_v<Json, nlohmann::ordered_json>) return parse_ordered_json(text);  // linear
  else return Json::parse(text, nullptr, /*allow_exceptions=*/false);
}

// `path` is the name reported as `param` (e.g. "slo.ttft_s").
[[nodiscard]] std::optional<bool> read_bool(const nlohmann::json& obj, const char* key, const std::string& path);
[[nodiscard]] std::optional<int64_t> read_int(const nlohmann::json& obj, const char* key, const std::string& path,
                                int64_t min, int64_t max);
[[nodiscard]] std::optional<double> read_number(const nlohmann::json& obj, const char* key, const std::string& path,
                                  double min, double max);
[[nodiscard]] std::optional<std::string> read_string(const nlohmann::json& obj, const char* key,
                                       const std::string& path, size_t max_bytes);
// A JSON integer of any width as uint64 (negative values wrap, as OpenAI seeds may be
// negative).
[[nodiscard]] std::optional<uint64_t> read_seed(const nlohmann::json& obj, const char* key, const std::string& path);

// The JSON type name used in messages ("string", "number", ...).
const char* json_type_name(const nlohmann::json& v);

}  // namespace seer::server
