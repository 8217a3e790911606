#include "sim/routing/router.h"

#include <stdexcept>

#include "common/error.h"

namespace seer {

const std::vector<RouterInfo>& routing_policies() {
  static const std::vector<RouterInfo> policies{
      {"round-robin", "each request to the next live replica in turn"},
      {"least-loaded", "the live replica with the fewest outstanding requests (ties: fewer outstanding tokens)"},
      {"conversation-affinity",
       "consistent hashing on the conversation id (a dead replica's conversations move, no others); "
       "round-robin for requests without one"},
  };
  return policies;
}

std::unique_ptr<Router> make_router(const std::string& name) {
  if (name == "round-robin") return make_round_robin_router();
  if (name == "least-loaded") return make_least_loaded_router();
  if (name == "conversation-affinity") return make_conversation_affinity_router();
  std::string known;
  for (const auto& p : routing_policies()) known += (known.empty() ? "" : ", ") + p.name;
  fail("--routing: unknown policy '{}' (known: {})", name, known);
}

size_t next_live_replica(size_t& cursor, std::span<const ReplicaLoad> replicas) {
  for (size_t k = 0; k < replicas.size(); ++k) {
    const size_t i = (cursor + k) % replicas.size();
    if (replicas[i].alive) {
      cursor = (i + 1) % replicas.size();
      return i;
    }
  }
  throw std::logic_error("router: no live replica");
}

}  // namespace seer
