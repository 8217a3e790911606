#pragma once
// A queue of requests kept sorted by a key computed once when the request enters
// (see parts/ordering.h). Insert, erase and lookup are O(log n); the front is the
// request to serve first, the back the one to preempt first.
#include <array>
#include <cstddef>
#include <set>
#include <unordered_map>

#include "scheduler/request.h"

namespace seer {

// Compared lexicographically; ties broken by request id (earlier id first).
struct QueueKey {
  std::array<double, 3> k{};
  RequestId id = -1;
  auto operator<=>(const QueueKey&) const = default;
};

class RequestQueue {
 public:
  struct Entry {
    QueueKey key;
    Request* request;
    bool operator<(const Entry& o) const { return key < o.key; }
  };
  using iterator = std::set<Entry>::const_iterator;

  void insert(Request& r, const QueueKey& key);
  // False when the request is not in this queue.
  bool erase(RequestId id);
  [[nodiscard]] bool contains(RequestId id) const { return index_.count(id) != 0; }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  Request& front() const { return *entries_.begin()->request; }
  Request& back() const { return *entries_.rbegin()->request; }
  iterator begin() const { return entries_.begin(); }
  iterator end() const { return entries_.end(); }
  iterator find(RequestId id) const;
  // The first entry whose key is not less than `key` (binary search, O(log n)).
  iterator lower_bound(const QueueKey& key) const { return entries_.lower_bound(Entry{key, nullptr}); }

 private:
  std::set<Entry> entries_;
  std::unordered_map<RequestId, iterator> index_;
};

}  // namespace seer
