#include "sim/svg_bars.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/svg_plot.h"

namespace seer {
namespace {

constexpr const char* kColors[] = {"#7f7f7f", "#1f77b4", "#2ca02c", "#d62728", "#ff7f0e", "#9467bd"};
constexpr double kPanelW = 460, kPanelH = 320;
constexpr double kLeft = 70, kRight = 20, kTop = 70, kBottom = 60;

std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

std::string value_label(double v) { return v >= 100 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v); }

void draw_axes(std::string& svg, const BarPanel& p, double left, double w, double h, double y_hi) {
  auto py = [&](double y) { return kTop + h - y / y_hi * h; };
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"14\">{}</text>\n", left + w / 2,
                     kTop - 28, esc(p.title));
  svg += fmt::format(
      "<text transform=\"translate({},{}) rotate(-90)\" text-anchor=\"middle\" font-size=\"12\">{}</text>\n",
      left - kLeft + 16, kTop + h / 2, esc(p.y_label));
  for (double t : nice_ticks(0, y_hi)) {
    if (t > y_hi + 1e-9) continue;
    svg += fmt::format("<line x1=\"{0}\" y1=\"{2:.1f}\" x2=\"{1}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/>\n", left, left + w,
                       py(t));
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" font-size=\"11\">{:g}</text>\n", left - 5,
                       py(t) + 4, t);
  }
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n", left,
                     kTop, w, h);
}

void draw_panel(std::string& svg, const BarPanel& p, double x0) {
  const double w = kPanelW - kLeft - kRight, h = kPanelH - kTop - kBottom, left = x0 + kLeft;
  double y_max = 0;
  for (const auto& s : p.series)
    for (double v : s.values)
      if (std::isfinite(v)) y_max = std::max(y_max, v);
  // Headroom above the tallest bar for its (vertical) value label.
  const double top = y_max > 0 ? y_max * 1.2 : 1.0;
  std::vector<double> ticks = nice_ticks(0, top);
  const double y_hi = std::max(ticks.back(), top);
  draw_axes(svg, p, left, w, h, y_hi);
  const size_t groups = p.categories.size(), bars = std::max<size_t>(p.series.size(), 1);
  if (groups == 0) return;
  const double group_w = w / groups, bar_w = group_w * 0.8 / bars;
  for (size_t g = 0; g < groups; ++g) {
    const double gx = left + g * group_w + group_w * 0.1;
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\">{}</text>\n",
                       left + (g + 0.5) * group_w, kTop + h + 16, esc(p.categories[g]));
    for (size_t b = 0; b < p.series.size(); ++b) {
      if (g >= p.series[b].values.size() || !std::isfinite(p.series[b].values[g])) continue;
      const double v = p.series[b].values[g], bh = v / y_hi * h, x = gx + b * bar_w;
      svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"/>\n", x,
                         kTop + h - bh, bar_w * 0.92, bh, kColors[b % std::size(kColors)]);
      svg += fmt::format(
          "<text transform=\"translate({:.1f},{:.1f}) rotate(-90)\" font-size=\"9\">{}</text>\n",
          x + bar_w * 0.46 + 3, kTop + h - bh - 3, value_label(v));
    }
  }
}

}  // namespace

std::string render_bar_svg(const std::string& title, const std::vector<BarPanel>& panels) {
  const double width = kPanelW * std::max<size_t>(panels.size(), 1), height = kPanelH + 30;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"20\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">{3}</text>\n",
      width, height, width / 2, esc(title));
  for (size_t i = 0; i < panels.size(); ++i) draw_panel(svg, panels[i], i * kPanelW);
  if (!panels.empty()) {
    double x = 20;
    for (size_t b = 0; b < panels.front().series.size(); ++b) {
      svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>\n", x, height - 22,
                         kColors[b % std::size(kColors)]);
      svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\">{}</text>\n", x + 16, height - 12,
                         esc(panels.front().series[b].name));
      x += 24 + 8.0 * panels.front().series[b].name.size();
    }
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace seer
