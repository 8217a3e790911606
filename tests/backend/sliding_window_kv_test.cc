// Sliding-window K/V freed behind the window (docs/models.md, "K/V of sliding-window
// layers"): a Gemma 3 layout (five local layers with a window of 8 to one global)
// served with its local layers in block groups of their own, trimmed as the windows
// move, gives the same greedy tokens and logprobs as keeping every position of every
// layer (--swa-kv full), through chunked prefill, the conversation cache (with its
// leading blocks dropped and recomputed) and prefix sharing, while holding less K/V.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "backend/cpu_backend.h"
#include "backend/served_backend.h"
#include "model/model_file.h"
#include "model/random_model.h"
#include "support/test_paths.h"

namespace seer {
namespace {

const ModelFile& gemma3() {
  static const std::unique_ptr<ModelFile> model = [] {
    RandomModelOptions opt;
    opt.arch = "gemma3";
    opt.shape = *named_model_shape("tiny");
    opt.shape.n_layers = 6;
    opt.sliding_window = 8;
    opt.progress = false;
    opt.seed = 11;
    const std::string path = testing::scratch_dir() + "/gemma3-window8.gguf";
    write_random_model(path, opt);
    return ModelFile::open(path);
  }();
  return *model;
}

using testing::ServedBackend;
using Output = testing::ServedOutput;

// The model served with its local layers in groups of their own (split) or not; the
// conversation cache keeps every finished sequence, one logical block per chunk.
struct Server : ServedBackend {
  Server(bool split, const std::string& policy, int32_t token_budget = 0, int32_t host_blocks = 24)
      : ServedBackend(backend_for(split, host_blocks), policy, cache_config(), token_budget) {}

  static std::unique_ptr<Backend> backend_for(bool split, int32_t host_blocks) {
    const ModelConfig& mc = gemma3().config();
    std::vector<bool> local;
    for (int l = 0; l < mc.n_layers; ++l) local.push_back(mc.layer_is_local(l));
    CpuBackendOptions o;
    o.kv.block_size = 4;
    o.kv.layer_groups = kv_layer_groups(local, split);
    o.kv.device_blocks = 6 * 64;
    o.kv.host_blocks = host_blocks;
    o.threads = 1;
    return make_cpu_backend(gemma3(), o);
  }
  static ConversationCacheConfig cache_config() {
    ConversationCacheConfig cc;
    cc.keep_kv = true;
    cc.prefix_reuse = true;
    cc.chunk_tokens = 4;
    return cc;
  }
};

std::vector<int32_t> tokens(int n, int seed) {
  std::vector<int32_t> t;
  const int vocab = gemma3().config().vocab_size;
  for (int i = 0; i < n; ++i) t.push_back((i * 7 + seed * 13) % vocab);
  return t;
}

// Same batches in both layouts: the same arithmetic, to rounding.
void expect_same(const Output& a, const Output& b, double tolerance = 1e-5) {
  testing::expect_same_output(a, b, tolerance);
}

TEST(SlidingWindowKv, LayoutGroupsTheLocalLayers) {
  Server s(true, "vllm");
  const KvConfig& kv = s.kv->config();
  EXPECT_EQ(kv.groups, 6);  // the global layer, then five local groups of one layer each
  EXPECT_EQ(kv.local_groups, 5);
  EXPECT_EQ(kv.window, 8);
  Server full(false, "vllm");
  EXPECT_EQ(full.kv->config().groups, 1);
  EXPECT_EQ(full.kv->config().bytes_per_block, 6 * kv.bytes_per_block);
}

// Policies: whole prompts (vllm) and chunked prefill in 12-token chunks (sarathi).
class SlidingWindowKvPolicy : public ::testing::TestWithParam<std::pair<const char*, int32_t>> {};

TEST_P(SlidingWindowKvPolicy, SameOutputAsKeepingEveryPositionWithLessKv) {
  const auto [policy, budget] = GetParam();
  Server windowed(true, policy, budget);
  Server full(false, policy, budget);
  const auto prompt = tokens(61, 1);
  expect_same(windowed.run(prompt, "", 40), full.run(prompt, "", 40));
  // 101 positions: every layer in full is 26 blocks of 6 layers; with the window the
  // global layer keeps 26 blocks and each local layer about 3 (plus a prompt's worth
  // while it is computed).
  EXPECT_LT(windowed.peak_kv_bytes, full.peak_kv_bytes * 3 / 4) << windowed.peak_kv_bytes << " vs " << full.peak_kv_bytes;
  EXPECT_EQ(windowed.kv->usage().request_tables, 0u);
}

INSTANTIATE_TEST_SUITE_P(Policies, SlidingWindowKvPolicy,
                         ::testing::Values(std::pair{"vllm", 0}, std::pair{"sarathi", 12}));

// Turn 2 continues turn 1's cached K/V: resident, or with its leading blocks dropped
// (no host tier) and recomputed, their trimmed local blocks back for it. Those blocks
// are behind the window, one pool block each in either layout: the same are dropped.
class SlidingWindowKvConversation : public ::testing::TestWithParam<int> {};

TEST_P(SlidingWindowKvConversation, SameOutputAsKeepingEveryPosition) {
  const int evicted = GetParam();
  Server windowed(true, "pensieve", 0, 0);
  Server full(false, "pensieve", 0, 0);
  const auto first = tokens(29, 2), second = tokens(7, 3);
  expect_same(windowed.run(first, "c", 12), full.run(first, "c", 12));
  windowed.evict(evicted);
  full.evict(evicted);
  expect_same(windowed.run(second, "c", 10), full.run(second, "c", 10));
  EXPECT_GT(windowed.cache->counters().hit_tokens_device, 0);
  EXPECT_EQ(windowed.cache->counters().recomputed_tokens, full.cache->counters().recomputed_tokens);
  EXPECT_EQ(windowed.cache->counters().recomputed_tokens, 1 + 4 * evicted);  // and the last sampled token
}

INSTANTIATE_TEST_SUITE_P(Evicted, SlidingWindowKvConversation, ::testing::Values(0, 2, 5));

// A stateless client's shorter prefix of a cached sequence whose windows were trimmed
// cannot continue from it: it is recomputed, with the same output.
TEST(SlidingWindowKv, ATrimmedPrefixIsRecomputedNotMisread) {
  Server windowed(true, "vllm");
  Server full(false, "vllm");
  const auto long_prompt = tokens(45, 4);
  expect_same(windowed.run(long_prompt, "", 3), full.run(long_prompt, "", 3));
  const std::vector<int32_t> shorter(long_prompt.begin(), long_prompt.begin() + 20);
  // One pass over the whole prompt against a pass over its uncached rest: the
  // tolerance of tests/backend/conversation_reuse_test.cc.
  expect_same(windowed.run(shorter, "", 6), full.run(shorter, "", 6), 1e-3);
  EXPECT_EQ(windowed.cache->counters().hit_tokens_device, 0);
  EXPECT_GT(full.cache->counters().hit_tokens_device, 0);
}

}  // namespace
}  // namespace seer
