// Statements and whitespace control of the template interpreter.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "template/render_helpers.h"

namespace seer::tmpl {
namespace {

using testing::render;

TEST(TemplateStatements, TextAndOutput) {
  EXPECT_EQ(render("a {{ x }} b", R"({"x": 1})"), "a 1 b");
  EXPECT_EQ(render("{{ 'x' }}{{ none }}{{ true }}{{ 1.5 }}{{ [1, 'a'] }}{{ {'k': none} }}"),
            "xNoneTrue1.5[1, 'a']{'k': None}");
}

TEST(TemplateStatements, IfElifElse) {
  const std::string t = "{% if x == 1 %}one{% elif x == 2 %}two{% else %}other{% endif %}";
  EXPECT_EQ(render(t, R"({"x": 1})"), "one");
  EXPECT_EQ(render(t, R"({"x": 2})"), "two");
  EXPECT_EQ(render(t, R"({"x": 3})"), "other");
  EXPECT_EQ(render(t), "other");
}

TEST(TemplateStatements, ForLoopVariables) {
  EXPECT_EQ(render("{% for x in xs %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.length }}"
                   "{{ loop.first }}{{ loop.last }};{% endfor %}",
                   R"({"xs": ["a", "b"]})"),
            "1022TrueFalse;2112FalseTrue;");
  EXPECT_EQ(render("{% for x in xs %}{{ loop.previtem }}<{{ x }}>{{ loop.nextitem }} {% endfor %}", R"({"xs": [1, 2, 3]})"),
            "<1>2 1<2>3 2<3> ");
}

TEST(TemplateStatements, ForOverDictItemsWithFilterAndElse) {
  EXPECT_EQ(render("{% for k, v in d.items() %}{{ k }}={{ v }},{% endfor %}", R"({"d": {"b": 1, "a": 2}})"), "b=1,a=2,");
  EXPECT_EQ(render("{% for k in d %}{{ k }}{% endfor %}", R"({"d": {"b": 1, "a": 2}})"), "ba");
  EXPECT_EQ(render("{% for x in xs if x > 1 %}{{ x }}/{{ loop.length }} {% endfor %}", R"({"xs": [1, 2, 3]})"), "2/2 3/2 ");
  EXPECT_EQ(render("{% for x in xs %}{{ x }}{% else %}empty{% endfor %}", R"({"xs": []})"), "empty");
  EXPECT_EQ(render("{% for x in missing %}{{ x }}{% else %}none{% endfor %}"), "none");
}

TEST(TemplateStatements, BreakAndContinue) {
  EXPECT_EQ(render("{% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 4 %}{% break %}{% endif %}{{ x }}{% endfor %}"),
            "013");
}

TEST(TemplateStatements, SetScopingAndNamespace) {
  // A set inside a loop does not leak out; a namespace attribute does.
  EXPECT_EQ(render("{% set x = 1 %}{% for i in [1, 2] %}{% set x = i %}{% endfor %}{{ x }}"), "1");
  EXPECT_EQ(render("{% set ns = namespace(x=1) %}{% for i in [1, 2] %}{% set ns.x = ns.x + i %}{% endfor %}{{ ns.x }}"),
            "4");
  EXPECT_EQ(render("{% if true %}{% set y = 'in if' %}{% endif %}{{ y }}"), "in if");
  EXPECT_EQ(render("{% set a, b = [1, 2] %}{{ b }}{{ a }}"), "21");
  EXPECT_EQ(render("{% set block %}  text {{ 1 + 1 }}{% endset %}[{{ block }}]"), "[  text 2]");
}

TEST(TemplateStatements, MacroWithDefaultsAndCall) {
  EXPECT_EQ(render("{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}{{ greet('Ann') }} "
                   "{{ greet('Bob', punct='?') }}"),
            "Hi Ann! Hi Bob?");
  EXPECT_EQ(render("{% macro box() %}[{{ caller() }}]{% endmacro %}{% call box() %}inside{% endcall %}"), "[inside]");
  EXPECT_EQ(render("{% macro f(x) %}{{ x }}{% endmacro %}{{ f() }}|"), "|");
}

TEST(TemplateStatements, FilterBlockAndDo) {
  EXPECT_EQ(render("{% filter upper %}abc {{ 'd' }}{% endfilter %}"), "ABC D");
  EXPECT_EQ(render("{% set xs = [] %}{% do xs.append(1) %}{% do xs.append('b') %}{{ xs }}"), "[1, 'b']");
}

TEST(TemplateStatements, CommentsAndGenerationTag) {
  EXPECT_EQ(render("a{# note #}b{% generation %}c{% endgeneration %}"), "abc");
}

TEST(TemplateWhitespace, DashStripsAllWhitespaceOnItsSide) {
  EXPECT_EQ(render("a  \n {{- 'b' -}} \n  c"), "abc");
  EXPECT_EQ(render("a \n{%- if true -%}\n b {%- endif %}"), "ab");
  EXPECT_EQ(render("a \n {#- c -#} \n b"), "ab");
}

TEST(TemplateWhitespace, TrimBlocksDropsTheNewlineAfterABlockTag) {
  EXPECT_EQ(render("{% if true %}\nyes\n{% endif %}\nend"), "yes\nend");
  // Not after an expression tag.
  EXPECT_EQ(render("{{ 'x' }}\ny"), "x\ny");
}

TEST(TemplateWhitespace, LstripBlocksDropsIndentBeforeABlockTag) {
  EXPECT_EQ(render("<\n    {% if true %}\n    x\n    {% endif %}\n>"), "<\n    x\n>");
  // Only at the start of a line, and "{%+" keeps the indent.
  EXPECT_EQ(render("a  {% if true %}b{% endif %}"), "a  b");
  EXPECT_EQ(render("  {%+ if true %}b{% endif %}"), "  b");
  // Not before an expression.
  EXPECT_EQ(render("  {{ 'b' }}"), "  b");
}

TEST(TemplateWhitespace, OneTrailingNewlineOfTheTemplateIsDropped) {
  EXPECT_EQ(render("a\n"), "a");
  EXPECT_EQ(render("a\n\n"), "a\n");
}

TEST(TemplateErrors, SyntaxErrorsNameLineAndColumn) {
  auto message = [](const std::string& src) {
    try {
      (void)Template::parse(src);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(message("line one\n{% if x %}unclosed"), ::testing::HasSubstr("expected '{% endif %}'"));
  EXPECT_THAT(message("a\nb {{ x + }}"), ::testing::HasSubstr("line 2, column 10"));
  EXPECT_THAT(message("{% frobnicate %}"), ::testing::HasSubstr("line 1, column 4: unknown statement 'frobnicate'"));
  EXPECT_THAT(message("{{ 'open }}"), ::testing::HasSubstr("unterminated string"));
  EXPECT_THAT(message("{# open"), ::testing::HasSubstr("unterminated comment"));
  EXPECT_THAT(message("{{ x $ y }}"), ::testing::HasSubstr("unexpected character '$'"));
}

TEST(TemplateErrors, RuntimeErrorsNameLineAndColumn) {
  auto message = [](const std::string& src, const std::string& ctx = "{}") {
    try {
      (void)render(src, ctx);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("\n  {{ raise_exception('Roles must alternate') }}"),
            "chat template line 2, column 6: Roles must alternate");
  EXPECT_THAT(message("{{ missing.attr }}"), ::testing::HasSubstr("'missing' is undefined"));
  EXPECT_THAT(message("{{ 1 + 'a' }}"), ::testing::HasSubstr("unsupported operand type(s) for +: 'int' and 'str'"));
  EXPECT_THAT(message("{{ x | nosuchfilter }}"), ::testing::HasSubstr("no filter named 'nosuchfilter'"));
  EXPECT_THAT(message("{{ x is nosuchtest }}"), ::testing::HasSubstr("no test named 'nosuchtest'"));
  EXPECT_THAT(message("{{ nofn() }}"), ::testing::HasSubstr("'nofn' is undefined"));
  EXPECT_THAT(message("{% for x in 3 %}{% endfor %}"), ::testing::HasSubstr("'int' object is not iterable"));
  EXPECT_THAT(message("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"), ::testing::HasSubstr("recursion"));
}

TEST(TemplateUndefined, BehavesAsJinjaDefaultUndefined) {
  EXPECT_EQ(render("[{{ nope }}]{% if nope %}t{% else %}f{% endif %}{{ nope is defined }}{{ nope | length }}"), "[]fFalse0");
  // A missing key of a defined dict is Undefined, not an error.
  EXPECT_EQ(render("[{{ m.missing }}][{{ m['missing'] }}][{{ xs[5] }}]", R"({"m": {}, "xs": []})"), "[][][]");
  EXPECT_EQ(render("{{ (nope or 'fallback') }}"), "fallback");
}

}  // namespace
}  // namespace seer::tmpl

namespace seer::tmpl {
namespace {

TEST(TemplateErrors, HostileTemplatesGetErrorsNotCrashes) {
  EXPECT_THROW((void)Template::parse("{{ " + std::string(100000, '(') + "1" + std::string(100000, ')') + " }}"), Error);
  std::string nested;
  for (int i = 0; i < 1000; ++i) nested += "{% if true %}";
  EXPECT_THROW((void)Template::parse(nested), Error);
  EXPECT_THROW((void)testing::render("{{ 'x' * 100000000000 }}"), Error);
  EXPECT_THROW((void)testing::render("{% set xs = [] %}{% do xs.append(xs) %}{{ xs }}"), Error);
  EXPECT_THROW((void)testing::render("{% set xs = [] %}{% do xs.append(xs) %}{{ xs | tojson }}"), Error);
}

// A container that would hold itself is an error at once (a cycle of shared
// pointers would never be freed), however deep the loop.
TEST(TemplateErrors, ContainersCannotHoldThemselves) {
  EXPECT_THROW((void)testing::render("{% set xs = [] %}{% set ys = [xs] %}{% do xs.append(ys) %}"), Error);
  EXPECT_THROW((void)testing::render("{% set xs = [] %}{% do xs.extend([xs]) %}"), Error);
  EXPECT_THROW((void)testing::render("{% set d = {} %}{% do d.update({'me': [d]}) %}"), Error);
  EXPECT_EQ(testing::render("{% set xs = [] %}{% set ys = [1] %}{% do xs.append(ys) %}{% do xs.append(ys) %}{{ xs }}"),
            "[[1], [1]]");
}

}  // namespace
}  // namespace seer::tmpl
