#pragma once
// Whether a text is a sentence of a grammar: the library call under `seer grammar
// check`, and how the schema compiler keeps only the enum values its sibling keywords
// allow. The text is fed to the matcher byte by byte, as generated tokens would be.
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "grammar/grammar.h"
#include "grammar/json_schema_to_gbnf.h"

namespace seer::grammar {

class GrammarChecker {
 public:
  // Throws seer::Error when the text does not parse.
  explicit GrammarChecker(const std::string& gbnf);
  // Throws seer::Error naming the pointer when the schema does not compile.
  static GrammarChecker from_schema(const nlohmann::ordered_json& schema, JsonWhitespace ws = JsonWhitespace::Compact);
  [[nodiscard]] bool accepts(std::string_view text) const;
  const Grammar& grammar() const { return *grammar_; }
  const std::string& gbnf() const { return gbnf_; }

 private:
  std::string gbnf_;
  std::shared_ptr<const Grammar> grammar_;
};

}  // namespace seer::grammar
