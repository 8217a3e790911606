#include "scheduler/parts/supervisor.h"

#include <algorithm>
#include <cmath>

namespace seer {

int32_t DoublingSupervisor::doubled_reservation(const Request& r, int32_t tokens) {
  const int64_t cap = int64_t{r.prompt_len()} + r.sampling.max_tokens;
  int64_t output = std::max(1, r.reserved_tokens - r.prompt_len());
  do {
    output *= 2;
  } while (r.prompt_len() + output < tokens && r.prompt_len() + output < cap);
  return static_cast<int32_t>(std::min(cap, r.prompt_len() + output));
}

bool DoublingSupervisor::extend(KvManager& kv, Request& r, int32_t tokens) const {
  const int32_t grown = doubled_reservation(r, tokens);
  if (!kv.reserve(r.id, kv.blocks_for(r.id, grown))) {
    r.scheduling.min_reservation_tokens = grown;
    return false;
  }
  r.reserved_tokens = grown;
  ++r.scheduling.reservation_growths;
  return true;
}

bool RepredictSupervisor::extend(KvManager& kv, Request& r, int32_t) const {
  const int32_t predicted = r.predicted_output_len.value_or(r.sampling.max_tokens);
  const auto slack = static_cast<int32_t>(std::ceil(padding_ * predicted));
  const int32_t l_new = std::max({predicted - r.num_output(), slack, kv.config().block_size});
  r.predicted_output_len = std::min(r.sampling.max_tokens, r.num_output() + l_new);
  return false;
}

}  // namespace seer
