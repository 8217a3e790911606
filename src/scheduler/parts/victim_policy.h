#pragma once
// Who gives way when a running request needs KV that is not free (docs/architecture.md,
// "Preemption"). The session preempts the chosen victim and tries again, until the
// request's KV fits or the request itself was chosen.
#include <memory>
#include <string_view>

#include "scheduler/request_queue.h"

namespace seer {

class VictimPolicy {
 public:
  virtual ~VictimPolicy() = default;
  virtual std::string_view name() const = 0;
  // A running request to preempt so that `needing` (running) can grow; may be
  // `needing` itself. `running` is never empty (it holds `needing`).
  virtual Request& choose(const RequestQueue& running, Request& needing) const = 0;
};

// The latest-arrived running request [vLLM]: the back of the running queue.
class LatestArrivalVictim final : public VictimPolicy {
 public:
  std::string_view name() const override { return "latest-arrival"; }
  Request& choose(const RequestQueue& running, Request&) const override { return running.back(); }
};

// The request that needs the memory gives way itself [S3's supervisor: the
// mispredicted request, not the latest arrival].
class RequesterVictim final : public VictimPolicy {
 public:
  std::string_view name() const override { return "requester"; }
  Request& choose(const RequestQueue&, Request& needing) const override { return needing; }
};

// "latest-arrival" or "requester"; throws seer::Error otherwise.
std::unique_ptr<VictimPolicy> make_victim_policy(std::string_view name);

}  // namespace seer
