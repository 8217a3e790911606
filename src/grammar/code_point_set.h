#pragma once
// Sets of Unicode code points (sorted, merged ranges) for regex classes, and how a set
// is written inside a JSON string: characters as themselves, `"` `\` and control
// characters by the escape nlohmann::json and JSON.stringify write.
#include <cstdint>
#include <string>
#include <vector>

#include "grammar/grammar.h"

namespace seer::grammar {

using CodePointSet = std::vector<CodeRange>;

CodePointSet normalized(CodePointSet s);
CodePointSet complement(const CodePointSet& s);  // within U+0000..U+10FFFF, surrogates excluded
CodePointSet united(CodePointSet a, const CodePointSet& b);
bool contains(const CodePointSet& s, uint32_t cp);

// A GBNF expression for one JSON-string character (as encoded) whose code point is in
// `s`; "" when the set is empty.
std::string json_chars(const CodePointSet& s);

}  // namespace seer::grammar
