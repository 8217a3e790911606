#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "template/template.h"

namespace seer::tmpl::testing {

// Renders `source` with `context` (a JSON object text).
inline std::string render(const std::string& source, const std::string& context = "{}") {
  return Template::parse(source).render(nlohmann::ordered_json::parse(context));
}

}  // namespace seer::tmpl::testing
