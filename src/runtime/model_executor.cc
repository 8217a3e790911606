#include "runtime/model_executor.h"

#include <algorithm>
#include <chrono>
#include <thread>
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

namespace {

int sampling_workers(int threads) {
  if (threads <= 0) threads = std::min(8, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  return threads - 1;
}

}  // namespace

ModelExecutor::ModelExecutor(Backend& backend, uint64_t seed, HostWork host)
    : backend_(backend),
      seeds_(seed),
      state_(backend.kv_config()),
      masks_(host.masks),
      host_(sampling_workers(host.sampling_threads)) {}

Sampler& ModelExecutor::sampler_for(RequestId id, const ExecutorRequest& r) {
  auto it = samplers_.find(id);
  if (it == samplers_.end()) it = samplers_.emplace(id, Sampler(r.sampling, seeds_.next())).first;
  return it->second;
}

void ModelExecutor::collect_sample_jobs(const StepPlan& plan) {
  jobs_.clear();
  size_t row = 0;
  for (const ScheduledChunk& c : plan.chunks) {
    if (!c.sample) continue;
    jobs_.push_back({&c, &sampler_for(c.request, state_.get(c.request)), static_cast<size_t>(sample_rows_[row]), {}, {}});
    row += 1 + static_cast<size_t>(c.num_draft);
  }
}

bool ModelExecutor::start_masks() {
  constrained_.clear();
  if (masks_ != GrammarMasks::WithForwardPass) return false;
  for (size_t i = 0; i < jobs_.size(); ++i)
    if (jobs_[i].sampler->constrained()) constrained_.push_back(i);
  if (constrained_.empty()) return false;
  // The first sampled position only: the ones after a draft depend on the draft. One
  // worker: the forward pass has the other cores.
  host_.start(
      constrained_.size(),
      [this](size_t i) {
        SampleJob& j = jobs_[constrained_[i]];
        j.sampler->prepare(state_.get(j.chunk->request).output);
      },
      1);
  return true;
}

// Each position is sampled exactly as a step without drafts would sample it (same
// history, same draw from the request's stream), so the output does not depend on the
// drafts; they only save the steps whose logits they provided.
void ModelExecutor::sample(SampleJob& job) {
  const ExecutorRequest& r = state_.get(job.chunk->request);
  const size_t vocab = static_cast<size_t>(backend_.vocab_size());
  const int32_t drafts = job.chunk->num_draft;
  job.tokens.clear();
  if (drafts > 0) job.output.assign(r.output.begin(), r.output.end());
  for (int32_t j = 0;; ++j) {
    // Draft rows follow the chunk's first sampled row (build_forward_batch).
    std::span<const float> logits(logits_.data() + (job.first_row + static_cast<size_t>(j)) * vocab, vocab);
    const SampleResult s = job.sampler->sample(logits, r.prompt, drafts > 0 ? std::span<const int32_t>(job.output) : std::span<const int32_t>(r.output));
    job.tokens.push_back(s);
    if (j >= drafts || s.token != r.draft[static_cast<size_t>(j)]) break;  // a mismatch, or the token after the last draft
    job.output.push_back(s.token);
  }
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
    collect_sample_jobs(plan);
    const bool masking = start_masks();
    try {
      backend_.forward_after(plan.kv_ops, batch, logits_);
    } catch (...) {
      if (masking) host_.wait();  // the masks read state_ and the samplers
      throw;
    }
    if (masking) host_.wait();
    host_.run(jobs_.size(), [this](size_t i) { sample(jobs_[i]); });
    for (const SampleJob& j : jobs_)
      for (const SampleResult& s : j.tokens) {
        result.sampled.push_back({j.chunk->request, s.token, s.logprob, s.top});
        state_.append_sampled(j.chunk->request, s.token);
      }
  }
  result.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace seer
