#include "runtime/model_executor.h"

#include <chrono>
#include <span>

namespace seer {

ForwardBatch build_forward_batch(const StepPlan& plan, const ExecutorState& state, std::vector<int32_t>* sample_rows) {
  ForwardBatch b;
  b.tokens.reserve(plan.num_tokens());
  b.positions.reserve(plan.num_tokens());
  b.seq_index.reserve(plan.num_tokens());
  std::unordered_map<RequestId, int32_t> seq_of;
  if (sample_rows) sample_rows->clear();
  for (const ScheduledChunk& c : plan.chunks) {
    const ExecutorRequest& r = state.get(c.request);
    auto [it, inserted] = seq_of.emplace(c.request, static_cast<int32_t>(b.sequences.size()));
    if (inserted) b.sequences.push_back(ForwardSequence{r.block_table});
    const int32_t seq = it->second;
    for (int32_t p = c.start; p < c.start + c.num_tokens; ++p) {
      const bool last = p == c.start + c.num_tokens - 1;
      if (last && c.sample && sample_rows) sample_rows->push_back(static_cast<int32_t>(b.logit_rows.size()));
      b.add(seq, r.token_at(p), p, last && c.sample);
    }
  }
  return b;
}

ModelExecutor::ModelExecutor(Backend& backend, uint64_t seed)
    : backend_(backend), seeds_(seed), state_(backend.block_size()) {}

Sampler& ModelExecutor::sampler_for(RequestId id, const ExecutorRequest& r) {
  auto it = samplers_.find(id);
  if (it == samplers_.end()) it = samplers_.emplace(id, Sampler(r.sampling, seeds_.next())).first;
  return it->second;
}

StepResult ModelExecutor::execute(const StepPlan& plan) {
  const auto t0 = std::chrono::steady_clock::now();
  state_.apply(plan);
  for (RequestId id : plan.finished) samplers_.erase(id);
  StepResult result;
  if (plan.chunks.empty()) {
    for (const KvOp& op : plan.kv_ops) backend_.run(op);
  } else {
    ForwardBatch batch = build_forward_batch(plan, state_, &sample_rows_);
    backend_.forward_after(plan.kv_ops, batch, logits_);
    const size_t vocab = static_cast<size_t>(backend_.vocab_size());
    size_t next = 0;
    for (const ScheduledChunk& c : plan.chunks) {
      if (!c.sample) continue;
      const ExecutorRequest& r = state_.get(c.request);
      const int32_t row = sample_rows_[next++];
      std::span<const float> logits(logits_.data() + row * vocab, vocab);
      SampleResult s = sampler_for(c.request, r).sample(logits, r.prompt, r.output);
      result.sampled.push_back({c.request, s.token, s.logprob});
    }
    for (const SampledToken& s : result.sampled) state_.append_sampled(s.request, s.token);
  }
  result.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace seer
