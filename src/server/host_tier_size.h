#pragma once
// `--swap-blocks auto` (the default of `seer serve`): the host KV tier sized from the
// memory this process may still use, like vLLM's 4 GiB of swap space per GPU but
// never more than a quarter of what is free (the host tier's mapping is reserved
// lazily: pages are touched only when blocks are swapped out).
#include <cstdint>
#include <optional>
#include <string>

namespace seer::server {

inline constexpr int64_t kMaxAutoHostKvBytes = int64_t{4} << 30;

// Bytes this process may still allocate: MemAvailable from /proc/meminfo, lowered to
// the cgroup's limit minus its usage where one is set; nullopt when neither is readable.
[[nodiscard]] std::optional<int64_t> available_memory_bytes();

struct HostTierSize {
  int32_t blocks = 0;
  std::string reason;  // for the start-up line
};

// min(kMaxAutoHostKvBytes, (available - device_pool_bytes) / 4) in whole blocks.
HostTierSize auto_host_tier(int64_t block_bytes, int64_t device_pool_bytes, std::optional<int64_t> available);

}  // namespace seer::server
