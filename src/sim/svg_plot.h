#pragma once
// A small SVG line-plot writer for `seer sim sweep`: one or more panels side by side,
// each with axes, "nice" ticks, grid lines and one line per series; one legend for
// the figure (series are matched across panels by name, so colours agree).
#include <string>
#include <utility>
#include <vector>

namespace seer {

struct PlotSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y); non-finite y are skipped
};

struct PlotPanel {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_y = false;  // non-positive values are skipped on a log axis
  std::vector<PlotSeries> series;
};

std::string render_svg(const std::string& title, const std::vector<PlotPanel>& panels);

// Tick positions covering [lo, hi] with a step of 1, 2 or 5 times a power of ten,
// about `target` of them.
std::vector<double> nice_ticks(double lo, double hi, int target = 5);

}  // namespace seer
