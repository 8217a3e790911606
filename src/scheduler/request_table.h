#pragma once
// Owns every live request by id; the scheduler, engine and executors look requests
// up here.
#include <memory>
#include <unordered_map>

#include "common/error.h"
#include "scheduler/request.h"

namespace seer {

class RequestTable {
 public:
  Request& add(Request r) {
    RequestId id = r.id;
    auto [it, inserted] = table_.emplace(id, std::make_unique<Request>(std::move(r)));
    if (!inserted) fail("request id {} already exists", id);
    return *it->second;
  }
  Request& get(RequestId id) { return *table_.at(id); }
  const Request& get(RequestId id) const { return *table_.at(id); }
  Request* find(RequestId id) {
    auto it = table_.find(id);
    return it == table_.end() ? nullptr : it->second.get();
  }
  const Request* find(RequestId id) const {
    auto it = table_.find(id);
    return it == table_.end() ? nullptr : it->second.get();
  }
  void erase(RequestId id) { table_.erase(id); }
  size_t size() const { return table_.size(); }
  auto begin() const { return table_.begin(); }
  auto end() const { return table_.end(); }

 private:
  std::unordered_map<RequestId, std::unique_ptr<Request>> table_;
};

}  // namespace seer
