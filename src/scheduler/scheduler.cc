#include "scheduler/scheduler.h"

#include <stdexcept>

#include <fmt/format.h>

namespace seer {

QueueKey Scheduler::waiting_key(const Request& r) const { return arrival_key(r); }

void Scheduler::add(Request& r) {
  if (r.state != RequestState::Waiting || r.num_computed_tokens != 0)
    throw std::logic_error(fmt::format("request {} added to the scheduler in a non-initial state", r.id));
  queues_.waiting.insert(r, waiting_key(r));
}

bool Scheduler::remove(RequestId id) {
  return queues_.waiting.erase(id) || queues_.running.erase(id) || queues_.swapped.erase(id);
}

namespace {

template <typename... Args>
[[noreturn]] void violated(fmt::format_string<Args...> f, Args&&... args) {
  throw std::logic_error("scheduler invariant violated: " + fmt::format(f, std::forward<Args>(args)...));
}

const char* state_name(RequestState s) {
  switch (s) {
    case RequestState::Waiting: return "waiting";
    case RequestState::Running: return "running";
    case RequestState::Swapped: return "swapped";
    case RequestState::Finished: return "finished";
  }
  return "?";
}

}  // namespace

void Scheduler::check_invariants(const RequestTable& requests, const KvManager& kv) const {
  size_t live = 0;
  for (const auto& [id, ptr] : requests) {
    const Request& r = *ptr;
    if (r.finished()) continue;
    ++live;
    bool in_w = queues_.waiting.contains(id), in_r = queues_.running.contains(id), in_s = queues_.swapped.contains(id);
    if (in_w + in_r + in_s != 1)
      violated("request {} ({}) is in {} queues (waiting {}, running {}, swapped {})", id, state_name(r.state),
               in_w + in_r + in_s, in_w, in_r, in_s);
    bool match = (r.state == RequestState::Waiting && in_w) || (r.state == RequestState::Running && in_r) ||
                 (r.state == RequestState::Swapped && in_s);
    if (!match) violated("request {} has state {} but sits in another queue", id, state_name(r.state));
    if (r.num_computed_tokens < 0 || r.num_computed_tokens >= r.num_tokens())
      violated("request {} has {} computed of {} tokens (nothing left to compute)", id, r.num_computed_tokens,
               r.num_tokens());
    switch (r.state) {
      case RequestState::Waiting:
        if (r.num_computed_tokens != 0) violated("waiting request {} has {} computed tokens", id, r.num_computed_tokens);
        if (kv.num_device_blocks(id) != 0 || kv.num_host_blocks(id) != 0 || kv.reserved_blocks(id) != 0)
          violated("waiting request {} holds KV ({} device, {} host, {} reserved)", id, kv.num_device_blocks(id),
                   kv.num_host_blocks(id), kv.reserved_blocks(id));
        break;
      case RequestState::Running:
        if (!kv.resident(id, r.num_computed_tokens))
          violated("running request {} has {} computed tokens not all on the device ({} device blocks)", id,
                   r.num_computed_tokens, kv.num_device_blocks(id));
        break;
      case RequestState::Swapped:
        if (kv.num_device_blocks(id) != 0 || kv.reserved_blocks(id) != 0)
          violated("swapped request {} holds {} device blocks, {} reserved", id, kv.num_device_blocks(id),
                   kv.reserved_blocks(id));
        if (kv.num_host_blocks(id) < kv.blocks_for_tokens(r.num_computed_tokens))
          violated("swapped request {} has {} computed tokens but {} host blocks", id, r.num_computed_tokens,
                   kv.num_host_blocks(id));
        break;
      case RequestState::Finished: break;
    }
  }
  size_t queued = queues_.waiting.size() + queues_.running.size() + queues_.swapped.size();
  if (queued != live) violated("queues hold {} requests but {} are live", queued, live);
  size_t holders = queues_.running.size() + queues_.swapped.size();
  if (kv.num_requests() != holders)
    violated("the KV manager has tables for {} requests but {} are running or swapped (leaked KV)",
             kv.num_requests(), holders);
}

}  // namespace seer
