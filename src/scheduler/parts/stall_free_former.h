#pragma once
// Stall-free batching with chunked prefill [Sarathi-Serve]. Each iteration has a
// token budget τ: first every running decode (1 token each), then the next chunk
// of each partially prefilled request, then held requests (paused offload-free
// by a policy whose preemption mode is Held [EcoServe]) and swapped requests
// resume, then new requests are admitted, the last prompt chunked to fill τ
// exactly. At most
// min(max_batch_size, τ) requests run, so the decodes alone never exceed τ.
#include "scheduler/parts/schedule_session.h"

namespace seer {

class StallFreeFormer final : public BatchFormer {
 public:
  explicit StallFreeFormer(int32_t token_budget) : budget_(token_budget) {}
  std::string_view name() const override { return "stall-free"; }
  void form(ScheduleSession& s) override;
  int32_t token_budget() const override { return budget_; }
  // The named queue ScheduleSession::preempt() puts held requests in.
  static constexpr const char* kHeldQueue = "held";

 private:
  int32_t left(const ScheduleSession& s) const { return budget_ - s.num_tokens(); }
  bool full(const ScheduleSession& s) const;
  static bool has_held(ScheduleSession& s);
  // The next chunk of a request coming in: its rest, cut to the budget; 0 when full.
  int32_t next_chunk(const ScheduleSession& s, const Request& r) const;
  void run_decodes(ScheduleSession& s);
  void continue_prefills(ScheduleSession& s);
  void resume_held(ScheduleSession& s);
  void resume_swapped(ScheduleSession& s);
  void admit_new(ScheduleSession& s);

  int32_t budget_;
};

}  // namespace seer
