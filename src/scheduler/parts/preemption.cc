#include "scheduler/parts/preemption.h"

#include <stdexcept>

#include <fmt/format.h>

namespace seer {

Preemption preempt_request(Request& r, PreemptionMode mode, KvManager& kv, std::vector<KvOp>& ops) {
  Preemption p;
  p.request = r.id;
  ++r.preemptions;
  r.reserved_tokens = 0;
  if (mode == PreemptionMode::Held && r.num_computed_tokens > 0) {
    // Offload-free: the computed K/V stay on the device; the promise beyond them
    // is given back.
    kv.truncate(r.id, r.num_computed_tokens);
    if (!kv.reserve(r.id, kv.table(r.id).num_device))
      throw std::logic_error(fmt::format("kv: cannot shrink the reservation of held request {}", r.id));
    p.mode = PreemptionMode::Held;
    r.state = RequestState::Held;
    return p;
  }
  if (mode == PreemptionMode::Swap && r.num_computed_tokens > 0) {
    // Blocks past the computed tokens hold nothing worth copying.
    kv.truncate(r.id, r.num_computed_tokens);
    size_t before = ops.size();
    if (kv.swap_out(r.id, ops)) {
      p.mode = PreemptionMode::Swap;
      p.swapped_blocks = static_cast<int32_t>(ops.size() - before);
      r.state = RequestState::Swapped;
      return p;
    }
  }
  p.mode = PreemptionMode::Recompute;
  p.lost_tokens = r.num_computed_tokens;
  kv.free(r.id);
  r.num_computed_tokens = 0;
  r.num_dropped_leading = 0;
  r.state = RequestState::Waiting;
  return p;
}

}  // namespace seer
