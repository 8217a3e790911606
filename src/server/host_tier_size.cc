#include "server/host_tier_size.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace seer::server {

namespace {

std::optional<int64_t> read_number(const char* path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word == "max") return std::nullopt;
  try {
    return std::stoll(word);
  } catch (...) {  // not a number: no limit we can use
    return std::nullopt;
  }
}

std::optional<int64_t> meminfo_available() {
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    int64_t kib = 0;
    if (fields >> kib) return kib * 1024;
  }
  return std::nullopt;
}

double gib(int64_t bytes) { return static_cast<double>(bytes) / (int64_t{1} << 30); }

}  // namespace

std::optional<int64_t> available_memory_bytes() {
  std::optional<int64_t> avail = meminfo_available();
  const std::optional<int64_t> limit = read_number("/sys/fs/cgroup/memory.max");
  const std::optional<int64_t> used = read_number("/sys/fs/cgroup/memory.current");
  if (limit && used) {
    const int64_t cgroup_left = std::max<int64_t>(*limit - *used, 0);
    avail = avail ? std::min(*avail, cgroup_left) : cgroup_left;
  }
  return avail;
}

HostTierSize auto_host_tier(int64_t block_bytes, int64_t device_pool_bytes, std::optional<int64_t> available) {
  if (!available) return {0, "no host tier: available memory unknown (give --swap-blocks N)"};
  const int64_t spare = std::max<int64_t>(*available - device_pool_bytes, 0);
  const int64_t bytes = std::min(kMaxAutoHostKvBytes, spare / 4);
  const auto blocks = static_cast<int32_t>(std::min<int64_t>(bytes / std::max<int64_t>(block_bytes, 1), 1 << 24));
  return {blocks, fmt::format("--swap-blocks auto: {:.2f} GiB = min(4 GiB, a quarter of the {:.1f} GiB available "
                              "beside the device pool)",
                              gib(static_cast<int64_t>(blocks) * block_bytes), gib(spare))};
}

}  // namespace seer::server
