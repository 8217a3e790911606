#pragma once
// Length-aware batching [S3] (docs/s3.md): iteration-level, whole prompts. Every
// iteration runs all decodes, then packs the pool (waiting and swapped requests
// alike) into the free memory by first-fit-decreasing: candidates sorted by
// predicted KV need (the allocation rule's reservation) decreasing, and every one
// that fits is admitted; a misfit does not stop the scan. Admission thus happens
// whenever memory frees up.
#include <vector>

#include "scheduler/parts/schedule_session.h"

namespace seer {

class FirstFitDecreasingFormer final : public BatchFormer {
 public:
  explicit FirstFitDecreasingFormer(int32_t max_num_batched_tokens) : max_tokens_(max_num_batched_tokens) {}
  std::string_view name() const override { return "first-fit-decreasing"; }
  void form(ScheduleSession& s) override;

 private:
  void run_decodes(ScheduleSession& s);
  // The pool's requests that may fit now, by KV need decreasing (ties: arrival).
  std::vector<Request*> candidates(ScheduleSession& s) const;
  // Everything r has left to compute, or 0 when that breaks the token cap.
  int32_t whole_rest(const ScheduleSession& s, const Request& r) const;

  int32_t max_tokens_;
};

}  // namespace seer
