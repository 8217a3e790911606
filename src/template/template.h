#pragma once
// A Jinja template as Hugging Face renders chat templates (trim_blocks,
// lstrip_blocks, loopcontrols, tojson without HTML escaping, raise_exception and
// strftime_now). Parse once, render from any number of threads.
#include <ctime>
#include <memory>
#include <optional>
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
  // `now` (seconds since the epoch) is the time strftime_now formats; unset: the clock.
  [[nodiscard]] std::string render(const nlohmann::ordered_json& context,
                                   std::optional<std::time_t> now = std::nullopt) const;

 private:
  std::shared_ptr<const Body> body_;
};

}  // namespace seer::tmpl
