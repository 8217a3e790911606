#include "scheduler/parts/whole_prompt_former.h"

#include "scheduler/parts/admission.h"

namespace seer {

bool WholePromptFormer::fits_token_cap(const ScheduleSession& s, int32_t n) const {
  // A prompt longer than the cap runs alone rather than never.
  return max_tokens_ <= 0 || s.plan_empty() || s.num_tokens() + n <= max_tokens_;
}

int32_t WholePromptFormer::whole_rest(const ScheduleSession& s, const Request& r) const {
  int32_t n = r.num_tokens() - r.num_computed_tokens;
  return fits_token_cap(s, n) ? n : 0;
}

int32_t WholePromptFormer::admit_prompts(ScheduleSession& s) {
  // FCFS: no skipping ahead.
  return admit_front_while_fits(s, s.queues().waiting, [&](const Request& r) { return whole_rest(s, r); });
}

void WholePromptFormer::run_decodes(ScheduleSession& s) {
  s.for_each_running([&](Request& r) {
    if (s.ensure_kv(r, r.num_tokens())) s.add_chunk(r, r.num_tokens() - r.num_computed_tokens);
    return true;
  });
}

void WholePromptFormer::resume_swapped(ScheduleSession& s) {
  admit_front_while_fits(s, s.queues().swapped, [&](const Request& r) { return whole_rest(s, r); });
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
