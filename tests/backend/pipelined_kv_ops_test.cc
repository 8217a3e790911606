// Layer-pipelined KV ops (CpuBackend::forward_after): the copies of layer l+1 run
// while layer l computes, and the logits and both tiers' bytes are exactly those of
// running the ops first.
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "backend/cpu_backend.h"
#include "common/error.h"
#include "test_model.h"

namespace seer {
namespace {

using testing::TestModel;
using testing::TestModelSpec;

std::vector<int32_t> tokens(int n, int vocab, int salt) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) t[static_cast<size_t>(i)] = (i * 7 + salt * 13 + 1) % vocab;
  return t;
}

ForwardBatch batch(const std::vector<int32_t>& toks, std::vector<int32_t> table, int32_t begin, int32_t end) {
  ForwardBatch b;
  b.sequences.push_back({std::move(table)});
  for (int32_t p = begin; p < end; ++p) b.add(0, toks[static_cast<size_t>(p)], p, true);
  return b;
}

struct Outcome {
  std::vector<float> logits;
  std::unique_ptr<CpuBackend> be;
};

// Turn 1 of a conversation in blocks 0..3; blocks 1 and 2 go to the host and are
// overwritten by another sequence; then one plan brings them back (into 5 and 6),
// copies block 3 to 7, swaps the just-restored block 6 out again to host block 3
// (after the swap-in, in plan order) and continues the conversation on 0, 5, 6, 7.
Outcome run(const TestModel& model, bool pipelined) {
  CpuBackendOptions o;
  o.kv.block_size = 16;
  o.kv.device_blocks = 16;
  o.kv.host_blocks = 4;
  o.threads = 2;
  o.pipeline_kv_ops = pipelined;
  Outcome r;
  r.be = std::make_unique<CpuBackend>(model.config(), model.weights(), o);
  const int v = model.config().vocab_size;
  const std::vector<int32_t> conv = tokens(64 + 12, v, 3), other = tokens(32, v, 4);
  std::vector<float> scratch;
  r.be->forward(batch(conv, {0, 1, 2, 3}, 0, 64), scratch);
  r.be->swap_out(1, 0);
  r.be->swap_out(2, 1);
  r.be->forward(batch(other, {1, 2}, 0, 32), scratch);
  const std::vector<KvOp> ops = {{KvOpKind::SwapIn, 0, 5},
                                 {KvOpKind::SwapIn, 1, 6},
                                 {KvOpKind::Copy, 3, 7},
                                 {KvOpKind::SwapOut, 6, 3}};
  r.be->forward_after(ops, batch(conv, {0, 5, 6, 7, 8}, 64, 64 + 12), r.logits);
  return r;
}

TEST(PipelinedKvOps, SameLogitsAndTiersAsRunningTheOpsFirst) {
  TestModelSpec spec;
  spec.n_layers = 6;
  spec.vocab = 101;
  TestModel model(spec);
  Outcome serial = run(model, false), piped = run(model, true);
  ASSERT_EQ(serial.logits.size(), static_cast<size_t>(12 * spec.vocab));
  EXPECT_EQ(piped.logits, serial.logits);  // bit for bit: the same K/V at every layer

  // Host block 3 got block 6 after its swap-in (plan order kept per layer): bring it
  // back to block 9 and compare with block 6, every layer and head.
  for (Outcome* r : {&serial, &piped}) {
    r->be->swap_in(3, 9);
    const PagedKvStorage& kv = r->be->kv_storage();
    for (int l = 0; l < spec.n_layers; ++l)
      for (int h = 0; h < spec.n_kv_heads; ++h) {
        EXPECT_EQ(std::memcmp(kv.k_block(9, l, h), kv.k_block(6, l, h), kv.head_bytes()), 0) << l << "," << h;
        EXPECT_EQ(std::memcmp(kv.v_block(9, l, h), kv.v_block(6, l, h), kv.head_bytes()), 0) << l << "," << h;
      }
  }
  EXPECT_EQ(std::memcmp(piped.be->kv_storage().k_block(5, 0, 0), serial.be->kv_storage().k_block(5, 0, 0),
                        piped.be->kv_storage().head_bytes()),
            0);
}

TEST(PipelinedKvOps, ABadOpIsRefusedBeforeAnythingRuns) {
  TestModelSpec spec;
  TestModel model(spec);
  CpuBackendOptions o;
  o.kv.block_size = 16;
  o.kv.device_blocks = 8;
  o.kv.host_blocks = 2;
  o.threads = 1;
  CpuBackend be(model.config(), model.weights(), o);
  std::vector<float> logits;
  const std::vector<int32_t> t = tokens(16, spec.vocab, 1);
  be.forward(batch(t, {0}, 0, 16), logits);
  const std::vector<float> before = logits;
  const std::vector<KvOp> ops = {{KvOpKind::SwapOut, 0, 1}, {KvOpKind::SwapIn, 5, 1}};
  EXPECT_THROW(be.forward_after(ops, batch(t, {1}, 0, 16), logits), Error);
  // Nothing ran and the backend still works (no copier left waiting).
  be.forward_after({}, batch(t, {0}, 0, 16), logits);
  EXPECT_EQ(logits, before);
}

}  // namespace
}  // namespace seer
