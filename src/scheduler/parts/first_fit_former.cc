#include "scheduler/parts/first_fit_former.h"

#include <algorithm>

#include "scheduler/parts/admission.h"

namespace seer {

int32_t FirstFitDecreasingFormer::whole_rest(const ScheduleSession& s, const Request& r) const {
  // A prompt longer than the cap runs alone rather than never.
  int32_t n = r.num_tokens() - r.num_computed_tokens;
  bool fits = max_tokens_ <= 0 || s.plan_empty() || s.num_tokens() + n <= max_tokens_;
  return fits ? n : 0;
}

void FirstFitDecreasingFormer::run_decodes(ScheduleSession& s) {
  s.for_each_running([&](Request& r) {
    if (s.ensure_kv(r, r.num_tokens())) s.add_chunk(r, r.num_tokens() - r.num_computed_tokens);
    return true;
  });
}

std::vector<Request*> FirstFitDecreasingFormer::candidates(ScheduleSession& s) const {
  std::vector<Request*> pool = collect_fitting(s, s.queues().swapped);
  std::vector<Request*> waiting = collect_fitting(s, s.queues().waiting);
  pool.insert(pool.end(), waiting.begin(), waiting.end());
  std::vector<std::pair<int32_t, Request*>> keyed;
  keyed.reserve(pool.size());
  for (Request* r : pool) keyed.emplace_back(s.reservation_tokens(*r), r);
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first > b.first;
    return Scheduler::arrival_key(*a.second) < Scheduler::arrival_key(*b.second);
  });
  for (size_t i = 0; i < keyed.size(); ++i) pool[i] = keyed[i].second;
  return pool;
}

void FirstFitDecreasingFormer::form(ScheduleSession& s) {
  run_decodes(s);
  admit_each(s, candidates(s), [&](const Request& r) { return whole_rest(s, r); });
}

}  // namespace seer
