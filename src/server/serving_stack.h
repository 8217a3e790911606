#pragma once
// Everything `seer serve` runs on, built from a model file: model, tokenizer, CPU
// backend with its KV storage, the KV manager over the same block pool, the
// scheduler policy, the ModelExecutor and the Engine on the wall clock. With a TBT
// SLO it profiles the backend once to choose the token budget. Owns all of them; not
// copyable; used by one thread after construction (the engine's).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "common/clock.h"
#include "engine/draft_proposer.h"
#include "engine/engine.h"
#include "engine/engine_stack.h"
#include "engine/iteration_log.h"
#include "runtime/model_executor.h"
#include "kv/conversation_cache.h"
#include "kv/kv_manager.h"
#include "server/redis_kv_store.h"
#include "model/model_file.h"
#include "predict/predictor_flags.h"
#include "scheduler/scheduler.h"
#include "server/request_builder.h"
#include "tokenizer/tokenizer.h"

namespace seer::server {

inline constexpr int32_t kAutoHostKvBlocks = -1;

// The knobs `seer sim` shares are StackKnobs' (scheduler/scheduler_knobs.h); the
// rest is serve's own.
struct ServingConfig : StackKnobs {
  // At or above every single-seed policy in every measured setup (docs/serving.md,
  // "Default policy"; docs/seer-policy.md).
  ServingConfig() { policy = "seer"; }

  std::string model_path;
  std::string tokenizer_path;  // llama2.c checkpoints keep the tokenizer apart
  // Speculative decoding with a draft model (runtime/model_draft_proposer.h): "" none;
  // its K/V holds draft_slots requests of max_model_len tokens.
  std::string draft_model;
  int32_t draft_slots = 16;
  std::string served_name;     // "" = the model file's name without extension
  std::string chat_template_file;  // "" = the model's own template (--chat-template FILE)
  // Thinking models (docs/serving.md, "Reasoning"): "separate" puts the reasoning in
  // reasoning_content, "none" leaves it in content; the default cap on reasoning
  // tokens of a request (-1: none).
  std::string reasoning_format = "separate";
  // Tool-call format of the replies and of forced calls (docs/serving.md, "Tool
  // calls"): "" = the one the chat template shows.
  std::string tool_call_format;
  int32_t reasoning_budget = -1;
  int32_t reasoning_memory = 4096;  // assistant turns whose reasoning is kept (0: none)
  int32_t kv_blocks = 0;       // device KV blocks; 0: from kv_memory_bytes
  int64_t kv_memory_bytes = 0; // 0: kDefaultKvMemory, at least one full context
  // Host-tier KV blocks (swap preemption, the conversation cache's second tier):
  // kAutoHostKvBlocks sizes it from the RAM available at start-up (auto_host_kv_blocks), 0: none.
  int32_t host_kv_blocks = kAutoHostKvBlocks;
  KvType kv_type = kDefaultKvType;  // --kv-type
  std::string profile_cache;    // "" or a JSON file caching the --tbt-slo profile (keyed by model + machine + SLO)
  bool progress = true;         // progress bar while profiling
  // Output-length predictor [S3] (empty spec: none) and exact allocation's padding.
  PredictorFlags predictor = [] {
    PredictorFlags f;
    f.retrain = true;  // serve retrains a trained file in the background by default
    return f;
  }();
  std::optional<double> padding;  // unset: the policy's default
  int threads = 0;             // 0: all cores
  // Conversations (docs/pensieve.md): histories are kept for every policy; their
  // KV under a stateful policy (pensieve, pensieve-gpu, seer) or with prefix reuse,
  // on by default as in vLLM and SGLang (per tenant: docs/security.md).
  bool prefix_reuse = true;
  int32_t max_conversations = 1024;
  int32_t max_conversations_per_tenant = 0;  // 0: the shared cap only
  double conversation_ttl_s = 3600;
  // Cost(l) of the eviction value: "profile" (the backend's measured time of
  // recomputing a chunk at position l, timed at start-up) or "analytic" (l + 6 d_model).
  std::string chunk_cost = "profile";
  uint64_t seed = 0x5eed;
  std::string iteration_log;  // "" or a file for one JSON line per iteration (engine/iteration_log.h)
  // The shared KV tier below the host tier (docs/deploy.md): "" or redis://HOST:PORT.
  std::string shared_kv;
  double shared_kv_ttl_s = 3600;     // idle seconds before Redis forgets a conversation
  int64_t shared_kv_max_bytes = 0;   // cap on the K/V bytes this replica keeps written (0: none)
  int32_t shared_kv_timeout_ms = 500;
  bool shared_kv_write_through = true;  // every finished turn's K/V (false: only what the host tier drops)
  std::function<void(double)> shared_kv_latency;  // observes each Redis round trip (I/O thread)
};

inline constexpr int64_t kDefaultKvMemory = int64_t{1} << 30;

class ServingStack {
 public:
  // Throws seer::Error naming the file or flag when something cannot be built.
  explicit ServingStack(const ServingConfig& config);
  ~ServingStack();
  ServingStack(const ServingStack&) = delete;
  ServingStack& operator=(const ServingStack&) = delete;

  Engine& engine() { return stack_->engine(); }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  const ModelInfo& model_info() const { return info_; }
  const ModelConfig& model_config() const { return model_->config(); }
  const KvManager& kv() const { return stack_->kv(); }
  const LengthPredictor* predictor() const { return stack_->predictor(); }
  // The predictor's length buckets (to score its accuracy); nullopt without one.
  std::optional<LengthBuckets> predictor_buckets() const { return predictor_buckets_; }
  // Tokens per iteration the scheduler may plan (token-budgeted policies, e.g. sarathi).
  int32_t token_budget() const { return token_budget_; }
  // The (position, seconds) points Cost(l) was profiled at; empty when it is analytic
  // or no cache eviction ranks by it.
  const std::vector<std::pair<int32_t, double>>& chunk_cost_points() const { return chunk_cost_points_; }
  const Scheduler& scheduler() const { return stack_->scheduler(); }
  // The conversation / prefix cache the scheduler owns (every policy has one here:
  // histories at least).
  const ConversationCache& cache() const { return *scheduler().conversations().cache(); }
  // The shared KV tier (nullptr without --shared-kv).
  RedisKvStore* shared_kv() { return shared_kv_.get(); }
  std::string summary() const;  // one line for the start-up log
  // How the host tier was sized ("" when given explicitly), for the start-up log.
  const std::string& host_tier_reason() const { return host_tier_reason_; }

 private:
  // Cost(l) for the conversation cache's eviction value (config_.chunk_cost).
  ChunkCostFn chunk_cost(int32_t max_model_len, bool cache_keeps_kv);
  IterationTimeFn measured_iteration_time(int32_t max_model_len, const SchedulerConfig& sc);

  ServingConfig config_;
  std::unique_ptr<ModelFile> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<ModelExecutor> executor_;
  std::unique_ptr<RedisKvStore> shared_kv_;  // reads backend_; outlives the scheduler's cache, which points at it
  std::optional<LengthBuckets> predictor_buckets_;
  WallClock clock_;
  std::unique_ptr<IterationLog> iteration_log_;  // outlives the engine, which points at it
  std::unique_ptr<EngineStack> stack_;
  ModelInfo info_;
  int32_t token_budget_ = 0;
  std::vector<std::pair<int32_t, double>> chunk_cost_points_;
  std::string host_tier_reason_;
};

}  // namespace seer::server
