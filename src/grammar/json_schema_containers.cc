// Objects and arrays of the schema compiler (SchemaCompiler::object, ::array).
#include <functional>
#include <map>
#include <set>

#include "common/error.h"
#include "grammar/code_point_set.h"
#include "grammar/grammar_check.h"
#include "grammar/json_schema_compiler.h"
#include "grammar/json_schema_scalars.h"

namespace seer::grammar {

using json = nlohmann::ordered_json;

namespace {

std::vector<uint32_t> code_points(const std::string& s) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : 4;
    uint32_t cp = len == 1 ? c : c & (0x7F >> len);
    for (int k = 1; k < len && i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out.push_back(cp);
    i += len;
  }
  return out;
}

// The branch of a name trie below one node.
struct KeyTrie {
  bool word = false;
  std::map<uint32_t, KeyTrie> next;
};

}  // namespace

// A JSON string (canonical escapes only, so every name has one spelling) whose value is
// none of `declared`: a walk down their trie that leaves it or stops off a word.
std::string SchemaCompiler::extra_key(const std::vector<std::string>& declared) {
  if (declared.empty()) return rules_.memo("key canonical", [&] {
      return rules_.rule("key", "\"\\\"\" ( " + json_chars(complement({})) + " )* \"\\\"\"");
    });
  KeyTrie root;
  for (const std::string& k : declared) {
    KeyTrie* n = &root;
    for (uint32_t cp : code_points(k)) n = &n->next[cp];
    n->word = true;
  }
  const std::string any = rules_.memo("chars canonical", [&] {
    return rules_.rule("chars", "( " + json_chars(complement({})) + " )*");
  });
  std::function<std::string(const KeyTrie&)> below = [&](const KeyTrie& n) {
    CodePointSet taken;
    std::string alts;
    for (const auto& [cp, child] : n.next) {
      taken.push_back({cp, cp});
      alts += (alts.empty() ? "" : " | ") + json_chars({{cp, cp}}) + " " + below(child);
    }
    const std::string others = json_chars(complement(taken));
    if (!others.empty()) alts += (alts.empty() ? "" : " | ") + others + " " + any + " \"\\\"\"";
    if (!n.word) alts += (alts.empty() ? "" : " | ") + std::string("\"\\\"\"");
    return rules_.rule("key-not", alts);
  };
  // Every alternative of `below` ends with the closing quote.
  return rules_.rule("key", "\"\\\"\" ( " + below(root) + " )");
}

std::optional<std::string> SchemaCompiler::object(const json& s, const std::string& ptr) {
  for (const char* k : {"dependentRequired", "dependencies"})
    if (auto it = s.find(k); it != s.end() && it->is_object())
      for (const auto& [name, dep] : it->items())
        if (!(dep.is_array() && dep.empty()) && !(dep.is_boolean() && dep.get<bool>()) && !(dep.is_object() && dep.empty()))
          keyword_error(ptr, k, fmt::format("'{}' is not supported (a property's presence cannot require another's)", k));
  if (auto it = s.find("patternProperties"); it != s.end() && !(it->is_object() && it->empty()))
    keyword_error(ptr, "patternProperties", "'patternProperties' is not supported");
  // additionalProperties: true (any value), false (none), or a schema. Absent beside
  // `properties` it is false, as llama.cpp's and XGrammar's converters (strict mode)
  // read it: what a model writes stays the declared members, and the grammar stays
  // linear in them (an open object must spell every other key, a trie of the declared
  // names). Absent without `properties`, any members.
  const bool declares = s.contains("properties") && !s["properties"].empty();
  std::optional<std::string> extra;
  if (!declares) extra = "value";
  std::string ap_ptr = ptr + "/additionalProperties";
  const bool ap_given = s.contains("additionalProperties");
  if (ap_given) extra = rule_for(s["additionalProperties"], ap_ptr, "extra");
  std::set<std::string> required;
  if (auto it = s.find("required"); it != s.end()) {
    if (!it->is_array()) keyword_error(ptr, "required", "'required' must be an array of property names");
    for (size_t i = 0; i < it->size(); ++i) {
      if (!(*it)[i].is_string()) keyword_error(ptr, "required/" + std::to_string(i), "a required name must be a string");
      required.insert((*it)[i].get<std::string>());
    }
  }
  struct Member {
    std::string name;
    std::optional<std::string> value;
  };
  std::vector<Member> members;
  if (auto it = s.find("properties"); it != s.end()) {
    if (!it->is_object()) keyword_error(ptr, "properties", "'properties' must be an object");
    for (const auto& [k, v] : it->items())
      members.push_back({k, rule_for(v, ptr + "/properties/" + pointer_escape(k), "prop-" + k)});
  }
  std::set<std::string> names;  // a set: a 40,000-property schema must not cost 40,000^2 compares
  for (const Member& m : members) names.insert(m.name);
  for (const std::string& r : required)  // required but not declared: an additional property
    if (names.insert(r).second) members.push_back({r, ap_given ? extra : std::optional<std::string>("value")});
  std::vector<std::string> declared;
  for (const Member& m : members) declared.push_back(m.name);
  // propertyNames: every name must be such a string.
  std::optional<std::string> key_rule;
  if (auto it = s.find("propertyNames"); it != s.end()) {
    const std::string pn = ptr + "/propertyNames";
    auto names = rule_for(*it, pn, "names");
    if (!names) extra.reset();
    if (names && *names != "value") {
      if (extra && !declared.empty())
        keyword_error(ptr, "propertyNames", "'propertyNames' beside 'properties' needs 'additionalProperties': false");
      key_rule = names;
      std::optional<GrammarChecker> check;
      try {
        check.emplace(GrammarChecker::from_schema(*it));
      } catch (const Error& e) {
        keyword_error(ptr, "propertyNames", e.what());
      }
      for (Member& m : members)
        if (!check->accepts(json(m.name).dump())) m.value.reset();
    }
  }
  // A required member that cannot be written makes the object impossible; an optional one is left out.
  std::vector<Member> writable;
  for (Member& m : members) {
    if (m.value) writable.push_back(std::move(m));
    else if (required.count(m.name)) return std::nullopt;
  }
  size_t n_required = 0;
  for (const Member& m : writable) n_required += required.count(m.name);
  const auto min_props = count_keyword(s, "minProperties", ptr);
  const auto max_props = count_keyword(s, "maxProperties", ptr);
  if (!writable.empty() && ((min_props && *min_props > n_required) || (max_props && (extra || *max_props < writable.size()))))
    keyword_error(ptr, min_props && *min_props > n_required ? "minProperties" : "maxProperties",
                  "'minProperties'/'maxProperties' are supported with 'properties' only when all of them are required, "
                  "or the bound is met whatever is written");
  std::string extra_member;
  if (extra) extra_member = rules_.rule("extra-member", (key_rule ? *key_rule : extra_key(declared)) + " ws \":\" ws " + *extra + " ws");
  // first[i]: members i.. when none was written yet; rest[i]: after one was.
  const size_t n = writable.size();
  std::vector<std::string> first(n + 1), rest(n + 1);
  for (size_t i = 0; i <= n; ++i) first[i] = rules_.fresh("obj-first"), rest[i] = rules_.fresh("obj-rest");
  for (size_t i = n + 1; i-- > 0;) {
    if (i == n) {
      if (!extra) {
        rules_.emit(first[i], "\"\"");
        rules_.emit(rest[i], "\"\"");
      } else if (n == 0) {
        const std::string more = "( \",\" ws " + extra_member + " )";
        const uint64_t lo = min_props.value_or(0);
        if (max_props && *max_props < lo) return std::nullopt;
        std::string body = extra_member + " " + counted(rules_, more, lo ? lo - 1 : 0, max_props ? std::optional<uint64_t>(*max_props ? *max_props - 1 : 0) : std::nullopt);
        if (max_props && *max_props == 0) body = "\"\"";
        else if (lo == 0) body = "( " + body + " )?";
        rules_.emit(first[i], body);
        rules_.emit(rest[i], "\"\"");
      } else {
        const std::string more = rules_.rule("extra-more", "( \",\" ws " + extra_member + " )*");
        rules_.emit(first[i], "( " + extra_member + " " + more + " )?");
        rules_.emit(rest[i], more);
      }
      continue;
    }
    const std::string kv = gbnf_literal(json(writable[i].name).dump()) + " ws \":\" ws " + *writable[i].value + " ws";
    const bool req = required.count(writable[i].name) > 0;
    rules_.emit(first[i], kv + " " + rest[i + 1] + (req ? "" : " | " + first[i + 1]));
    rules_.emit(rest[i], "\",\" ws " + kv + " " + rest[i + 1] + (req ? "" : " | " + rest[i + 1]));
  }
  return "\"{\" ws " + first[0] + " \"}\"";
}

std::optional<std::string> SchemaCompiler::array(const json& s, const std::string& ptr) {
  // prefixItems (or draft-04..07 `items: [...]`), then items (or additionalItems).
  std::vector<std::optional<std::string>> prefix;
  const json* tail = nullptr;
  std::string tail_ptr;
  const json* positional = nullptr;
  std::string pos_key;
  if (auto it = s.find("prefixItems"); it != s.end()) positional = &*it, pos_key = "prefixItems";
  if (auto it = s.find("items"); it != s.end()) {
    if (it->is_array()) positional = &*it, pos_key = "items";
    else tail = &*it, tail_ptr = ptr + "/items";
  }
  if (positional) {
    if (!positional->is_array()) keyword_error(ptr, pos_key, fmt::format("'{}' must be an array of schemas", pos_key));
    if (pos_key == "items")
      if (auto it = s.find("additionalItems"); it != s.end()) tail = &*it, tail_ptr = ptr + "/additionalItems";
  }
  const auto min = count_keyword(s, "minItems", ptr).value_or(0);
  const auto max = count_keyword(s, "maxItems", ptr);
  if (max && *max < min) return std::nullopt;
  if (positional)
    for (size_t i = 0; i < positional->size() && (!max || i < *max); ++i) {
      auto r = rule_for((*positional)[i], ptr + "/" + pos_key + "/" + std::to_string(i), "item");
      if (!r) break;  // no value fits here: the array ends before
      prefix.push_back(r);
    }
  const bool truncated = positional && prefix.size() < positional->size();
  std::optional<std::string> item = "value";
  if (truncated) item.reset();
  else if (tail) item = rule_for(*tail, tail_ptr, "item");
  const size_t k = prefix.size();
  if (min > k && !item) return std::nullopt;
  // after[i]: what may follow once i items are written.
  auto rest_after_prefix = [&]() -> std::string {
    if (!item || (max && *max <= k)) return "\"\"";
    const std::string more = "( \",\" ws " + *item + " ws )";
    const uint64_t lo = min > k ? min - k : 0;
    return counted(rules_, more, lo, max ? std::optional<uint64_t>(*max - k) : std::nullopt);
  };
  std::string after = rest_after_prefix();
  for (size_t i = k; i-- > 1;) {
    std::string body = "\",\" ws " + *prefix[i] + " ws " + after;
    if (i >= min) body = "( " + body + " )?";
    after = rules_.rule("items-after", body);
  }
  std::string body;
  if (k > 0) {
    body = *prefix[0] + " ws " + after;
  } else {
    if (!item || (max && *max == 0)) return "\"[\" ws \"]\"";
    const std::string more = "( \",\" ws " + *item + " ws )";
    body = *item + " ws " + counted(rules_, more, min > 0 ? min - 1 : 0, max ? std::optional<uint64_t>(*max - 1) : std::nullopt);
  }
  if (min == 0) body = "( " + body + " )?";
  return "\"[\" ws " + body + " \"]\"";
}

}  // namespace seer::grammar
