// Filters and tests of the template interpreter.
#include <gtest/gtest.h>

#include "common/error.h"
#include "template/render_helpers.h"

namespace seer::tmpl {
namespace {

using testing::render;

TEST(TemplateFilters, Strings) {
  EXPECT_EQ(render("[{{ '  a b \\n' | trim }}][{{ 'Ab' | upper }}][{{ 'Ab' | lower }}][{{ 'hELLO wORLD' | capitalize }}]"
                   "[{{ 'hello world' | title }}][{{ 'aaa' | replace('a', 'b', 2) }}]"),
            "[a b][AB][ab][Hello world][Hello World][bba]");
  EXPECT_EQ(render("{{ '<a href=\"x\">&\\'' | e }} {{ '<b>' | escape }} {{ '<b>' | safe }}"),
            "&lt;a href=&#34;x&#34;&gt;&amp;&#39; &lt;b&gt; <b>");
  EXPECT_EQ(render("{{ 'a\\nb\\n\\nc' | indent(2) }}|{{ 'a\\nb' | indent(2, true) }}|{{ 'a\\n\\nb' | indent(2, blank=true) }}"),
            "a\n  b\n\n  c|  a\n  b|a\n  \n  b");
}

TEST(TemplateFilters, Sequences) {
  const std::string ctx = R"({"xs": [3, 1, 2], "s": "abc", "d": {"b": 2, "A": 1, "c": 0}})";
  EXPECT_EQ(render("{{ xs | length }} {{ xs | count }} {{ s | length }} {{ d | length }}", ctx), "3 3 3 3");
  EXPECT_EQ(render("{{ xs | first }}{{ xs | last }}{{ s | first }}{{ s | last }}", ctx), "32ac");
  EXPECT_EQ(render("{{ xs | join }} {{ xs | join(', ') }} {{ s | list }} {{ xs | sort }} {{ xs | reverse | list }}", ctx),
            "312 3, 1, 2 ['a', 'b', 'c'] [1, 2, 3] [2, 1, 3]");
  EXPECT_EQ(render("{{ d | items | list }} {{ d | dictsort }} {{ d | dictsort(by='value') }}", ctx),
            "[('b', 2), ('A', 1), ('c', 0)] [('A', 1), ('b', 2), ('c', 0)] [('c', 0), ('A', 1), ('b', 2)]");
  EXPECT_EQ(render("{{ ['a', 'A', 'b', 'a'] | unique | list }} {{ [1, 2, 1] | unique | list }}"), "['a', 'b'] [1, 2]");
  EXPECT_EQ(render("{{ xs | sum }} {{ xs | min }} {{ xs | max }}", ctx), "6 1 3");
}

TEST(TemplateFilters, SelectRejectMap) {
  const std::string ctx = R"({"ms": [{"role": "system", "n": 1}, {"role": "user", "n": 2, "x": {"y": 5}}, {"role": "user", "n": 3}]})";
  EXPECT_EQ(render("{{ ms | selectattr('role', 'equalto', 'user') | map(attribute='n') | list }}", ctx), "[2, 3]");
  EXPECT_EQ(render("{{ ms | rejectattr('role', '==', 'user') | map(attribute='n') | list }}", ctx), "[1]");
  EXPECT_EQ(render("{{ ms | selectattr('x') | map(attribute='x.y') | list }}", ctx), "[5]");
  EXPECT_EQ(render("{{ ms | selectattr('x', 'defined') | list | length }}", ctx), "1");
  EXPECT_EQ(render("{{ ['a', 'B'] | map('upper') | list }} {{ [0, 1, 2] | select('odd') | list }} {{ [0, 1, ''] | reject | list }}"),
            "['A', 'B'] [1] [0, '']");
}

TEST(TemplateFilters, Conversions) {
  EXPECT_EQ(render("{{ '42' | int }} {{ 'x' | int }} {{ 'x' | int(7) }} {{ 3.9 | int }} {{ '2.5' | float }} {{ 2 | float }}"),
            "42 0 7 3 2.5 2.0");
  EXPECT_EQ(render("{{ 3 | string }}{{ none | string }} {{ -3 | abs }} {{ 2.567 | round(2) }} {{ 2.5 | round }} {{ 3.5 | round }} {{ 2.1 | round(0, 'ceil') }}"),
            "3None 3 2.57 2.0 4.0 3.0");
}

TEST(TemplateFilters, Default) {
  EXPECT_EQ(render("{{ nope | default('d') }} {{ '' | default('d') }} {{ '' | default('d', true) }} {{ none | d('x') }}"),
            "d  d None");
}

TEST(TemplateFilters, ToJsonIsPythonJsonDumpsWithoutAsciiEscapes) {
  const std::string ctx = R"({"v": {"name": "wé\"ather", "n": [1, 2.5, true, null], "e": {}, "l": [], "t": "a\nb\u0001"}})";
  EXPECT_EQ(render("{{ v | tojson }}", ctx),
            R"({"name": "wé\"ather", "n": [1, 2.5, true, null], "e": {}, "l": [], "t": "a\nb\u0001"})");
  EXPECT_EQ(render("{{ v.n | tojson(indent=2) }}", ctx), "[\n  1,\n  2.5,\n  true,\n  null\n]");
  EXPECT_EQ(render("{{ {'b': {'c': 1}, 'a': 2} | tojson(indent=2) }}"), "{\n  \"b\": {\n    \"c\": 1\n  },\n  \"a\": 2\n}");
  EXPECT_EQ(render("{{ 1.0 | tojson }} {{ 'x' | tojson }}"), "1.0 \"x\"");
}

TEST(TemplateTests, TypesAndValues) {
  const std::string ctx = R"({"s": "x", "n": 1, "f": 1.5, "l": [], "d": {}, "z": null, "t": true})";
  EXPECT_EQ(render("{{ s is string }}{{ n is string }}{{ d is mapping }}{{ l is mapping }}{{ l is iterable }}{{ s is iterable }}"
                   "{{ n is iterable }}{{ l is sequence }}",
                   ctx),
            "TrueFalseTrueFalseTrueTrueFalseTrue");
  EXPECT_EQ(render("{{ n is number }}{{ f is number }}{{ s is number }}{{ z is none }}{{ n is none }}{{ t is true }}"
                   "{{ n is true }}{{ t is false }}",
                   ctx),
            "TrueTrueFalseTrueFalseTrueFalseFalse");
  EXPECT_EQ(render("{{ q is defined }}{{ q is undefined }}{{ s is defined }}{{ z is not none }}{{ s is not string }}", ctx),
            "FalseTrueTrueFalseFalse");
  EXPECT_EQ(render("{{ n is equalto 1 }}{{ n is eq(2) }}{{ n is == 1 }}{{ 'x' is in 'xyz' }}{{ 4 is divisibleby 2 }}"
                   "{{ 3 is odd }}{{ 3 is even }}",
                   ctx),
            "TrueFalseTrueTrueTrueTrueFalse");
}

}  // namespace
}  // namespace seer::tmpl
