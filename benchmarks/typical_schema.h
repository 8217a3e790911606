#pragma once
// The "typical JSON schema" of the constrained-decoding benchmarks
// (docs/structured-outputs.md, "Cost"): 8 properties (strings, integer, nullable
// string, a 3-value enum, a nested 3-string object, a bounded string array, boolean,
// number), and three documents it admits, as a model would write them.
namespace seer::bench {

inline constexpr const char* kSchema = R"({"type": "object", "properties": {
  "name": {"type": "string"}, "age": {"type": "integer"}, "email": {"type": ["string", "null"]},
  "role": {"enum": ["admin", "editor", "viewer"]},
  "address": {"type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"},
              "zip": {"type": "string"}}, "required": ["street", "city", "zip"], "additionalProperties": false},
  "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
  "active": {"type": "boolean"}, "score": {"type": "number"}},
  "required": ["name", "age", "email", "role", "address", "tags", "active", "score"], "additionalProperties": false})";

// Documents the schema admits, as a model would write them; each request replays one,
// tokenized by greedy longest match over the vocabulary (the mask is computed for the
// states a real reply passes through).
inline const char* kDocuments[] = {
    R"({"name": "Ada Lovelace", "age": 36, "email": "ada@example.org", "role": "admin", "address": {"street": "12 St James's Square", "city": "London", "zip": "SW1Y 4JH"}, "tags": ["math", "engines", "poetry"], "active": false, "score": 97.5})",
    R"({
  "name": "Grace Hopper",
  "age": 85,
  "email": null,
  "role": "editor",
  "address": {
    "street": "1 Navy Way",
    "city": "Arlington",
    "zip": "22202"
  },
  "tags": ["cobol", "compilers"],
  "active": true,
  "score": 1e2
})",
    R"({"name":"Zhang Wei","age":29,"email":"wei@example.cn","role":"viewer","address":{"street":"88 Nanjing Rd","city":"上海","zip":"200001"},"tags":[],"active":true,"score":-3.25})",
};

}  // namespace seer::bench
