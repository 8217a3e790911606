#include "scheduler/parts/whole_prompt_former.h"

namespace seer {

bool WholePromptFormer::fits_token_cap(const ScheduleSession& s, int32_t n) const {
  // A prompt longer than the cap runs alone rather than never.
  return max_tokens_ <= 0 || s.plan_empty() || s.num_tokens() + n <= max_tokens_;
}

int32_t WholePromptFormer::admit_prompts(ScheduleSession& s) {
  int32_t admitted = 0;
  auto& waiting = s.queues().waiting;
  while (!waiting.empty() && !s.running_full()) {
    Request& r = waiting.front();
    int32_t n = r.num_tokens() - r.num_computed_tokens;
    if (!fits_token_cap(s, n) || !s.admit(r, n)) break;  // FCFS: no skipping ahead
    ++admitted;
  }
  return admitted;
}

void WholePromptFormer::run_decodes(ScheduleSession& s) {
  auto& running = s.queues().running;
  // Preemption victims come from the back, so `it` (pointing at r) stays valid
  // unless r itself is preempted, which ends the pass.
  for (auto it = running.begin(); it != running.end(); ++it) {
    Request& r = *it->request;
    if (!s.ensure_kv(r, r.num_tokens())) break;
    s.add_chunk(r, r.num_tokens() - r.num_computed_tokens);
  }
}

void WholePromptFormer::resume_swapped(ScheduleSession& s) {
  auto& swapped = s.queues().swapped;
  while (!swapped.empty() && !s.running_full()) {
    Request& r = swapped.front();
    int32_t n = r.num_tokens() - r.num_computed_tokens;
    if (!fits_token_cap(s, n) || !s.resume(r, n)) break;
  }
}

void WholePromptFormer::form(ScheduleSession& s) {
  if (stall_decodes_) {
    if (s.queues().swapped.empty() && admit_prompts(s) > 0) return;
    run_decodes(s);
    if (s.num_preemptions() == 0) resume_swapped(s);
    return;
  }
  run_decodes(s);
  resume_swapped(s);
  if (s.queues().swapped.empty()) admit_prompts(s);
}

}  // namespace seer
