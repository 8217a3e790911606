// conversation-affinity: consistent hashing on the conversation id (what
// HAProxy's `hash-type consistent` does on a header): every replica owns
// kVirtualNodes points on a ring; a conversation goes to the owner of the first
// point at or after its hash, skipping dead replicas, so a replica's death moves
// only its own conversations. Requests without a conversation go round-robin.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/routing/router.h"

namespace seer {
namespace {

constexpr int kVirtualNodes = 64;

uint64_t mix(uint64_t h) {  // splitmix64's finalizer
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

uint64_t hash_string(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return mix(h);
}

class ConversationAffinityRouter final : public Router {
 public:
  const char* name() const override { return "conversation-affinity"; }
  size_t route(const RouteQuery& q, std::span<const ReplicaLoad> replicas) override {
    if (q.conversation.empty()) return next_live_replica(cursor_, replicas);
    if (ring_replicas_ != replicas.size()) build_ring(replicas.size());
    const uint64_t h = hash_string(q.conversation);
    auto it = std::lower_bound(ring_.begin(), ring_.end(), std::pair<uint64_t, size_t>{h, 0});
    for (size_t k = 0; k < ring_.size(); ++k, ++it) {
      if (it == ring_.end()) it = ring_.begin();
      if (replicas[it->second].alive) return it->second;
    }
    return next_live_replica(cursor_, replicas);  // throws: nothing is alive
  }

 private:
  void build_ring(size_t n) {
    ring_.clear();
    for (size_t r = 0; r < n; ++r)
      for (int v = 0; v < kVirtualNodes; ++v)
        ring_.emplace_back(mix(hash_string("replica-" + std::to_string(r)) + static_cast<uint64_t>(v)), r);
    std::sort(ring_.begin(), ring_.end());
    ring_replicas_ = n;
  }
  std::vector<std::pair<uint64_t, size_t>> ring_;  // (point, replica), sorted
  size_t ring_replicas_ = 0;
  size_t cursor_ = 0;
};

}  // namespace

std::unique_ptr<Router> make_conversation_affinity_router() {
  return std::make_unique<ConversationAffinityRouter>();
}

}  // namespace seer
