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
    const int32_t end = c.start + c.num_tokens;
    for (int32_t p = c.start; p < end; ++p) {
      // The last sequence token and every draft: the verification's positions.
      const bool sampled = c.sample && p >= end - 1 - c.num_draft;
      if (sampled && sample_rows) sample_rows->push_back(static_cast<int32_t>(b.logit_rows.size()));
      b.add(seq, r.token_at(p), p, sampled);
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
      // Each position is sampled exactly as a step without drafts would sample it
      // (same history, same draw from the request's stream), so the output does not
      // depend on the drafts; they only save the steps whose logits they provided.
      Sampler& sampler = sampler_for(c.request, state_.get(c.request));
      const size_t rows = next + 1 + static_cast<size_t>(c.num_draft);
      for (int32_t j = 0;; ++j) {
        const ExecutorRequest& r = state_.get(c.request);
        const int32_t draft = j < c.num_draft ? r.draft[static_cast<size_t>(j)] : -1;
        const auto row = static_cast<size_t>(sample_rows_[next++]);
        std::span<const float> logits(logits_.data() + row * vocab, vocab);
        SampleResult s = sampler.sample(logits, r.prompt, r.output);
        result.sampled.push_back({c.request, s.token, s.logprob});
        state_.append_sampled(c.request, s.token);
        if (s.token != draft) break;  // a mismatch, or the token after the last draft
      }
      next = rows;
    }
  }
  result.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace seer
