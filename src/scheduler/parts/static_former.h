#pragma once
// Request-level (static) batching [FasterTransformer]: a batch is formed only when
// nothing runs; it then runs, prompts first, until every member has finished. No
// request joins mid-batch.
#include "scheduler/parts/schedule_session.h"

namespace seer {

class StaticFormer final : public BatchFormer {
 public:
  explicit StaticFormer(int32_t max_num_batched_tokens) : max_tokens_(max_num_batched_tokens) {}
  std::string_view name() const override { return "static"; }
  void form(ScheduleSession& s) override;

 private:
  bool fits_token_cap(const ScheduleSession& s, int32_t n) const;
  int32_t max_tokens_;
};

}  // namespace seer
