// Reused conversation KV never changes the output (docs/pensieve.md): a turn
// computed over a dropped-and-recomputed range, a range swapped back from the host
// tier, a device-resident range and the new message gives the same greedy tokens
// and logprobs as a stateless server that recomputes the whole history; at the
// backend level, the full logits of such a pass match the whole history's. Prefix
// reuse for stateless clients, with an anonymous entry's blocks shared by concurrent
// requests (and its partial last block copied), gives the same outputs as well.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include "backend/cpu_backend.h"
#include "backend/served_backend.h"
#include "backend/test_model.h"
#include "runtime/model_executor.h"

namespace seer {
namespace {

using testing::TestModel;
using testing::TestModelSpec;

using testing::expect_same_output;
using testing::ServedBackend;
using Output = testing::ServedOutput;

// The test model served with `policy`; one block per eviction chunk (fine-grained).
struct Server : ServedBackend {
  Server(const TestModel& m, const std::string& policy, int host_blocks, bool prefix_reuse = false)
      : ServedBackend(backend_for(m, host_blocks), policy, cache_config(policy, prefix_reuse)) {}

  static std::unique_ptr<Backend> backend_for(const TestModel& m, int host_blocks) {
    CpuBackendOptions o;
    o.kv.device_blocks = 64;
    o.kv.host_blocks = host_blocks;
    o.threads = 1;
    return make_cpu_backend(m.config(), m.weights(), o);
  }
  static ConversationCacheConfig cache_config(const std::string& policy, bool prefix_reuse) {
    ConversationCacheConfig cc;
    cc.keep_kv = policy_info(policy).caches_conversations || prefix_reuse;
    cc.prefix_reuse = prefix_reuse;
    cc.chunk_tokens = CpuBackendOptions{}.kv.block_size;
    return cc;
  }
};

std::vector<int32_t> tokens(int n, int vocab, int seed) {
  std::vector<int32_t> t;
  for (int i = 0; i < n; ++i) t.push_back((i * 7 + seed * 13) % vocab);
  return t;
}

void expect_same(const Output& a, const Output& b) { expect_same_output(a, b, 1e-3); }

class ConversationReuse : public ::testing::TestWithParam<int> {};  // blocks evicted between turns

TEST_P(ConversationReuse, SameOutputAsRecomputingTheHistory) {
  TestModelSpec spec;
  spec.vocab = 200;
  TestModel model(spec);
  const int evicted = GetParam();
  Server stateful(model, "pensieve", /*host_blocks=*/1);
  Server stateless(model, "vllm", 0);

  auto first = tokens(37, 200, 1), second = tokens(9, 200, 2);
  Output t1 = stateful.run(first, "c", 12);
  expect_same(t1, stateless.run(first, "", 12));
  // History: 37 + 12 tokens = 4 blocks of 16. Evicting 1 block moves block 0 to the
  // host; 2 blocks drop block 0 (the host holds one block) and move block 1 there.
  stateful.evict(evicted);

  std::vector<int32_t> history = first;
  history.insert(history.end(), t1.tokens.begin(), t1.tokens.end());
  std::vector<int32_t> whole = history;
  whole.insert(whole.end(), second.begin(), second.end());
  Output t2 = stateful.run(second, "c", 10);
  expect_same(t2, stateless.run(whole, "", 10));

  const CacheCounters& c = stateful.cache->counters();
  EXPECT_GT(c.hit_tokens_device, 0);
  if (evicted >= 1) {
    EXPECT_EQ(c.hit_tokens_host, 16);
  }
  // The second turn's history is 49 tokens: K/V exist for 48 of them (the last
  // sampled token was never fed back); evicting 2 blocks drops the leading 16.
  EXPECT_EQ(c.history_tokens, 49);
  EXPECT_EQ(c.hit_tokens_device + c.hit_tokens_host, evicted >= 2 ? 32 : 48);
  EXPECT_EQ(c.recomputed_tokens, c.history_tokens - c.hit_tokens_device - c.hit_tokens_host);
  EXPECT_EQ(stateful.kv->usage().request_tables, 0u);
  EXPECT_EQ(stateful.cache->num_conversations(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Evicted, ConversationReuse, ::testing::Values(0, 1, 2));

TEST(PrefixReuse, StatelessClientReusesACachedHistoryWithSameOutput) {
  TestModelSpec spec;
  spec.vocab = 200;
  TestModel model(spec);
  Server reuse(model, "vllm", 0, /*prefix_reuse=*/true);  // vllm keeps no KV by itself
  Server plain(model, "vllm", 0);

  auto first = tokens(40, 200, 3);
  Output t1 = reuse.run(first, "", 8);
  std::vector<int32_t> whole = first;
  whole.insert(whole.end(), t1.tokens.begin(), t1.tokens.end());
  auto more = tokens(5, 200, 4);
  whole.insert(whole.end(), more.begin(), more.end());
  expect_same(reuse.run(whole, "", 6), plain.run(whole, "", 6));
  EXPECT_GE(reuse.cache->counters().hit_tokens_device, 32);  // the full blocks of the history
}

std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Block-level sharing: requests that start with a cached anonymous prefix (a system
// prompt) reference its device blocks; the prefix's partial last block is copied
// before each writes its question there. The device holds the prefix once.
TEST(PrefixReuse, ConcurrentRequestsShareTheCachedPrefixWithSameOutput) {
  TestModelSpec spec;
  spec.vocab = 200;
  TestModel model(spec);
  Server shared(model, "vllm", 0, /*prefix_reuse=*/true);
  Server plain(model, "vllm", 0);
  const int32_t b = shared.backend->block_size();
  const auto system = tokens(4 * b + 6, 200, 1);  // 4 full blocks and a partial fifth
  shared.run(concat(system, tokens(5, 200, 2)), "", 4);
  const int32_t cached = shared.kv->usage().device.used();

  constexpr int kRequests = 4;
  std::vector<std::vector<int32_t>> prompts;
  std::map<RequestId, size_t> index;
  for (int i = 0; i < kRequests; ++i) {
    prompts.push_back(concat(system, tokens(9, 200, 10 + i)));
    index[shared.add(prompts.back(), "", 6)] = static_cast<size_t>(i);
  }
  shared.engine->step();  // admits all four: each shares the prefix
  // Each sharer holds the 4 shared blocks and its own: the copied partial block and
  // what its question and answer need.
  const int32_t own_per_request = shared.kv->config().blocks_for(4 * b + 6 + 9 + 6) - 4;
  EXPECT_LE(shared.kv->usage().device.used(), cached + kRequests * own_per_request);
  const int32_t unshared = kRequests * shared.kv->config().blocks_for(4 * b + 6 + 9 + 6);
  EXPECT_LT(shared.kv->usage().device.used() - cached, unshared - (kRequests - 1) * 4);
  shared.drain();

  for (const auto& [id, i] : index) {
    SCOPED_TRACE(i);
    expect_same(shared.recorder.outputs.at(id), plain.run(prompts[i], "", 6));
  }
  EXPECT_EQ(shared.cache->counters().hit_tokens_device, kRequests * (4 * b + 6));
  EXPECT_EQ(shared.kv->usage().request_tables, 0u);
}

// The backend alone: turn 1 computed positions [0, 64) in blocks t0..t3. Before
// turn 2, t0 is dropped (another sequence overwrites it; the turn gets block 8,
// which holds stale K/V), t1 goes to the host and comes back into block 9, t2 and
// t3 stay resident. One pass recomputes [0, 16) and computes the new message
// [64, 73): every logit equals a single pass over the whole history.
TEST(ConversationReuseBackend, CachedRecomputedAndNewRangesGiveTheWholeHistorysLogits) {
  TestModelSpec spec;
  spec.vocab = 200;
  TestModel model(spec);
  CpuBackendOptions o;
  o.kv.block_size = 16;
  o.kv.device_blocks = 32;
  o.kv.host_blocks = 4;
  o.threads = 1;
  const int v = spec.vocab;
  const int32_t history = 64, total = history + 9, dropped = 16;
  const std::vector<int32_t> seq = tokens(total, v, 5), other = tokens(3 * 16, v, 6);

  auto pass = [&](Backend& be, const std::vector<int32_t>& toks, std::vector<int32_t> table,
                  const std::vector<std::pair<int32_t, int32_t>>& ranges) {
    ForwardBatch b;
    b.sequences.push_back({std::move(table)});
    for (auto [begin, end] : ranges)
      for (int32_t p = begin; p < end; ++p) b.add(0, toks[p], p, true);
    std::vector<float> logits;
    be.forward(b, logits);
    return logits;
  };

  auto whole_be = make_cpu_backend(model.config(), model.weights(), o);
  const std::vector<float> whole = pass(*whole_be, seq, {0, 1, 2, 3, 4}, {{0, total}});

  auto be = make_cpu_backend(model.config(), model.weights(), o);
  pass(*be, seq, {0, 1, 2, 3}, {{0, history}});  // turn 1
  be->swap_out(1, 0);                             // t1 to the host
  pass(*be, other, {0, 1, 8}, {{0, 3 * 16}});     // another sequence overwrites t0, t1 and block 8
  be->swap_in(0, 9);                              // t1 back, into block 9
  const std::vector<int32_t> table{8, 9, 2, 3, 10};
  const std::vector<float> got = pass(*be, seq, table, {{history, total}, {0, dropped}});

  ASSERT_EQ(got.size(), static_cast<size_t>((total - history + dropped) * v));
  std::vector<int32_t> order;  // the positions of got's rows
  for (int32_t q = history; q < total; ++q) order.push_back(q);
  for (int32_t q = 0; q < dropped; ++q) order.push_back(q);
  for (size_t row = 0; row < order.size(); ++row) {
    const size_t p = static_cast<size_t>(order[row]);
    double scale = 1, diff = 0;
    for (int i = 0; i < v; ++i) scale = std::max(scale, 1 + std::fabs(double(whole[p * v + i])));
    for (int i = 0; i < v; ++i)
      diff = std::max(diff, std::fabs(double(got[row * v + i]) - whole[p * v + i]));
    EXPECT_LE(diff, 2e-4 * scale) << "position " << p;
  }
}

}  // namespace
}  // namespace seer
