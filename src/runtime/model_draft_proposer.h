#pragma once
// Speculative decoding with a draft model (`--draft-model F`, docs/speculative.md): a
// second, smaller model with the target's vocabulary proposes each request's drafts
// by greedy decoding on its own K/V. The target verifies them in its batched forward
// pass as it does every proposer's (ScheduledChunk::num_draft), so a wrong draft
// costs compute, never a different output.
//
// The draft K/V is a fixed pool of `slots` contiguous per-request caches of
// `slot_tokens` positions each (memory: slots x slot_tokens x the draft model's K/V
// bytes per token, allocated once). A request takes a slot at its first proposal
// (the least recently used one when all are taken: that request starts again at its
// next proposal) and gives it back when the engine forgets it (finish, abort,
// preemption). Each proposal feeds the draft model only the tokens its cache lacks:
// the longest common prefix of what the cache holds and the request's sequence is
// kept, so rejected drafts are truncated and accepted ones are not fed twice.
// Runs on the engine thread, between steps; it owns its own backend and threads.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "engine/draft_proposer.h"

namespace seer {

class ModelFile;

struct ModelDraftOptions {
  int32_t max_tokens = 4;     // drafts per proposal at most (--draft-tokens)
  int32_t slots = 16;         // requests with draft K/V at once
  int32_t slot_tokens = 0;    // positions per request; 0: the draft model's context
  int threads = 0;            // the draft backend's threads (0: all cores)
  KvType kv_type = kDefaultKvType;
  int32_t prefill_chunk = 256;  // catch-up tokens per draft forward pass
};

// "" when a draft model may draft for the target (same vocabulary size, and the same
// tokenizer model and token strings when both files carry one), else why not.
[[nodiscard]] std::string vocabulary_mismatch(const ModelFile& target, const ModelFile& draft);

class ModelDraftProposer final : public DraftProposer {
 public:
  // Opens the draft model at `path`; throws seer::Error when it cannot be read, its
  // vocabulary differs from `target`'s, or the options are out of range.
  static std::unique_ptr<ModelDraftProposer> open(const std::string& path, const ModelFile& target,
                                                  const ModelDraftOptions& options);
  // Over an opened draft model (not owned: it must outlive the proposer).
  ModelDraftProposer(const ModelFile& draft, const ModelDraftOptions& options);
  ~ModelDraftProposer() override;
  ModelDraftProposer(const ModelDraftProposer&) = delete;
  ModelDraftProposer& operator=(const ModelDraftProposer&) = delete;

  std::string name() const override { return "model"; }
  std::vector<int32_t> propose(RequestId id, std::span<const int32_t> prompt, std::span<const int32_t> output,
                               int32_t limit) override;
  void forget(RequestId id) override;
  int32_t max_tokens() const override { return options_.max_tokens; }
  // Draft forward time (catch-up included) per token proposed, since construction.
  double seconds_per_draft() const override;

  // Requests holding a slot now.
  int32_t live_requests() const;
  int32_t slots() const { return static_cast<int32_t>(slots_.size()); }
  int32_t slot_tokens() const { return options_.slot_tokens; }
  size_t kv_bytes() const;  // the whole draft K/V pool
  // Draft forward passes run and their wall time, since construction.
  int64_t forward_passes() const { return passes_; }
  int64_t fed_tokens() const { return fed_tokens_; }
  double forward_seconds() const { return seconds_; }
  const std::string& model_path() const { return path_; }

 private:
  struct Slot {
    RequestId id = -1;             // -1: free
    std::vector<int32_t> cached;   // the tokens whose K/V the slot holds, position by position
    uint64_t last_used = 0;
  };
  Slot& slot_for(RequestId id);
  // Feeds `tokens` at positions cached.size()... into the slot; returns the greedy
  // next token after the last of them.
  int32_t feed(size_t slot, std::span<const int32_t> tokens);

  std::unique_ptr<ModelFile> owned_;  // set by open()
  std::string path_;
  ModelDraftOptions options_;
  std::unique_ptr<Backend> backend_;
  std::vector<Slot> slots_;
  std::vector<float> logits_;
  uint64_t uses_ = 0;
  int64_t passes_ = 0;
  int64_t fed_tokens_ = 0;
  int64_t proposed_ = 0;
  double seconds_ = 0;
};

}  // namespace seer
