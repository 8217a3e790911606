#include "sim/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace seer {
namespace {

constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
constexpr double kPanelW = 380, kPanelH = 300;
constexpr double kLeft = 70, kRight = 20, kTop = 60, kBottom = 55;

std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string tick_label(double v) {
  if (v == 0) return "0";
  double a = std::fabs(v);
  if (a >= 1e5 || a < 1e-3) return fmt::format("{:.0e}", v);
  return fmt::format("{:g}", v);
}

bool usable(double y, bool log_y) { return std::isfinite(y) && (!log_y || y > 0); }

struct Range {
  double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return lo > hi; }
};

void draw_panel(std::string& svg, const PlotPanel& p, double x0, const std::vector<std::string>& names) {
  const double w = kPanelW - kLeft - kRight, h = kPanelH - kTop - kBottom;
  const double left = x0 + kLeft, top = kTop;
  Range xr, yr;
  for (const auto& s : p.series)
    for (auto [x, y] : s.points)
      if (std::isfinite(x) && usable(y, p.log_y)) {
        xr.add(x);
        yr.add(p.log_y ? std::log10(y) : y);
      }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"14\">{}</text>\n", left + w / 2,
                     top - 12, esc(p.title));
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n", left, top,
                     w, h);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\">{}</text>\n", left + w / 2,
                     top + h + 40, esc(p.x_label));
  svg += fmt::format(
      "<text transform=\"translate({},{}) rotate(-90)\" text-anchor=\"middle\" font-size=\"12\">{}</text>\n",
      x0 + 16, top + h / 2, esc(p.y_label));
  if (xr.empty()) {
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\">no data</text>\n",
                       left + w / 2, top + h / 2);
    return;
  }
  if (xr.hi == xr.lo) xr = {xr.lo - 1, xr.hi + 1};
  if (!p.log_y) yr.lo = std::min(yr.lo, 0.0);
  if (yr.hi == yr.lo) yr = {yr.lo - 1, yr.hi + 1};
  std::vector<double> xt = nice_ticks(xr.lo, xr.hi), yt;
  if (p.log_y) {
    yr = {std::floor(yr.lo), std::ceil(yr.hi)};
    if (yr.hi == yr.lo) yr.hi += 1;
    for (double e = yr.lo; e <= yr.hi + 1e-9; e += 1) yt.push_back(e);
  } else {
    yt = nice_ticks(yr.lo, yr.hi);
    yr = {std::min(yr.lo, yt.front()), std::max(yr.hi, yt.back())};
  }
  xr = {std::min(xr.lo, xt.front()), std::max(xr.hi, xt.back())};
  auto px = [&](double x) { return left + (x - xr.lo) / (xr.hi - xr.lo) * w; };
  auto py = [&](double y) { return top + h - (y - yr.lo) / (yr.hi - yr.lo) * h; };
  for (double t : xt) {
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>\n", px(t), top,
                       top + h);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\">{}</text>\n", px(t),
                       top + h + 16, tick_label(t));
  }
  for (double t : yt) {
    svg += fmt::format("<line x1=\"{0}\" y1=\"{2:.1f}\" x2=\"{1}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/>\n", left, left + w,
                       py(t));
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" font-size=\"11\">{}</text>\n", left - 5,
                       py(t) + 4, tick_label(p.log_y ? std::pow(10.0, t) : t));
  }
  for (const auto& s : p.series) {
    size_t ci = std::find(names.begin(), names.end(), s.name) - names.begin();
    const char* color = kColors[ci % std::size(kColors)];
    std::vector<std::pair<double, double>> pts;
    for (auto [x, y] : s.points)
      if (std::isfinite(x) && usable(y, p.log_y)) pts.emplace_back(px(x), py(p.log_y ? std::log10(y) : y));
    std::sort(pts.begin(), pts.end());
    std::string path;
    for (auto [x, y] : pts) path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "" : " ", x, y);
    svg += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n", path, color);
    for (auto [x, y] : pts)
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", x, y, color);
  }
}

}  // namespace

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return {lo};
  double raw = (hi - lo) / std::max(target, 1);
  int exp10 = static_cast<int>(std::floor(std::log10(raw)));
  double mag = std::pow(10.0, exp10);
  double mult = 10;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw * (1 - 1e-9)) {
      mult = m;
      break;
    }
  // Ticks as integer multiples of mult * 10^exp10, divided rather than multiplied by
  // a negative power of ten so 0.6 prints as 0.6, not 0.6000000000000001.
  auto tick = [&](double k) { return exp10 < 0 ? k * mult / std::pow(10.0, -exp10) : k * mult * mag; };
  const double step = mult * mag;
  std::vector<double> out;
  for (double k = std::floor(lo / step); tick(k) <= hi + step * 0.999; k += 1) {
    out.push_back(tick(k) == 0 ? 0.0 : tick(k));
    if (out.size() > 100) break;
  }
  return out;
}

std::string render_svg(const std::string& title, const std::vector<PlotPanel>& panels) {
  std::vector<std::string> names;
  for (const auto& p : panels)
    for (const auto& s : p.series)
      if (std::find(names.begin(), names.end(), s.name) == names.end()) names.push_back(s.name);
  const double width = kPanelW * std::max<size_t>(panels.size(), 1);
  const double legend_h = 24;
  const double height = kPanelH + legend_h + 10;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      width, height);
  svg += fmt::format("<text x=\"{}\" y=\"22\" text-anchor=\"middle\" font-size=\"16\" font-weight=\"bold\">{}</text>\n",
                     width / 2, esc(title));
  for (size_t i = 0; i < panels.size(); ++i) draw_panel(svg, panels[i], kPanelW * static_cast<double>(i), names);
  double lx = kLeft, ly = kPanelH + 14;
  for (size_t i = 0; i < names.size(); ++i) {
    const char* color = kColors[i % std::size(kColors)];
    svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"3\"/>\n", lx, ly,
                       lx + 22, ly, color);
    svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\">{}</text>\n", lx + 27, ly + 4, esc(names[i]));
    lx += 40 + 8.0 * static_cast<double>(names[i].size());
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace seer
