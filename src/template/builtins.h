#pragma once
// The global functions every chat template sees: range, namespace, dict,
// raise_exception and strftime_now.
#include "template/evaluator.h"

namespace seer::tmpl {

void add_builtins(Scope& globals);

}  // namespace seer::tmpl
