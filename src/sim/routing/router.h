#pragma once
// How a replica set (sim/replica_set.h) picks the replica for a request: one
// small policy per file, chosen by name (`seer sim --routing`).
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace seer {

// What the router sees of one replica: whether it is up, and the work it was
// given that has not finished (its own bookkeeping, as a load balancer keeps).
struct ReplicaLoad {
  bool alive = true;
  int64_t outstanding_requests = 0;
  int64_t outstanding_tokens = 0;  // prompt tokens of those requests (output lengths are unknown)
};

struct RouteQuery {
  std::string conversation;  // "" for requests outside a conversation
  int32_t prompt_tokens = 0;
};

class Router {
 public:
  virtual ~Router() = default;
  virtual const char* name() const = 0;
  // The index of a live replica. `replicas` has at least one live entry.
  virtual size_t route(const RouteQuery& q, std::span<const ReplicaLoad> replicas) = 0;
};

struct RouterInfo {
  std::string name;
  std::string description;
};
const std::vector<RouterInfo>& routing_policies();
// Throws seer::Error naming --routing and the known policies.
std::unique_ptr<Router> make_router(const std::string& name);

std::unique_ptr<Router> make_round_robin_router();
std::unique_ptr<Router> make_least_loaded_router();
std::unique_ptr<Router> make_conversation_affinity_router();

// The next live replica after `cursor` (round-robin over live replicas); advances
// the cursor. Shared by the policies that fall back to round-robin.
size_t next_live_replica(size_t& cursor, std::span<const ReplicaLoad> replicas);

}  // namespace seer
