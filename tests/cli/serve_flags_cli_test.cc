// `seer serve` flag values that cannot be served are refused before anything
// listens, with a message naming the flag.
#include <gtest/gtest.h>

#include "cli/run_seer.h"

namespace seer::testing {
namespace {

TEST(ServeFlagsCli, SwapBlocksIsAutoOrABlockCount) {
  for (const char* bad : {"lots", "-3", "12x"}) {
    auto r = run_seer({"serve", "--port", "0", "--swap-blocks", bad});
    EXPECT_EQ(r.exit_code, 1) << bad;
    EXPECT_NE(r.err.find("--swap-blocks must be auto or a number of blocks"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("listening"), std::string::npos) << r.out;
  }
}

TEST(ServeFlagsCli, ANegativeTbtSloIsRefused) {
  auto r = run_seer({"serve", "--port", "0", "--tbt-slo", "-1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--tbt-slo must be >= 0"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace seer::testing
