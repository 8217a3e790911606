#include "grammar/grammar_check.h"

#include "grammar/gbnf_parser.h"
#include "grammar/grammar_matcher.h"

namespace seer::grammar {

GrammarChecker::GrammarChecker(const std::string& gbnf)
    : gbnf_(gbnf), grammar_(std::make_shared<const Grammar>(parse_gbnf(gbnf))) {}

GrammarChecker GrammarChecker::from_schema(const nlohmann::ordered_json& schema, JsonWhitespace ws) {
  return GrammarChecker(json_schema_to_gbnf(schema, ws));
}

bool GrammarChecker::accepts(std::string_view text) const {
  StackMachine m(*grammar_);
  MatchState s = m.initial();
  return m.accept(s, text) && StackMachine::can_end(s);
}

}  // namespace seer::grammar
