#pragma once
// Comma-separated flag values of the micro-benchmarks ("1,8,32" -> {"1", "8", "32"}).
#include <sstream>
#include <string>
#include <vector>

namespace seer::bench_args {

inline std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace seer::bench_args
