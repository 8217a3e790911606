#include "scheduler/parts/admission.h"

namespace seer {

int32_t admit_front_while_fits(ScheduleSession& s, RequestQueue& queue, const ChunkRule& chunk) {
  int32_t admitted = 0;
  while (!queue.empty() && !s.running_full()) {
    Request& r = queue.front();
    int32_t n = chunk(r);
    if (n <= 0 || !s.bring_in(r, n)) break;
    ++admitted;
  }
  return admitted;
}

std::vector<Request*> collect_fitting(const ScheduleSession& s, const RequestQueue& queue) {
  const int32_t available = s.admission_room();
  std::vector<Request*> candidates;
  for (const auto& e : queue)
    if (s.kv().config().blocks_for(s.admission_tokens(*e.request)) <= available) candidates.push_back(e.request);
  return candidates;
}

int32_t admit_each(ScheduleSession& s, const std::vector<Request*>& candidates, const ChunkRule& chunk) {
  int32_t admitted = 0;
  for (Request* r : candidates) {
    if (s.running_full()) break;
    int32_t n = chunk(*r);
    if (n > 0 && s.bring_in(*r, n)) ++admitted;
  }
  return admitted;
}

}  // namespace seer
