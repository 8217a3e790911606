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

// Earliest first-token deadline first (arrival + the request's TTFT SLO), then by
// arrival: with one SLO for every request (or none) this is FCFS; with classes of
// SLOs a tight-deadline request overtakes looser ones that arrived shortly before
// it, like the first key of EcoServe's ordering (parts/eco_ordering.h) without its
// buckets. A request without a TTFT SLO is due at its arrival.
class DeadlineOrdering final : public Ordering {
 public:
  std::string_view name() const override { return "deadline"; }
  QueueKey key(const Request& r) const override { return QueueKey{{r.arrival_s + r.slo.ttft_s, r.arrival_s, 0}, r.id}; }
};

// "fcfs", "priority", "deadline" or "deadline-spf" (parts/predicted_ordering.h); throws seer::Error otherwise.
std::unique_ptr<Ordering> make_ordering(std::string_view name);

}  // namespace seer
