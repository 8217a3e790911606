#include "runtime/model_draft_proposer.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "backend/cpu_backend.h"
#include "common/error.h"
#include "model/gguf_file.h"
#include "model/model_file.h"

namespace seer {

namespace {

// The token strings of a GGUF's vocabulary, or null without one.
const std::vector<GgufValue>* gguf_tokens(const ModelFile& m) {
  const GgufFile* f = m.gguf();
  if (!f) return nullptr;
  const GgufValue* v = f->find("tokenizer.ggml.tokens");
  return v ? &v->as_array("tokenizer.ggml.tokens") : nullptr;
}

std::string tokenizer_model(const ModelFile& m) {
  return m.gguf() ? m.gguf()->find_string("tokenizer.ggml.model").value_or("") : "";
}

int32_t argmax(std::span<const float> row) {
  return static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
}

}  // namespace

std::string vocabulary_mismatch(const ModelFile& target, const ModelFile& draft) {
  const int32_t tv = target.config().vocab_size, dv = draft.config().vocab_size;
  if (tv != dv) return fmt::format("vocabulary sizes differ (target {}, draft {})", tv, dv);
  const std::string tm = tokenizer_model(target), dm = tokenizer_model(draft);
  if (!tm.empty() && !dm.empty() && tm != dm)
    return fmt::format("tokenizer models differ (target '{}', draft '{}')", tm, dm);
  const auto* tt = gguf_tokens(target);
  const auto* dt = gguf_tokens(draft);
  if (!tt || !dt) return "";  // a llama2.c checkpoint carries no tokenizer: the sizes are all we can compare
  if (tt->size() != dt->size())
    return fmt::format("tokenizer vocabularies differ in size (target {}, draft {})", tt->size(), dt->size());
  for (size_t i = 0; i < tt->size(); ++i) {
    const std::string& a = (*tt)[i].as_string("tokenizer.ggml.tokens");
    const std::string& b = (*dt)[i].as_string("tokenizer.ggml.tokens");
    if (a != b) return fmt::format("token {} differs (target '{}', draft '{}')", i, a, b);
  }
  return "";
}

std::unique_ptr<ModelDraftProposer> ModelDraftProposer::open(const std::string& path, const ModelFile& target,
                                                             const ModelDraftOptions& options) {
  auto file = ModelFile::open(path);
  if (const std::string why = vocabulary_mismatch(target, *file); !why.empty())
    fail("--draft-model {}: cannot draft for {}: {}; a draft model must share the target's tokenizer", path,
         target.path(), why);
  auto p = std::make_unique<ModelDraftProposer>(*file, options);
  p->owned_ = std::move(file);
  return p;
}

ModelDraftProposer::ModelDraftProposer(const ModelFile& draft, const ModelDraftOptions& options)
    : path_(draft.path()), options_(options) {
  const ModelConfig& mc = draft.config();
  if (options_.max_tokens < 1 || options_.max_tokens > 64)
    fail("draft model: draft tokens must be in [1, 64] (got {})", options_.max_tokens);
  if (options_.slots < 1) fail("draft model: slots must be >= 1 (got {})", options_.slots);
  if (options_.prefill_chunk < 1) fail("draft model: prefill chunk must be >= 1 (got {})", options_.prefill_chunk);
  if (options_.slot_tokens <= 0 || options_.slot_tokens > mc.context_length) options_.slot_tokens = mc.context_length;
  CpuBackendOptions bo;
  bo.threads = options_.threads;
  bo.kv.type = options_.kv_type;
  const int32_t blocks_per_slot = (options_.slot_tokens + bo.kv.block_size - 1) / bo.kv.block_size;
  bo.kv.device_blocks = blocks_per_slot * options_.slots;
  backend_ = make_cpu_backend(draft, bo);
  slots_.resize(static_cast<size_t>(options_.slots));
}

ModelDraftProposer::~ModelDraftProposer() = default;

int32_t ModelDraftProposer::live_requests() const {
  return static_cast<int32_t>(std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.id >= 0; }));
}

size_t ModelDraftProposer::kv_bytes() const {
  return backend_->kv_bytes_per_token() * static_cast<size_t>(backend_->block_size()) *
         static_cast<size_t>(backend_->device_blocks());
}

double ModelDraftProposer::seconds_per_draft() const {
  return proposed_ > 0 ? seconds_ / static_cast<double>(proposed_) : 0.0;
}

void ModelDraftProposer::forget(RequestId id) {
  for (Slot& s : slots_)
    if (s.id == id) s = Slot{};
}

ModelDraftProposer::Slot& ModelDraftProposer::slot_for(RequestId id) {
  // A free slot first, else the least recently used.
  auto better_victim = [](const Slot& a, const Slot& b) {
    if ((a.id < 0) != (b.id < 0)) return a.id < 0;
    return a.last_used < b.last_used;
  };
  Slot* victim = &slots_.front();
  for (Slot& s : slots_) {
    if (s.id == id) return s;
    if (better_victim(s, *victim)) victim = &s;
  }
  *victim = Slot{};
  victim->id = id;
  return *victim;
}

int32_t ModelDraftProposer::feed(size_t slot, std::span<const int32_t> tokens) {
  Slot& s = slots_[slot];
  const int32_t blocks_per_slot = backend_->device_blocks() / options_.slots;
  ForwardSequence seq;
  for (int32_t b = 0; b < blocks_per_slot; ++b) seq.block_table.push_back(static_cast<int32_t>(slot) * blocks_per_slot + b);
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i0 = 0; i0 < tokens.size(); i0 += static_cast<size_t>(options_.prefill_chunk)) {
    const size_t i1 = std::min(tokens.size(), i0 + static_cast<size_t>(options_.prefill_chunk));
    ForwardBatch b;
    b.sequences.push_back(seq);
    for (size_t i = i0; i < i1; ++i) {
      b.add(0, tokens[i], static_cast<int32_t>(s.cached.size()), i + 1 == tokens.size());
      s.cached.push_back(tokens[i]);
    }
    backend_->forward(b, logits_);
    ++passes_;
  }
  fed_tokens_ += static_cast<int64_t>(tokens.size());
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return argmax(std::span<const float>(logits_.data(), static_cast<size_t>(backend_->vocab_size())));
}

std::vector<int32_t> ModelDraftProposer::propose(RequestId id, std::span<const int32_t> prompt,
                                                 std::span<const int32_t> output, int32_t limit) {
  const auto np = static_cast<int64_t>(prompt.size());
  const int64_t len = np + static_cast<int64_t>(output.size());
  // Positions len .. len + want - 2 are fed (the last draft is not): all in the slot.
  const int64_t want = std::min<int64_t>({limit, options_.max_tokens, options_.slot_tokens - len + 1});
  std::vector<int32_t> draft;
  if (want <= 0 || len == 0) return draft;
  Slot& s = slot_for(id);
  s.last_used = ++uses_;
  const auto slot = static_cast<size_t>(&s - slots_.data());
  auto at = [&](int64_t i) { return i < np ? prompt[static_cast<size_t>(i)] : output[static_cast<size_t>(i - np)]; };
  // Keep the longest common prefix (drop rejected drafts), but feed at least the last
  // token again: its logits are not kept between proposals.
  int64_t keep = 0;
  const int64_t have = std::min<int64_t>(static_cast<int64_t>(s.cached.size()), len - 1);
  while (keep < have && s.cached[static_cast<size_t>(keep)] == at(keep)) ++keep;
  s.cached.resize(static_cast<size_t>(keep));
  std::vector<int32_t> missing;
  missing.reserve(static_cast<size_t>(len - keep));
  for (int64_t i = keep; i < len; ++i) missing.push_back(at(i));
  draft.push_back(feed(slot, missing));
  while (static_cast<int64_t>(draft.size()) < want) {
    const int32_t last = draft.back();
    draft.push_back(feed(slot, std::span<const int32_t>(&last, 1)));
  }
  proposed_ += static_cast<int64_t>(draft.size());
  return draft;
}

}  // namespace seer
