#pragma once
// Python literals as JSON values, for calls written as Python (pythonic.cc): strings
// in ' or " with Python's escapes, ints and floats, True / False / None (and JSON's
// true / false / null), lists, tuples (as arrays) and dicts with literal keys.
#include <string_view>

#include <nlohmann/json.hpp>

namespace seer::server {

enum class PyRead { Done, NotYet, Bad };

// Reads the literal at s[*i] (after spaces) into *out and moves *i past it; NotYet
// when the text ends before the literal does (a number or name at the very end is
// not yet known to have ended). Nesting deeper than max_depth is Bad.
PyRead read_python_literal(std::string_view s, size_t* i, nlohmann::ordered_json* out, int max_depth);

}  // namespace seer::server
