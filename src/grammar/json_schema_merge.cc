// allOf merged into one schema, and the proof that oneOf's branches exclude each other.
#include <algorithm>
#include <set>

#include "common/error.h"
#include "grammar/grammar_check.h"
#include "grammar/json_schema_compiler.h"
#include "grammar/json_schema_keywords.h"
#include "grammar/json_schema_numbers.h"
#include "grammar/json_schema_scalars.h"

namespace seer::grammar {

using json = nlohmann::ordered_json;

bool has_assertions(const json& s) {
  if (!s.is_object()) return !(s.is_boolean() && s.get<bool>());
  for (const auto& [k, v] : s.items())
    if (is_supported_assertion(k) || refusal(s, k)) return true;
  return false;
}

namespace {

std::set<std::string> types_of(const json& s) {
  static const std::set<std::string> kAll = {"null", "boolean", "object", "array", "number", "integer", "string"};
  auto t = s.find("type");
  if (t == s.end()) return kAll;
  std::set<std::string> out;
  if (t->is_string()) out.insert(t->get<std::string>());
  else if (t->is_array())
    for (const json& v : *t)
      if (v.is_string()) out.insert(v.get<std::string>());
  if (out.count("number")) out.insert("integer");
  return out;
}

json type_json(const std::set<std::string>& types) {
  std::set<std::string> t = types;
  if (t.count("number")) t.erase("integer");
  json out = json::array();
  for (const std::string& x : t) out.push_back(x);
  return out.size() == 1 ? out[0] : out;
}

bool is_number_bound(const std::string& k, bool& lower) {
  lower = k == "minimum" || k == "exclusiveMinimum";
  return lower || k == "maximum" || k == "exclusiveMaximum";
}

bool is_count(const std::string& k, bool& lower) {
  lower = k == "minLength" || k == "minItems" || k == "minProperties";
  return lower || k == "maxLength" || k == "maxItems" || k == "maxProperties";
}

// `a` and `b` both hold keyword k; `a[k]` becomes what both assert.
void merge_keyword(json& a, const std::string& k, const json& b, const std::string& ptr) {
  json& x = a[k];
  const json& y = b;
  bool lower = false;
  if (k == "type") {
    std::set<std::string> both;
    const auto ta = types_of(a), tb = types_of(json{{"type", y}});
    std::set_intersection(ta.begin(), ta.end(), tb.begin(), tb.end(), std::inserter(both, both.end()));
    x = both.empty() ? json::array({"null"}) : type_json(both);
    if (both.empty()) a["enum"] = json::array();  // no type left: nothing matches
  } else if (k == "required") {
    for (const json& v : y)
      if (std::find(x.begin(), x.end(), v) == x.end()) x.push_back(v);
  } else if (k == "properties") {
    for (const auto& [name, schema] : y.items())
      x[name] = x.contains(name) ? json{{"allOf", json::array({x[name], schema})}} : schema;
  } else if (k == "enum") {
    json kept = json::array();
    for (const json& v : x)
      if (std::find(y.begin(), y.end(), v) != y.end()) kept.push_back(v);
    x = kept;
  } else if (k == "items" && x.is_object() && y.is_object()) {
    x = json{{"allOf", json::array({x, y})}};
  } else if ((k == "minimum" || k == "maximum" || k == "exclusiveMinimum" || k == "exclusiveMaximum") && x.is_number() && y.is_number()) {
    is_number_bound(k, lower);
    const auto dx = parse_decimal(x.dump()), dy = parse_decimal(y.dump());
    if (dx && dy && (compare(*dy, *dx) > 0) == lower && compare(*dy, *dx) != 0) x = y;
  } else if (is_count(k, lower) && x.is_number() && y.is_number()) {
    if ((y.get<double>() > x.get<double>()) == lower && y != x) x = y;
  } else if (k == "anyOf") {
    json product = json::array();
    for (const json& p : x)
      for (const json& q : y) product.push_back(json{{"allOf", json::array({p, q})}});
    if (product.size() > 64) keyword_error(ptr, "allOf", "'allOf' of 'anyOf's makes more than 64 alternatives");
    x = product;
  } else if (x != y) {
    keyword_error(ptr, "allOf", fmt::format("'allOf' whose branches give '{}' differently is not supported", k));
  }
}

void merge_into(json& a, const json& b, const std::string& ptr, const SchemaCompiler& c, int depth);

// `b` with its $ref and allOf folded in.
json flattened(const json& b, const std::string& ptr, const SchemaCompiler& c, int depth) {
  if (depth > kMaxSchemaDepth)
    fail("{}: 'allOf'/'$ref' merging nests deeper than {} levels (a recursive $ref beside other keywords is not supported)",
         ptr, kMaxSchemaDepth);
  if (b.is_boolean()) return b.get<bool>() ? json::object() : json{{"enum", json::array()}};
  if (!b.is_object()) fail("{}: a schema must be an object or a boolean", ptr);
  json out = json::object();
  for (const auto& [k, v] : b.items())
    if (k != "allOf" && k != "$ref") out[k] = v;
  if (auto r = b.find("$ref"); r != b.end()) {
    const json& target = c.resolve(*r, ptr + "/$ref");
    merge_into(out, flattened(target, r->get<std::string>(), c, depth + 1), ptr, c, depth);
  }
  if (auto all = b.find("allOf"); all != b.end()) {
    if (!all->is_array() || all->empty()) keyword_error(ptr, "allOf", "'allOf' must be a non-empty array");
    for (size_t i = 0; i < all->size(); ++i) {
      const std::string bp = ptr + "/allOf/" + std::to_string(i);
      merge_into(out, flattened((*all)[i], bp, c, depth + 1), bp, c, depth);
    }
  }
  return out;
}

std::set<std::string> property_names(const json& s) {
  std::set<std::string> out;
  if (auto p = s.find("properties"); p != s.end() && p->is_object())
    for (const auto& [name, _] : p->items()) out.insert(name);
  return out;
}

// additionalProperties (and patternProperties) apply to the names outside their own
// branch's properties, which merging would change.
bool closes_names(const json& s) {
  return (s.contains("additionalProperties") && s["additionalProperties"] != true) || s.contains("patternProperties");
}

void merge_into(json& a, const json& b, const std::string& ptr, const SchemaCompiler&, int) {
  if ((closes_names(a) || closes_names(b)) && property_names(a) != property_names(b) &&
      (a.contains("properties") || b.contains("properties")))
    keyword_error(ptr, "allOf", "'allOf' with 'additionalProperties' and different 'properties' in its branches is not supported");
  // items applies after its own branch's prefixItems, which merging would change.
  auto tuple = [](const json& s) { return s.contains("prefixItems") || (s.contains("items") && s["items"].is_array()); };
  if (tuple(a) != tuple(b) && (a.contains("items") || b.contains("items")))
    keyword_error(ptr, "allOf", "'allOf' with 'prefixItems' in one branch and 'items' in another is not supported");
  for (const auto& [k, v] : b.items()) {
    if (!is_supported_assertion(k) && !refusal(b, k)) continue;  // annotations
    if (!a.contains(k)) {
      a[k] = v;
      continue;
    }
    merge_keyword(a, k, v, ptr);
  }
}

}  // namespace

json merged_all_of(const json& s, const std::string& ptr, const SchemaCompiler& c) {
  json out = flattened(s, ptr, c, 0);
  if (out.contains("enum") && out["enum"].empty()) return json(false);
  return out;
}

namespace {

std::optional<std::vector<json>> values_of(const json& s) {
  if (!s.is_object()) return std::nullopt;
  if (s.contains("const")) return std::vector<json>{s["const"]};
  if (s.contains("enum") && s["enum"].is_array()) return std::vector<json>(s["enum"].begin(), s["enum"].end());
  return std::nullopt;
}

bool accepts(const json& schema, const json& v) {
  try {
    return GrammarChecker::from_schema(schema).accepts(v.dump());
  } catch (const Error&) {
    return true;  // cannot tell: assume it may
  }
}

bool exclude(const json& a, const json& b) {
  if (a == json(false) || b == json(false)) return true;
  if (!a.is_object() || !b.is_object()) return false;
  const auto ta = types_of(a), tb = types_of(b);
  bool shared = false;
  for (const std::string& t : ta) shared = shared || tb.count(t);
  if (!shared) return true;
  if (auto va = values_of(a)) return std::none_of(va->begin(), va->end(), [&](const json& v) { return accepts(b, v); });
  if (auto vb = values_of(b)) return std::none_of(vb->begin(), vb->end(), [&](const json& v) { return accepts(a, v); });
  // A discriminator: a property both require whose values exclude each other.
  if (ta == std::set<std::string>{"object"} && tb == ta && a.contains("properties") && b.contains("properties"))
    for (const auto& item : a["properties"].items()) {
      const std::string& name = item.key();  // not a structured binding: clang 14 cannot capture one
      const json& pa = item.value();
      auto required = [&](const json& s) {
        return s.contains("required") && std::find(s["required"].begin(), s["required"].end(), name) != s["required"].end();
      };
      if (required(a) && required(b) && b["properties"].contains(name) && values_of(pa) && exclude(pa, b["properties"][name]))
        return true;
    }
  return false;
}

}  // namespace

bool branches_exclude_each_other(const json& branches) {
  for (size_t i = 0; i < branches.size(); ++i)
    for (size_t j = i + 1; j < branches.size(); ++j)
      if (!exclude(branches[i], branches[j])) return false;
  return true;
}

}  // namespace seer::grammar
