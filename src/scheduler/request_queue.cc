#include "scheduler/request_queue.h"

#include <stdexcept>

#include <fmt/format.h>

namespace seer {

void RequestQueue::insert(Request& r, const QueueKey& key) {
  if (key.id != r.id)
    throw std::logic_error(fmt::format("queue key of request {} carries id {}", r.id, key.id));
  auto [it, inserted] = entries_.insert(Entry{key, &r});
  if (!inserted || !index_.emplace(r.id, it).second)
    throw std::logic_error(fmt::format("request {} is already in the queue", r.id));
}

bool RequestQueue::erase(RequestId id) {
  auto it = index_.find(id);
  if (it == index_.end()) return false;
  entries_.erase(it->second);
  index_.erase(it);
  return true;
}

RequestQueue::iterator RequestQueue::find(RequestId id) const {
  auto it = index_.find(id);
  return it == index_.end() ? entries_.end() : it->second;
}

}  // namespace seer
