// The depth limit on what a chat template walks by recursion (issue 53): the data it
// is given (messages, tools: request data) and what tojson prints. kMaxValueDepth
// levels render; one more is refused with a message naming the limit.
#include <gtest/gtest.h>

#include "common/error.h"
#include "template/render_helpers.h"

namespace seer::tmpl {
namespace {

using testing::render;

std::string lists(int depth) { return std::string(static_cast<size_t>(depth), '[') + std::string(static_cast<size_t>(depth), ']'); }

std::string render_error(const std::string& source, const std::string& context) {
  try {
    (void)render(source, context);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(TemplateValueDepth, ContextDataUpToTheLimit) {
  // The context object is level 0: "x" holds kMaxValueDepth lists, the last at that depth.
  const std::string ok = R"({"x": )" + lists(kMaxValueDepth) + "}";
  EXPECT_EQ(render("{{ x | tojson }}", ok), lists(kMaxValueDepth));
  const std::string e = render_error("{{ x }}", R"({"x": )" + lists(kMaxValueDepth + 1) + "}");
  EXPECT_NE(e.find("nests deeper than 100 levels (the template value depth limit)"), std::string::npos) << e;
}

TEST(TemplateValueDepth, TojsonUpToTheLimit) {
  const std::string ctx = R"({"x": )" + lists(kMaxValueDepth - 1) + "}";
  EXPECT_EQ(render("{{ [x] | tojson }}", ctx), lists(kMaxValueDepth));
  const std::string e = render_error("{{ [[x]] | tojson }}", ctx);
  EXPECT_NE(e.find("nests deeper than 100 levels for tojson (the template value depth limit)"), std::string::npos) << e;
}

}  // namespace
}  // namespace seer::tmpl
