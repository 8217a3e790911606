#pragma once
// A small SVG grouped-bar-chart writer (experiment summaries such as S3's tokens/s
// and batch size per model x policy): panels side by side, one group of bars per
// category, one colour per series, the value above each bar, one legend.
#include <string>
#include <vector>

namespace seer {

struct BarSeries {
  std::string name;
  std::vector<double> values;  // one per category; non-finite values draw no bar
};

struct BarPanel {
  std::string title;
  std::string y_label;
  std::vector<std::string> categories;
  std::vector<BarSeries> series;
};

std::string render_bar_svg(const std::string& title, const std::vector<BarPanel>& panels);

}  // namespace seer
