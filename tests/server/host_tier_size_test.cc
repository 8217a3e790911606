// `--swap-blocks auto`: min(4 GiB, a quarter of the memory left beside the device
// pool), in whole blocks, and none when the available memory cannot be read.
#include <gtest/gtest.h>

#include "server/host_tier_size.h"

namespace seer::server {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

TEST(AutoHostTier, AQuarterOfWhatIsLeftBesideTheDevicePool) {
  HostTierSize s = auto_host_tier(/*block_bytes=*/1 << 20, /*device_pool_bytes=*/2 * kGiB, 6 * kGiB);
  EXPECT_EQ(s.blocks, 1024);  // (6 - 2) GiB / 4 = 1 GiB of 1 MiB blocks
  EXPECT_NE(s.reason.find("auto"), std::string::npos) << s.reason;
}

TEST(AutoHostTier, NeverMoreThanFourGiB) {
  EXPECT_EQ(auto_host_tier(1 << 20, kGiB, 100 * kGiB).blocks, 4096);
}

TEST(AutoHostTier, NothingLeftOrUnknownGivesNoTier) {
  EXPECT_EQ(auto_host_tier(1 << 20, 8 * kGiB, 4 * kGiB).blocks, 0);
  HostTierSize unknown = auto_host_tier(1 << 20, kGiB, std::nullopt);
  EXPECT_EQ(unknown.blocks, 0);
  EXPECT_NE(unknown.reason.find("--swap-blocks"), std::string::npos) << unknown.reason;
}

TEST(AutoHostTier, ThisMachineReportsItsAvailableMemory) {
  std::optional<int64_t> avail = available_memory_bytes();
  ASSERT_TRUE(avail.has_value()) << "/proc/meminfo has no MemAvailable";
  EXPECT_GT(*avail, 0);
}

}  // namespace
}  // namespace seer::server
