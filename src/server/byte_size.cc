#include "server/byte_size.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "common/error.h"

namespace seer::server {

int64_t parse_byte_size(const std::string& text, const std::string& flag) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(value) || value < 0)
    fail("{} must be a size such as 1073741824, 512M or 2G, got '{}'", flag, text);
  std::string unit(end);
  for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() > 1 && unit.back() == 'B') unit.pop_back();
  if (unit.size() > 1 && unit.back() == 'I') unit.pop_back();
  double scale = 1;
  if (unit == "B") scale = 1;
  else if (unit == "K") scale = 1024.0;
  else if (unit == "M") scale = 1024.0 * 1024;
  else if (unit == "G") scale = 1024.0 * 1024 * 1024;
  else if (unit == "T") scale = 1024.0 * 1024 * 1024 * 1024;
  else if (!unit.empty()) fail("{}: unknown unit '{}' in '{}' (use K, M, G or T)", flag, std::string(end), text);
  const double bytes = value * scale;
  if (bytes > 9.0e18) fail("{} is too large: '{}'", flag, text);
  return static_cast<int64_t>(bytes);
}

}  // namespace seer::server
