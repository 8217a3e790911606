// An invariant failure costs the requests in flight, not the server (issue 34 item 7).
#include <fmt/format.h>

#include "engine/engine.h"
#include "kv/kv_manager.h"
#include "scheduler/scheduler.h"

namespace seer {
namespace {

const char* state_name(RequestState s) {
  switch (s) {
    case RequestState::Waiting: return "waiting";
    case RequestState::Running: return "running";
    case RequestState::Swapped: return "swapped";
    case RequestState::Held: return "held";
    case RequestState::Finished: return "finished";
  }
  return "?";
}

}  // namespace

size_t Engine::recover(const std::string& why) {
  in_step_ = false;
  to_finish_.clear();
  scheduler_.remove_all();
  scheduler_.conversations().forget_all();
  kv_.reset();
  std::vector<RequestId> ids;
  ids.reserve(requests_.size());
  for (const auto& [id, r] : requests_) ids.push_back(id);
  const double now = clock_.now();
  for (RequestId id : ids) {
    Request& r = requests_.get(id);
    feed_.forget(id);  // the next plan tells the executor to drop it
    r.state = RequestState::Finished;
    r.finish_reason = FinishReason::Error;
    r.error = why;
    r.finish_s = now;
    ++counters_.finished_requests;
    for (EngineObserver* o : observers_) o->on_finished(r);
    requests_.erase(id);
  }
  ++counters_.recoveries;
  kv_.check_invariants();
  scheduler_.check_invariants(requests_, kv_);
  return ids.size();
}

std::string Engine::state_dump() const {
  std::string out;
  try {
    const KvUsage kv = kv_.usage();
    out += fmt::format("engine state: {} requests (running {}, waiting {}, swapped {}, held {}); device blocks {}/{} "
                       "used, {} reserved unused; host blocks {}/{} used",
                       requests_.size(), scheduler_.num_running(), scheduler_.num_waiting(), scheduler_.num_swapped(),
                       scheduler_.num_held(), kv.device.used(), kv.device.total, kv.reserved_unused, kv.host.used(),
                       kv.host.total);
    if (const std::string cache = scheduler_.conversations().describe(); !cache.empty()) out += "; " + cache;
    out += '\n';
    int shown = 0;
    for (const auto& [id, r] : requests_) {
      if (++shown > 32) {
        out += fmt::format("  ... and {} more\n", requests_.size() - 32);
        break;
      }
      out += fmt::format("  request {} '{}': {}, prompt {} + output {} tokens, {} computed, {} dropped leading", id,
                         r->external_id, state_name(r->state), r->prompt_len(), r->num_output(),
                         r->num_computed_tokens, r->num_dropped_leading);
      if (kv_.has(id)) {
        const KvTable& t = kv_.table(id);
        out += fmt::format(", device blocks {}, host blocks {}, reserved {}", t.num_device, t.num_host, t.reserved);
      }
      out += '\n';
    }
  } catch (const std::exception& e) {
    out += fmt::format("\n(state dump stopped: {})\n", e.what());
  }
  return out;
}

}  // namespace seer
