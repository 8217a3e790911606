// Operators, literals, string/dict/list methods and the builtins of the template interpreter.
#include <gtest/gtest.h>

#include "common/error.h"
#include "template/render_helpers.h"

namespace seer::tmpl {
namespace {

using testing::render;

TEST(TemplateExpressions, Arithmetic) {
  EXPECT_EQ(render("{{ 1 + 2 }} {{ 7 - 10 }} {{ 3 * 4 }} {{ 7 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 2 ** 10 }}"),
            "3 -3 12 3.5 3 -4 1 2 1024");
  EXPECT_EQ(render("{{ 1.5 + 1 }} {{ 4 / 2 }} {{ -(3) }} {{ 0.1 + 0.2 }}"), "2.5 2.0 -3 0.30000000000000004");
}

TEST(TemplateExpressions, StringsAndLists) {
  EXPECT_EQ(render("{{ 'a' + 'b' }} {{ 'ab' * 3 }} {{ 'n=' ~ 5 ~ none }} {{ [1] + [2] }}"), "ab ababab n=5None [1, 2]");
  EXPECT_EQ(render("{{ 'a' 'b' }}"), "ab");  // adjacent literals join
  EXPECT_EQ(render("{{ \"it's\" }} {{ ['it\\'s'] }} {{ 'tab\\there' }}"), "it's [\"it's\"] tab\there");
}

TEST(TemplateExpressions, Comparisons) {
  EXPECT_EQ(render("{{ 1 == 1.0 }} {{ 'a' != 'b' }} {{ 1 < 2 }} {{ 2 <= 1 }} {{ 'b' > 'a' }} {{ [1, 2] == [1, 2] }}"),
            "True True True False True True");
  EXPECT_EQ(render("{{ 'ell' in 'hello' }} {{ 2 in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 3 not in [1] }}"),
            "True True True True");
}

TEST(TemplateExpressions, LogicShortCircuitsAndReturnsOperands) {
  EXPECT_EQ(render("{{ 0 or 'x' }} {{ 'a' and 'b' }} {{ not [] }} {{ none and nope.attr }} {{ 1 or nope.attr }}"), "x b True None 1");
}

TEST(TemplateExpressions, TernaryAndPrecedence) {
  EXPECT_EQ(render("{{ 'y' if x else 'n' }} {{ 'y' if not x else 'n' }} [{{ 'only' if x }}]", R"({"x": false})"), "n y []");
  EXPECT_EQ(render("{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 'a' ~ (1 + 2) }} {{ -2 ** 2 }}"), "7 9 a3 4");
}

TEST(TemplateExpressions, IndexingAndSlicing) {
  const std::string ctx = R"({"xs": [0, 1, 2, 3, 4], "s": "héllo", "d": {"a": {"b": [7]}}})";
  EXPECT_EQ(render("{{ xs[0] }}{{ xs[-1] }} {{ xs[1:3] }} {{ xs[::2] }} {{ xs[::-1] }} {{ xs[-2:] }} {{ xs[:-3] }}", ctx),
            "04 [1, 2] [0, 2, 4] [4, 3, 2, 1, 0] [3, 4] [0, 1]");
  EXPECT_EQ(render("{{ s[1] }} {{ s[1:3] }} {{ s[::-1] }} {{ s | length }}", ctx), "é él olléh 5");
  EXPECT_EQ(render("{{ d.a.b[0] }} {{ d['a']['b'].0 }}", ctx), "7 7");
}

TEST(TemplateExpressions, DictAndListLiterals) {
  EXPECT_EQ(render("{% set d = {'a': 1, 'b': [true, none]} %}{{ d.b }} {{ d | length }} {{ (1, 2) }} {{ (1,) }}"),
            "[True, None] 2 (1, 2) (1,)");
}

TEST(TemplateMethods, Strings) {
  EXPECT_EQ(render("[{{ '  x  '.strip() }}][{{ 'xxaxx'.strip('x') }}][{{ '  x '.lstrip() }}][{{ ' x  '.rstrip() }}]"),
            "[x][a][x ][ x]");
  EXPECT_EQ(render("{{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }} {{ 'a b c'.split(' ', 1) }}"),
            "['a', 'b', '', 'c'] ['a', 'b'] ['a', 'b c']");
  EXPECT_EQ(render("{{ 'hello'.startswith('he') }} {{ 'hello'.endswith(('x', 'lo')) }} {{ 'aXa'.replace('a', 'b') }}"),
            "True True bXb");
  EXPECT_EQ(render("{{ 'Ab'.upper() }} {{ 'Ab'.lower() }} {{ 'hello world'.title() }} {{ 'hELLO'.capitalize() }}"),
            "AB ab Hello World Hello");
}

TEST(TemplateMethods, DictsAndLists) {
  const std::string ctx = R"({"d": {"a": 1, "b": 2}})";
  EXPECT_EQ(render("{{ d.get('a') }} {{ d.get('z') }} {{ d.get('z', 9) }} {{ d.keys() }} {{ d.values() }} {{ d.items() }}", ctx),
            "1 None 9 ['a', 'b'] [1, 2] [('a', 1), ('b', 2)]");
  EXPECT_EQ(render("{% set xs = [3] %}{% set _ = xs.append(4) %}{{ xs }} {{ xs.pop() }} {{ xs }}"), "[3, 4] 4 [3]");
}

TEST(TemplateBuiltins, RangeNamespaceDictRaise) {
  EXPECT_EQ(render("{{ range(3) }} {{ range(1, 7, 2) }} {{ range(3, 0, -1) }}"), "[0, 1, 2] [1, 3, 5] [3, 2, 1]");
  EXPECT_EQ(render("{% set ns = namespace(a=1, b='x') %}{{ ns.a }}{{ ns.b }}{{ ns.c }}"), "1x");
  EXPECT_EQ(render("{{ dict(a=1) }}"), "{'a': 1}");
  EXPECT_THROW((void)render("{{ raise_exception('no') }}"), Error);
}

TEST(TemplateBuiltins, StrftimeNowFormatsTheClock) {
  const std::string year = render("{{ strftime_now('%Y') }}");
  ASSERT_EQ(year.size(), 4u);
  EXPECT_GE(std::stoi(year), 2024);
}

TEST(TemplateBuiltins, ChatContextVariables) {
  EXPECT_EQ(render("{{ bos_token }}{% for m in messages %}{{ m.role }}:{{ m['content'] }}{% endfor %}"
                   "{% if add_generation_prompt %}>{% endif %}{{ eos_token }}{{ tools | length }}",
                   R"({"bos_token": "<s>", "eos_token": "</s>", "add_generation_prompt": true,
                       "messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function"}]})"),
            "<s>user:hi></s>1");
}

}  // namespace
}  // namespace seer::tmpl
