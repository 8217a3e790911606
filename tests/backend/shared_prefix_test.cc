// Block-level prefix sharing (docs/pensieve.md, "Prefix reuse"): requests that
// start with a cached anonymous prefix (a system prompt) reference its device
// blocks instead of copying them, and the prefix's partial last block is copied
// before anyone writes to it. Outputs equal a server that recomputes every
// prompt; the device holds the prefix once, not once per request.
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "backend/cpu_backend.h"
#include "backend/test_model.h"
#include "common/clock.h"
#include "engine/engine.h"
#include "kv/conversation_cache.h"
#include "runtime/model_executor.h"
#include "scheduler/scheduler.h"

namespace seer {
namespace {

using testing::TestModel;
using testing::TestModelSpec;

struct Output {
  std::vector<int32_t> tokens;
  std::vector<float> logprobs;
};

class Recorder : public EngineObserver {
 public:
  void on_finished(const Request& r) override { outputs[r.id] = {r.output_tokens, r.output_logprobs}; }
  std::map<RequestId, Output> outputs;
};

struct Server {
  Server(const TestModel& m, bool prefix_reuse) {
    CpuBackendOptions o;
    o.kv.device_blocks = 96;
    o.threads = 1;
    backend = make_cpu_backend(m.config(), m.weights(), o);
    kv = std::make_unique<KvManager>(KvConfig{backend->block_size(), backend->device_blocks(), 0,
                                              static_cast<int64_t>(backend->kv_bytes_per_token()) *
                                                  backend->block_size()});
    SchedulerConfig sc;
    sc.policy = "vllm";
    scheduler = make_scheduler(sc);
    ConversationCacheConfig cc;
    cc.keep_kv = prefix_reuse;
    cc.prefix_reuse = prefix_reuse;
    cache = std::make_unique<ConversationCache>(*kv, cc);
    executor = std::make_unique<ModelExecutor>(*backend, 7);
    EngineConfig ec;
    ec.cache = cache.get();
    ec.check_invariants = true;
    engine = std::make_unique<Engine>(*scheduler, *executor, *kv, clock, ec);
    engine->set_observer(&recorder);
  }

  RequestId add(std::vector<int32_t> prompt, int32_t max_tokens) {
    Request r;
    r.prompt_tokens = std::move(prompt);
    r.sampling.temperature = 0;
    r.sampling.logprobs = true;
    r.sampling.max_tokens = max_tokens;
    r.sampling.ignore_eos = true;
    return engine->add_request(std::move(r));
  }
  void drain() {
    while (engine->has_unfinished()) engine->step();
  }

  std::unique_ptr<Backend> backend;
  std::unique_ptr<KvManager> kv;
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<ConversationCache> cache;
  std::unique_ptr<ModelExecutor> executor;
  WallClock clock;
  Recorder recorder;
  std::unique_ptr<Engine> engine;
};

std::vector<int32_t> tokens(int n, int vocab, int seed) {
  std::vector<int32_t> t;
  for (int i = 0; i < n; ++i) t.push_back((i * 7 + seed * 13) % vocab);
  return t;
}

std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

void expect_same(const Output& a, const Output& b) {
  ASSERT_EQ(a.tokens, b.tokens);
  ASSERT_EQ(a.logprobs.size(), b.logprobs.size());
  for (size_t i = 0; i < a.logprobs.size(); ++i) EXPECT_NEAR(a.logprobs[i], b.logprobs[i], 1e-3) << i;
}

TEST(SharedPrefix, ConcurrentRequestsShareTheCachedPrefixAndMatchRecomputing) {
  TestModelSpec spec;
  spec.vocab = 200;
  TestModel model(spec);
  Server shared(model, true);
  Server plain(model, false);
  const int32_t b = shared.backend->block_size();
  // A system prompt of 4 full blocks and a partial fifth: the sharers reference the
  // full blocks and each copies the partial one before writing its question there.
  const auto system = tokens(4 * b + 6, 200, 1);
  shared.add(concat(system, tokens(5, 200, 2)), 4);
  shared.drain();
  const int32_t cached = shared.kv->num_used_blocks();

  constexpr int kRequests = 4;
  std::vector<std::vector<int32_t>> prompts;
  std::map<RequestId, size_t> index;
  for (int i = 0; i < kRequests; ++i) {
    prompts.push_back(concat(system, tokens(9, 200, 10 + i)));
    index[shared.add(prompts.back(), 6)] = static_cast<size_t>(i);
  }
  shared.engine->step();  // admits all four: each shares the prefix
  // Each sharer holds the 4 shared blocks plus its own: the copied partial block and
  // the block(s) its question and answer need (prompt 79 + 6 tokens: 6 blocks).
  const int32_t own_per_request = shared.kv->blocks_for_tokens(4 * b + 6 + 9 + 6) - 4;
  EXPECT_LE(shared.kv->num_used_blocks(), cached + kRequests * own_per_request);
  const int32_t unshared = kRequests * shared.kv->blocks_for_tokens(4 * b + 6 + 9 + 6);
  EXPECT_LT(shared.kv->num_used_blocks() - cached, unshared - (kRequests - 1) * 4);
  shared.drain();

  for (const auto& [id, i] : index) {
    const RequestId alone = plain.add(prompts[i], 6);
    plain.drain();
    SCOPED_TRACE(i);
    expect_same(shared.recorder.outputs.at(id), plain.recorder.outputs.at(alone));
  }
  const CacheCounters& c = shared.cache->counters();
  EXPECT_EQ(c.hit_tokens_device, kRequests * (4 * b + 6));
  EXPECT_EQ(shared.kv->num_requests(), 0u);
}

}  // namespace
}  // namespace seer
