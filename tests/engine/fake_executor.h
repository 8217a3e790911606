#pragma once
// A deterministic executor for engine tests that behaves like a real one where it
// matters: it knows requests only from the plans (its own ExecutorState, as the
// ModelExecutor), keeps a "K/V" record (token, position) in every slot of both tiers,
// performs the plan's KvOps in order, writes each chunk's tokens through the block
// table, and before sampling reads back every position of the sequence from the
// device tier, failing on any slot that does not hold that position's token. The
// sampled token is a hash of the sequence read back, so a request produces the same
// tokens whatever else is batched with it, and a preempted request reproduces them
// only if recompute or swap restored its K/V exactly. With layer groups
// (kv/kv_layer_groups.h) every group's block gets the record, and a sliding-window
// group is read back from the chunk's first window on, as attention reads it.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/executor.h"
#include "engine/executor_state.h"
#include "kv/kv_manager.h"

namespace seer::testing {

class FakeExecutor final : public Executor {
 public:
  FakeExecutor(const KvConfig& kv, int32_t vocab, bool simulated = false)
      : state_(kv),
        layout_(kv),
        block_size_(kv.block_size),
        device_(static_cast<size_t>(kv.device_blocks) * kv.block_size),
        host_(static_cast<size_t>(kv.host_blocks) * kv.block_size),
        vocab_(vocab),
        simulated_(simulated) {}

  bool simulated() const override { return simulated_; }

  StepResult execute(const StepPlan& plan) override {
    state_.apply(plan);
    for (const KvOp& op : plan.kv_ops) {
      auto& src = op.kind == KvOpKind::SwapIn ? host_ : device_;
      auto& dst = op.kind == KvOpKind::SwapOut ? host_ : device_;
      for (int32_t i = 0; i < block_size_; ++i)
        dst[static_cast<size_t>(op.dst) * block_size_ + i] = src[static_cast<size_t>(op.src) * block_size_ + i];
    }
    StepResult result;
    for (const ScheduledChunk& c : plan.chunks) {
      const ExecutorRequest& r = state_.get(c.request);
      const auto& table = r.block_table;
      for (int32_t p = c.start; p < c.start + c.num_tokens; ++p)
        for (int32_t g = 0; g < layout_.groups; ++g) slot(table, p, g, c.request) = Slot{r.token_at(p), p};
    }
    for (const ScheduledChunk& c : plan.chunks) {
      if (!c.sample) continue;
      const ExecutorRequest& r = state_.get(c.request);
      const auto& table = r.block_table;
      uint64_t h = 1469598103934665603ull;
      const int32_t window_start = c.start - layout_.window + 1;
      for (int32_t p = 0; p < c.start + c.num_tokens; ++p) {
        for (int32_t g = 0; g < layout_.groups; ++g) {
          if (layout_.local(g) && p < window_start) continue;  // behind every window of the chunk
          Slot s = slot(table, p, g, c.request);
          if (s.token != r.token_at(p) || s.pos != p)
            throw std::runtime_error("fake executor: request " + std::to_string(c.request) + " position " +
                                     std::to_string(p) + " group " + std::to_string(g) + " has stale K/V");
        }
        h = (h ^ static_cast<uint64_t>(r.token_at(p))) * 1099511628211ull;
      }
      result.sampled.push_back({c.request, static_cast<int32_t>(h % static_cast<uint64_t>(vocab_)), -1.0f});
    }
    for (const SampledToken& s : result.sampled) state_.append_sampled(s.request, s.token);
    result.elapsed_s = 0.001 + 1e-5 * plan.num_tokens() + 1e-4 * static_cast<double>(plan.kv_ops.size());
    ++iterations;
    return result;
  }

  const ExecutorState& state() const { return state_; }
  int64_t iterations = 0;

 private:
  struct Slot {
    int32_t token = -1;
    int32_t pos = -1;
  };
  Slot& slot(const std::vector<int32_t>& table, int32_t p, int32_t group, RequestId id) {
    const auto entry = static_cast<size_t>(p / block_size_) * static_cast<size_t>(layout_.groups) + group;
    if (entry >= table.size() || table[entry] < 0)
      throw std::runtime_error("fake executor: request " + std::to_string(id) + " position " + std::to_string(p) +
                               " group " + std::to_string(group) + " has no device block");
    return device_[static_cast<size_t>(table[entry]) * block_size_ + p % block_size_];
  }

  ExecutorState state_;
  KvConfig layout_;
  int32_t block_size_;
  std::vector<Slot> device_, host_;
  int32_t vocab_;
  bool simulated_;
};

}  // namespace seer::testing
