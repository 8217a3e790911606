// Random sequences of every KV operation with the invariant checker after each.
#include <random>

#include <gtest/gtest.h>

#include "kv/kv_manager.h"

namespace seer {
namespace {

// One group of every layer, and a sliding-window layout (one global and two local
// groups, window 20) whose trims mix into every other operation.
class KvManagerRandom : public ::testing::TestWithParam<KvConfig> {};

TEST_P(KvManagerRandom, InvariantsHoldUnderRandomOperations) {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng(seed);
    KvManager kv(GetParam());
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
    std::vector<KvOp> ops;
    for (int step = 0; step < 400; ++step) {
      RequestId id = pick(10);
      switch (pick(10)) {
        case 0:
        case 1: {
          int32_t tokens = pick(8 * 12);
          int32_t before_free = kv.usage().device.free;
          bool ok = kv.allocate(id, tokens);
          if (!ok) {
            EXPECT_EQ(kv.usage().device.free, before_free);
          } else if (kv.has(id)) {
            EXPECT_GE(kv.table(id).logical_blocks() * 8, tokens);
            EXPECT_EQ(kv.table(id).entries(), kv.table(id).logical_blocks() * kv.config().groups);
          }
          break;
        }
        // Random operations may fail; a failure must change nothing, which the
        // invariant check below covers, so the results themselves are not needed.
        case 2: (void)kv.reserve(id, pick(10)); break;
        case 3: kv.free(id); break;
        case 4: (void)kv.swap_out(id, ops); break;
        case 5: (void)kv.swap_in(id, ops); break;
        case 6: kv.truncate(id, pick(8 * 8)); break;
        case 7:  // drop a leading block on either tier, as the conversation cache does
          (void)kv.release_block(id, pick(3), pick(2) == 0 ? KvTier::Device : KvTier::Host);
          break;
        case 8: {
          RequestId dst = pick(10);
          if (dst != id && !kv.has(dst)) (void)kv.share_prefix(id, dst, pick(4 * 8), ops);
          break;
        }
        case 9: kv.trim(id, pick(8 * 12)); break;
      }
      ASSERT_NO_THROW(kv.check_invariants()) << "seed " << seed << " step " << step;
      ASSERT_GE(kv.usage().available(), 0);
    }
    for (RequestId id = 0; id < 10; ++id) kv.free(id);
    kv.check_invariants();
    EXPECT_EQ(kv.usage().device.free, 32);
    EXPECT_EQ(kv.usage().host.free, 24);
    EXPECT_EQ(kv.usage().reserved_unused, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, KvManagerRandom,
                         ::testing::Values(KvConfig{8, 32, 24, 4096}, KvConfig{8, 32, 24, 4096, 3, 2, 20}));

}  // namespace
}  // namespace seer
