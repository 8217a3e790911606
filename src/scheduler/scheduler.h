#pragma once
// The scheduler (docs/architecture.md §2): pure bookkeeping. Each engine iteration it looks at the
// requests, the KV block pools and the time, and returns a StepPlan. It never
// touches tensors and never reads the system time.
//
// The scheduler keeps the queues (waiting, running, swapped). The engine tells it
// about new requests (add) and finished or aborted ones (remove; the engine frees
// their KV). Inside schedule() the scheduler admits, allocates KV, and preempts:
// those effects are already applied to the KvManager and the Request when the plan
// is returned (recompute: num_computed_tokens = 0 and KV freed; swap: KvOps in the
// plan, state Swapped), and are listed in the plan for the engine's counters.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kv/kv_manager.h"
#include "scheduler/conversations.h"
#include "scheduler/request_queue.h"
#include "scheduler/request_table.h"
#include "scheduler/scheduler_knobs.h"
#include "scheduler/step_plan.h"

namespace seer {

// Time of one iteration that computes `tokens` tokens (seconds). The simulator
// passes its cost model, the server measurements of the real backend.
using IterationTimeFn = std::function<double(int32_t tokens)>;

// Exact allocation's padding when neither the user nor the policy sets one [S3].
inline constexpr double kDefaultPadding = 0.1;

// What make_scheduler gets: the user's knobs (scheduler_knobs.h) and what the
// stack derives from them and the hardware.
struct SchedulerConfig : SchedulerKnobs {
  // The TBT SLO τ is derived from when token_budget is 0: the largest multiple of
  // `tile` whose iteration_time fits it (0: default_token_budget or the policy's).
  double tbt_slo_s = 0;
  IterationTimeFn iteration_time;
  int32_t tile = 64;
  int32_t default_token_budget = 512;
  int32_t max_token_budget = 16384;  // search limit when deriving τ from the SLO
  // Exact allocation: reserve predicted × (1 + padding). Unset: the policy's default,
  // kDefaultPadding (S3) or EcoServe's 0.15 for chat; a given value always wins.
  std::optional<double> padding;
  double padding_or(double policy_default = kDefaultPadding) const { return padding.value_or(policy_default); }
};

struct SchedulerContext {
  RequestTable& requests;
  KvManager& kv;
  double now = 0;
};

struct SchedulerQueues {
  RequestQueue waiting;  // not admitted, or preempted by recompute
  RequestQueue running;  // admitted; sorted by arrival (back = latest arrived)
  RequestQueue swapped;  // preempted by swap; K/V on the host tier

  // Queues that parts add for their own use (EcoServe's held generation tasks,
  // ...). Each holds requests of one state; the invariant checker audits them like
  // the three above.
  struct Named {
    RequestQueue queue;
    RequestState state = RequestState::Waiting;
  };
  // Returns the queue `name`, creating it for requests of `state` on first use.
  // Throws std::logic_error when it exists for another state.
  RequestQueue& named(const std::string& name, RequestState state);
  const Named* find_named(const std::string& name) const;
  const std::map<std::string, Named>& all_named() const { return named_; }
  // Requests in named queues.
  size_t num_named() const;
  // Removes the request from whichever named queue holds it.
  bool erase_named(RequestId id);

 private:
  std::map<std::string, Named> named_;
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;

  virtual std::string_view name() const = 0;
  // A new request (state Waiting, nothing computed) joins the waiting queue.
  virtual void add(Request& r);
  // The request finished or was aborted: it leaves whichever queue holds it. The
  // caller then hands its KV to conversations().release(). Returns false when no
  // queue held it.
  virtual bool remove(RequestId id);
  // Every queued request leaves (through remove(), so parts forget them too): an
  // engine recovering from a failure drops them all.
  void remove_all();
  virtual StepPlan schedule(SchedulerContext& ctx) = 0;

  size_t num_waiting() const { return queues_.waiting.size(); }
  size_t num_running() const { return queues_.running.size(); }
  size_t num_swapped() const { return queues_.swapped.size(); }
  // Requests in the queues parts added (e.g. EcoServe's held generation tasks).
  size_t num_held() const { return queues_.num_named(); }
  const SchedulerQueues& queues() const { return queues_; }
  // The conversation / prefix cache: owned here, reached only through these hooks
  // (scheduler/conversations.h). Empty for stateless stacks.
  Conversations& conversations() { return conversations_; }
  const Conversations& conversations() const { return conversations_; }

  // Every live request of `requests` is in exactly the queue its state names
  // (named queues included); waiting requests hold no KV, running and held ones
  // hold device blocks covering their computed tokens, swapped ones hold host
  // blocks only; the conversation cache is consistent. Throws std::logic_error.
  virtual void check_invariants(const RequestTable& requests, const KvManager& kv) const;

  // The key of the running and swapped queues: arrival order, so the back is the
  // latest-arrived request (the first preemption victim).
  static QueueKey arrival_key(const Request& r) { return QueueKey{{r.arrival_s, 0, 0}, r.id}; }

 protected:
  virtual QueueKey waiting_key(const Request& r) const;

  SchedulerQueues queues_;
  Conversations conversations_;
};

struct PolicyInfo {
  std::string name;
  std::string description;  // one line for CLI help, naming the published system
  bool uses_token_budget = false;  // forms batches under resolve_token_budget()
  // Stateful policies keep finished turns' KV in a ConversationCache (Pensieve);
  // cache_host_tier: over the device and host tiers (false: device only).
  bool caches_conversations = false;
  bool cache_host_tier = false;
  // The policy plans with predicted output lengths: front ends refuse it without a
  // length predictor (--predictor).
  bool needs_predictor = false;
  // The token budget without --token-budget or an SLO (0: SchedulerConfig's
  // default_token_budget).
  int32_t default_token_budget = 0;
};
// The named presets, in registry order.
const std::vector<PolicyInfo>& scheduler_policies();
// The preset named `name`; nullptr when there is none.
const PolicyInfo* find_policy(std::string_view name);
// Throws seer::Error naming --predictor when `policy` plans with predicted lengths
// (PolicyInfo::needs_predictor) and no predictor is given.
void require_predictor_for(std::string_view policy, bool have_predictor);

// The preset named `policy`; throws seer::Error for unknown names.
const PolicyInfo& policy_info(const std::string& policy);

// Builds the preset named config.policy; throws seer::Error for unknown names or
// invalid settings.
std::unique_ptr<Scheduler> make_scheduler(const SchedulerConfig& config);

// Sarathi's τ for `config` (see SchedulerConfig::token_budget).
int32_t resolve_token_budget(const SchedulerConfig& config);
// Whether the preset named `policy` forms its batches under a token budget (false
// for unknown names).
bool policy_uses_token_budget(const std::string& policy);

}  // namespace seer
