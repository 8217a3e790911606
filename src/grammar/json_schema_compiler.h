#pragma once
// The JSON Schema compiler's state (internal to src/grammar): the schema's root for
// $ref, the rules written so far, and the recursion guards. json_schema_to_gbnf.cc
// holds the dispatch by keyword, json_schema_containers.cc objects and arrays.
#include <map>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "grammar/gbnf_rules.h"

namespace seer::grammar {

class SchemaCompiler {
 public:
  using json = nlohmann::ordered_json;
  SchemaCompiler(const json& root, std::string name) : root_(root), rules_(std::move(name)) {}
  std::string compile();

  // The expression for `s` at pointer `ptr`; nullopt when no value satisfies it.
  std::optional<std::string> expr(const json& s, const std::string& ptr);
  // A named rule for a sub-schema (nullopt: matches nothing).
  std::optional<std::string> rule_for(const json& s, const std::string& ptr, const std::string& hint);
  RuleSet& rules() { return rules_; }
  // The schema a "$ref" names (JSON pointers into the root document only).
  const json& resolve(const json& ref, const std::string& ptr) const;

 private:
  std::optional<std::string> typed(const json& s, const std::string& type, const std::string& ptr);
  std::optional<std::string> ref_rule(const json& s, const std::string& ptr);
  std::optional<std::string> alternatives(const json& s, const std::string& ptr);
  std::optional<std::string> literals(const json& s, const std::string& ptr);
  std::optional<std::string> object(const json& s, const std::string& ptr);
  std::optional<std::string> array(const json& s, const std::string& ptr);
  std::string extra_key(const std::vector<std::string>& declared);

  const json& root_;
  RuleSet rules_;
  std::map<std::string, std::string> ref_rules_;
  int depth_ = 0;  // sub-schemas being compiled (Level)
  friend class Level;
};

// allOf, $ref beside other keywords, anyOf/oneOf beside other keywords (json_schema_merge.cc).
// The schema with its allOf (and a $ref with assertions beside it) merged into one;
// `resolve` follows $refs. Throws naming the pointer for what cannot be merged.
nlohmann::ordered_json merged_all_of(const nlohmann::ordered_json& s, const std::string& ptr, const SchemaCompiler& c);
// True when no value can satisfy two of the branches (types, const/enum values, or a
// required property whose const/enum values differ); `check` says whether a value
// validates against a self-contained schema.
bool branches_exclude_each_other(const nlohmann::ordered_json& branches);
// True when `s` asserts something beyond annotations and $defs.
bool has_assertions(const nlohmann::ordered_json& s);

}  // namespace seer::grammar
