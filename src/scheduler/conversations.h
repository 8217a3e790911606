#pragma once
// The conversation / prefix cache as the scheduler owns it (docs/pensieve.md,
// docs/architecture.md §2). Every layer reaches the cache through these hooks on
// the scheduler, in a request's order of life:
//   arrival  - expired conversations are forgotten; a turn that continues its
//              conversation gets the stored history before its new message;
//              a front end with a shared tier restores what that tier holds first;
//   planning - the schedule session matches, attaches and makes room (planning_cache);
//   finish   - the request's KV becomes its conversation's entry, or is freed.
// Stateless stacks attach no cache: every hook then does what a server without one
// does (nothing, or free the KV).
//
// Single-threaded: the engine thread owns it, like the KvManager.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kv/conversation_cache.h"
#include "scheduler/request.h"

namespace seer {

struct PolicyInfo;

// What the builder below makes the cache of (the knobs of StackKnobs and the stack's
// derived parts).
struct ConversationCacheSetup {
  int32_t chunk_tokens = 32;
  double swap_out_threshold = 0.25;
  std::string eviction = "pensieve";
  // Keep token histories for stateless policies too, so a conversation id still
  // continues (the server); false: no cache for them (the simulator, whose traces
  // carry each turn's history).
  bool histories_when_stateless = false;
  bool prefix_reuse = false;
  int32_t max_conversations = 0;
  int32_t max_conversations_per_tenant = 0;
  double idle_expiry_s = 0;
  ChunkCostFn chunk_cost;
  SharedTier* shared = nullptr;  // not owned
  bool shared_write_through = false;
};

// The one builder of the cache, for `seer serve` and `seer sim` alike: null when the
// policy keeps no KV and no histories are wanted.
std::unique_ptr<ConversationCache> make_conversation_cache(const PolicyInfo& policy, KvManager& kv,
                                                           ConversationCacheSetup setup);

// `history` then `r`'s own prompt from Request::fresh_start_tokens on: the prompt
// of a turn that continues a conversation.
std::vector<int32_t> prompt_after_history(std::span<const int32_t> history, const Request& r);

class Conversations {
 public:
  void attach(std::unique_ptr<ConversationCache> cache) { cache_ = std::move(cache); }
  // Read-only: counters, metrics, state dumps. Null without a cache.
  const ConversationCache* cache() const { return cache_.get(); }
  // The schedule session's: match, attach, make room, maintain. Null without a cache.
  ConversationCache* planning_cache() { return cache_.get(); }

  // ---- Arrival.
  // Forgets expired conversations, then prepends the stored history to a turn that
  // continues its conversation (sets Request::conversation_history_len; a caller
  // whose prompt already holds the history gave it).
  void arrive(Request& r, double now);
  // The shared tier (docs/replicas.md) could add KV for `conversation`: this replica
  // holds none of it, or its entry lost leading blocks. Expired entries go first.
  [[nodiscard]] bool wants_shared(const std::string& conversation, double now);
  // Leading tokens of the prompt `r` will have that restore_shared() would fetch.
  int32_t shared_restorable(const Request& r) const;
  // Restores onto the host tier what the shared tier holds of the prompt `r` will
  // have; when nothing comes back and `r` continues its conversation, adopts
  // `stored_history` (the tier's) as the history. Returns the tokens restored.
  int32_t restore_shared(const Request& r, std::span<const int32_t> stored_history, double now);

  // ---- Finish.
  // `r` ended: a completed turn's KV becomes its conversation's entry; an aborted one
  // hands back only the history it started from; a deleted conversation's turn, or
  // any turn without a cache, frees its KV.
  void release(const Request& r, KvManager& kv, double now);

  // ---- Around the steps.
  // Forgets `conversation` (DELETE /v1/conversations/{id}). False when unknown here.
  [[nodiscard]] bool forget(const std::string& conversation, double now);
  void expire(double now);
  void plan_executed();
  // Drops every entry without touching the KV manager (an engine recovering).
  void forget_all();
  void check_invariants() const;
  std::string describe() const;  // "" without a cache

 private:
  std::unique_ptr<ConversationCache> cache_;
};

}  // namespace seer
