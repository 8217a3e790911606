#include "sim/svg_plot.h"

#include <gtest/gtest.h>

namespace seer {
namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(SvgPlot, NiceTicksUseRoundSteps) {
  EXPECT_EQ(nice_ticks(0, 10), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(nice_ticks(0.3, 0.9, 3), (std::vector<double>{0.2, 0.4, 0.6, 0.8, 1.0}));
  auto t = nice_ticks(0, 0.037);
  EXPECT_NEAR(t[1] - t[0], 0.01, 1e-12);
  EXPECT_GE(t.back(), 0.037);
}

TEST(SvgPlot, OneLinePerSeriesPerPanelAndOneLegend) {
  PlotPanel a{"P99 latency", "rate (req/s)", "seconds", true,
              {{"vllm", {{1, 0.5}, {2, 1.0}, {4, 8.0}}}, {"orca", {{1, 0.6}, {2, 2.0}}}}};
  PlotPanel b{"TBT <p99>", "rate (req/s)", "seconds", false, {{"orca", {{1, 0.05}, {2, 0.07}}}}};
  std::string svg = render_svg("Llama & co", {a, b});
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_EQ(count(svg, "<polyline"), 3u);
  EXPECT_EQ(count(svg, "<circle"), 7u);
  EXPECT_NE(svg.find("Llama &amp; co"), std::string::npos);
  EXPECT_NE(svg.find("TBT &lt;p99&gt;"), std::string::npos);
  EXPECT_EQ(count(svg, ">vllm</text>"), 1u);  // legend entries, once per series name
  EXPECT_EQ(count(svg, ">orca</text>"), 1u);
  // Colours agree across panels: orca is the second series name.
  EXPECT_EQ(count(svg, "stroke=\"#d62728\" stroke-width=\"2\""), 2u);
}

TEST(SvgPlot, SkipsNonFiniteAndNonPositiveOnLogAxes) {
  PlotPanel p{"t", "x", "y", true, {{"s", {{1, 0.0}, {2, 1.0 / 0.0}, {3, 2.0}}}}};
  std::string svg = render_svg("x", {p});
  EXPECT_EQ(count(svg, "<circle"), 1u);
  PlotPanel empty{"t", "x", "y", false, {}};
  EXPECT_NE(render_svg("x", {empty}).find("no data"), std::string::npos);
}

}  // namespace
}  // namespace seer
