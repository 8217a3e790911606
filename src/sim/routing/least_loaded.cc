// least-loaded: the live replica with the fewest outstanding requests (routed,
// not finished), ties broken by fewer outstanding tokens, then by a rotating
// start so that an idle cluster still spreads its requests.
#include "sim/routing/router.h"

#include <stdexcept>

namespace seer {
namespace {

class LeastLoadedRouter final : public Router {
 public:
  const char* name() const override { return "least-loaded"; }
  size_t route(const RouteQuery&, std::span<const ReplicaLoad> replicas) override {
    const size_t n = replicas.size();
    size_t best = n;
    for (size_t k = 0; k < n; ++k) {
      const size_t i = (start_ + k) % n;
      if (!replicas[i].alive) continue;
      if (best == n || lighter(replicas[i], replicas[best])) best = i;
    }
    if (best == n) throw std::logic_error("router: no live replica");
    start_ = (start_ + 1) % n;
    return best;
  }

 private:
  static bool lighter(const ReplicaLoad& a, const ReplicaLoad& b) {
    if (a.outstanding_requests != b.outstanding_requests) return a.outstanding_requests < b.outstanding_requests;
    return a.outstanding_tokens < b.outstanding_tokens;
  }
  size_t start_ = 0;
};

}  // namespace

std::unique_ptr<Router> make_least_loaded_router() { return std::make_unique<LeastLoadedRouter>(); }

}  // namespace seer
