#pragma once
// Prefill-prioritizing batching with whole prompts [Orca, vLLM v0]: waiting
// requests are admitted with their entire prompt as soon as memory allows.
//  * stall_decodes (vLLM v0): an iteration that admits prompts runs only prompts;
//    running decodes wait for the next one. Swapped requests resume before new
//    admissions, and only in iterations without preemption.
//  * otherwise (Orca): every iteration runs all decodes, then admits prompts.
#include "scheduler/parts/schedule_session.h"

namespace seer {

class WholePromptFormer final : public BatchFormer {
 public:
  WholePromptFormer(bool stall_decodes, int32_t max_num_batched_tokens)
      : stall_decodes_(stall_decodes), max_tokens_(max_num_batched_tokens) {}
  std::string_view name() const override { return stall_decodes_ ? "prefill-first" : "whole-prompt"; }
  void form(ScheduleSession& s) override;

 private:
  // Admits whole prompts in queue order while they fit; returns how many.
  int32_t admit_prompts(ScheduleSession& s);
  void run_decodes(ScheduleSession& s);
  void resume_swapped(ScheduleSession& s);
  bool fits_token_cap(const ScheduleSession& s, int32_t n) const;
  // Everything r has left to compute, or 0 when that breaks the token cap.
  int32_t whole_rest(const ScheduleSession& s, const Request& r) const;

  bool stall_decodes_;
  int32_t max_tokens_;
};

}  // namespace seer
