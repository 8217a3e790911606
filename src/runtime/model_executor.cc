#include "runtime/model_executor.h"

#include <chrono>
#include <span>
#include <unordered_set>

#include "common/error.h"
#include "kv/kv_manager.h"

namespace seer {

ForwardBatch build_forward_batch(const StepPlan& plan, const RequestTable& requests, const KvManager& kv,
                                 std::vector<int32_t>* sample_rows) {
  ForwardBatch b;
  b.tokens.reserve(plan.num_tokens());
  b.positions.reserve(plan.num_tokens());
  b.seq_index.reserve(plan.num_tokens());
  std::unordered_map<RequestId, int32_t> seq_of;
  if (sample_rows) sample_rows->clear();
  for (const ScheduledChunk& c : plan.chunks) {
    const Request& r = requests.get(c.request);
    if (c.num_tokens <= 0 || c.start < 0 || c.start + c.num_tokens > r.num_tokens())
      fail("plan: chunk [{}, {}) of request {} is outside its {} tokens", c.start, c.start + c.num_tokens, c.request,
           r.num_tokens());
    if (c.sample && c.start + c.num_tokens != r.num_tokens())
      fail("plan: request {} samples after token {} but has {} tokens", c.request, c.start + c.num_tokens,
           r.num_tokens());
    auto [it, inserted] = seq_of.emplace(c.request, static_cast<int32_t>(b.sequences.size()));
    if (inserted) b.sequences.push_back(ForwardSequence{kv.block_table(c.request)});
    const int32_t seq = it->second;
    for (int32_t p = c.start; p < c.start + c.num_tokens; ++p) {
      const bool last = p == c.start + c.num_tokens - 1;
      if (last && c.sample && sample_rows) sample_rows->push_back(static_cast<int32_t>(b.logit_rows.size()));
      b.add(seq, r.token_at(p), p, last && c.sample);
    }
  }
  return b;
}

ModelExecutor::ModelExecutor(Backend& backend, uint64_t seed) : backend_(backend), seeds_(seed) {}

Sampler& ModelExecutor::sampler_for(const Request& r) {
  auto it = samplers_.find(r.id);
  if (it == samplers_.end()) it = samplers_.emplace(r.id, Sampler(r.sampling, seeds_.next())).first;
  return it->second;
}

void ModelExecutor::forget_finished(const RequestTable& requests) {
  if (samplers_.empty()) return;
  std::unordered_set<RequestId> live;
  live.reserve(requests.size());
  for (const auto& [id, r] : requests) live.insert(id);
  std::erase_if(samplers_, [&](const auto& kv) { return !live.count(kv.first); });
}

StepResult ModelExecutor::execute(const StepPlan& plan, const RequestTable& requests, const KvManager& kv) {
  const auto t0 = std::chrono::steady_clock::now();
  forget_finished(requests);
  StepResult result;
  if (plan.chunks.empty()) {
    for (const KvOp& op : plan.kv_ops) backend_.run(op);
  } else {
    ForwardBatch batch = build_forward_batch(plan, requests, kv, &sample_rows_);
    backend_.forward_after(plan.kv_ops, batch, logits_);
    const size_t vocab = static_cast<size_t>(backend_.vocab_size());
    size_t next = 0;
    for (const ScheduledChunk& c : plan.chunks) {
      if (!c.sample) continue;
      const Request& r = requests.get(c.request);
      const int32_t row = sample_rows_[next++];
      std::span<const float> logits(logits_.data() + row * vocab, vocab);
      SampleResult s = sampler_for(r).sample(logits, r.prompt_tokens, r.output_tokens);
      result.sampled.push_back({c.request, s.token, s.logprob});
    }
  }
  result.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace seer
