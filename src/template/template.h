#pragma once
// A Jinja template as Hugging Face renders chat templates (trim_blocks,
// lstrip_blocks, loopcontrols, tojson without HTML escaping, raise_exception and
// strftime_now). Parse once, render from any number of threads.
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "template/ast.h"

namespace seer::tmpl {

class Template {
 public:
  // Throws seer::Error ("chat template line L, column C: ...") on a syntax error.
  [[nodiscard]] static Template parse(const std::string& source);

  // Renders with `context` (a JSON object: messages, tools, bos_token, ...) as the
  // template's variables, beside the builtins (range, namespace, raise_exception,
  // strftime_now). Throws seer::Error with the template position on a runtime
  // error, including raise_exception(msg).
  [[nodiscard]] std::string render(const nlohmann::ordered_json& context) const;

 private:
  std::shared_ptr<const Body> body_;
};

}  // namespace seer::tmpl
