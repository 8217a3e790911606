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
  return queues_.waiting.erase(id) || queues_.running.erase(id) || queues_.swapped.erase(id) ||
         queues_.erase_named(id);
}

void Scheduler::remove_all() {
  std::vector<RequestId> ids;
  auto collect = [&](const RequestQueue& q) {
    for (const auto& e : q) ids.push_back(e.request->id);
  };
  collect(queues_.waiting);
  collect(queues_.running);
  collect(queues_.swapped);
  for (const auto& [name, named] : queues_.all_named()) collect(named.queue);
  for (RequestId id : ids) remove(id);
}

RequestQueue& SchedulerQueues::named(const std::string& name, RequestState state) {
  auto [it, inserted] = named_.try_emplace(name);
  if (inserted) it->second.state = state;
  if (it->second.state != state)
    throw std::logic_error(fmt::format("scheduler queue '{}' exists for another request state", name));
  return it->second.queue;
}

const SchedulerQueues::Named* SchedulerQueues::find_named(const std::string& name) const {
  auto it = named_.find(name);
  return it == named_.end() ? nullptr : &it->second;
}

size_t SchedulerQueues::num_named() const {
  size_t n = 0;
  for (const auto& [name, q] : named_) n += q.queue.size();
  return n;
}

bool SchedulerQueues::erase_named(RequestId id) {
  for (auto& [name, q] : named_)
    if (q.queue.erase(id)) return true;
  return false;
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
    case RequestState::Held: return "held";
  }
  return "?";
}

}  // namespace

namespace {

// The queues holding `id` (names), and the state the first of them is for.
struct Membership {
  int count = 0;
  std::string names;
  bool state_matches = false;
};

Membership membership(const SchedulerQueues& q, const Request& r) {
  Membership m;
  auto visit = [&](const RequestQueue& queue, const std::string& name, RequestState state) {
    if (!queue.contains(r.id)) return;
    ++m.count;
    m.names += (m.names.empty() ? "" : ", ") + name;
    if (m.count == 1) m.state_matches = r.state == state;
  };
  visit(q.waiting, "waiting", RequestState::Waiting);
  visit(q.running, "running", RequestState::Running);
  visit(q.swapped, "swapped", RequestState::Swapped);
  for (const auto& [name, named] : q.all_named()) visit(named.queue, name, named.state);
  return m;
}

void check_request_kv(const Request& r, const KvManager& kv) {
  const RequestId id = r.id;
  const KvTable& t = kv.table(id);
  switch (r.state) {
    case RequestState::Waiting:
      if (r.num_computed_tokens != 0) violated("waiting request {} has {} computed tokens", id, r.num_computed_tokens);
      if (t.num_device != 0 || t.num_host != 0 || t.reserved != 0)
        violated("waiting request {} holds KV ({} device, {} host, {} reserved)", id, t.num_device,
                 t.num_host, t.reserved);
      break;
    case RequestState::Running:
    case RequestState::Held:
      if (!t.resident(kv.config().logical_blocks_for(r.num_computed_tokens)))
        violated("{} request {} has {} computed tokens not all on the device ({} device blocks)",
                 state_name(r.state), id, r.num_computed_tokens, t.num_device);
      if (r.state == RequestState::Held && t.num_host != 0)
        violated("held request {} holds {} host blocks", id, t.num_host);
      break;
    case RequestState::Swapped:
      if (t.num_device != 0 || t.reserved != 0)
        violated("swapped request {} holds {} device blocks, {} reserved", id, t.num_device,
                 t.reserved);
      if (t.num_host < kv.blocks_for(id, r.num_computed_tokens))
        violated("swapped request {} has {} computed tokens but {} host blocks", id, r.num_computed_tokens,
                 t.num_host);
      break;
    case RequestState::Finished: break;
  }
}

}  // namespace

void Scheduler::check_invariants(const RequestTable& requests, const KvManager& kv) const {
  size_t live = 0, holders = 0;
  for (const auto& [id, ptr] : requests) {
    const Request& r = *ptr;
    if (r.finished()) continue;
    ++live;
    Membership m = membership(queues_, r);
    if (m.count != 1)
      violated("request {} ({}) is in {} queues ({})", id, state_name(r.state), m.count, m.names);
    if (!m.state_matches) violated("request {} has state {} but sits in queue {}", id, state_name(r.state), m.names);
    if (r.num_computed_tokens < 0 || r.num_computed_tokens >= r.num_tokens())
      violated("request {} has {} computed of {} tokens (nothing left to compute)", id, r.num_computed_tokens,
               r.num_tokens());
    check_request_kv(r, kv);
    if (r.state != RequestState::Waiting) ++holders;
  }
  size_t queued = queues_.waiting.size() + queues_.running.size() + queues_.swapped.size() + queues_.num_named();
  if (queued != live) violated("queues hold {} requests but {} are live", queued, live);
  if (kv.usage().request_tables != holders)
    violated("the KV manager has tables for {} requests but {} are running, held or swapped (leaked KV)",
             kv.usage().request_tables, holders);
  conversations_.check_invariants();
}

}  // namespace seer
