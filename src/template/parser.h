#pragma once
// Builds the statement tree of a template from its tokens (template/lexer.h).
#include <string>

#include "template/ast.h"

namespace seer::tmpl {

// Throws seer::Error ("chat template line L, column C: ...") for syntax errors,
// including unknown statements and unclosed blocks.
[[nodiscard]] Body parse(const std::string& source, const LexOptions& options = {});

}  // namespace seer::tmpl
