#pragma once
// Jinja's filters (`x | name(args)`), tests (`x is name(args)`) and the methods of
// strings, dicts and lists (`s.strip()`), as chat templates use them.
#include <string>

#include "template/value.h"

namespace seer::tmpl {

// Throws seer::Error for an unknown filter or arguments it does not take.
[[nodiscard]] Value apply_filter(const std::string& name, const Value& v, const CallArgs& args);
// Throws seer::Error for an unknown test.
[[nodiscard]] bool apply_test(const std::string& name, const Value& v, const CallArgs& args);
// The bound method `obj.name`, or Undefined when the type has no such method.
[[nodiscard]] Value method(const Value& obj, const std::string& name);
// json.dumps(v, ensure_ascii=False, indent=indent) as Hugging Face's tojson: ", " and
// ": " between items without indent, "," and newlines with it. indent < 0: none.
[[nodiscard]] std::string to_json_text(const Value& v, int indent, bool sort_keys = false);

}  // namespace seer::tmpl
