#include "template/template.h"

#include "common/error.h"
#include "template/builtins.h"
#include "template/evaluator.h"
#include "template/parser.h"

namespace seer::tmpl {

Template Template::parse(const std::string& source) {
  Template t;
  t.body_ = std::make_shared<const Body>(tmpl::parse(source));
  return t;
}

std::string Template::render(const nlohmann::ordered_json& context, std::optional<std::time_t> now) const {
  if (!body_) fail("the chat template was not parsed");
  if (!context.is_object()) fail("a chat template's context must be a JSON object");
  auto globals = std::make_shared<Scope>();
  add_builtins(*globals, now);
  for (const auto& [k, v] : context.items()) globals->vars[k] = Value::from_json(v);
  Evaluator ev;
  return ev.render(*body_, globals);
}

}  // namespace seer::tmpl
