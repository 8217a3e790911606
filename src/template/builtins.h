#pragma once
// The global functions every chat template sees: range, namespace, dict,
// raise_exception and strftime_now.
#include <ctime>
#include <optional>

#include "template/evaluator.h"

namespace seer::tmpl {

// strftime_now formats `now` (seconds since the epoch, local time) or, unset, the clock.
void add_builtins(Scope& globals, std::optional<std::time_t> now = std::nullopt);

}  // namespace seer::tmpl
