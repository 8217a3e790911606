#pragma once
// The order in which waiting requests are considered for admission. A key is
// computed once when a request enters the waiting queue.
#include <memory>
#include <string_view>

#include "scheduler/request_queue.h"

namespace seer {

class Ordering {
 public:
  virtual ~Ordering() = default;
  virtual std::string_view name() const = 0;
  virtual QueueKey key(const Request& r) const = 0;
};

// First come, first served: by arrival time.
class FcfsOrdering final : public Ordering {
 public:
  std::string_view name() const override { return "fcfs"; }
  QueueKey key(const Request& r) const override { return QueueKey{{r.arrival_s, 0, 0}, r.id}; }
};

// Higher Request::priority first, then by arrival.
class PriorityOrdering final : public Ordering {
 public:
  std::string_view name() const override { return "priority"; }
  QueueKey key(const Request& r) const override {
    return QueueKey{{-static_cast<double>(r.priority), r.arrival_s, 0}, r.id};
  }
};

// "fcfs" or "priority"; throws seer::Error otherwise.
std::unique_ptr<Ordering> make_ordering(std::string_view name);

}  // namespace seer
