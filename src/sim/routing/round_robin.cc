// round-robin: each request to the next live replica in turn.
#include "sim/routing/router.h"

namespace seer {
namespace {

class RoundRobinRouter final : public Router {
 public:
  const char* name() const override { return "round-robin"; }
  size_t route(const RouteQuery&, std::span<const ReplicaLoad> replicas) override {
    return next_live_replica(cursor_, replicas);
  }

 private:
  size_t cursor_ = 0;
};

}  // namespace

std::unique_ptr<Router> make_round_robin_router() { return std::make_unique<RoundRobinRouter>(); }

}  // namespace seer
