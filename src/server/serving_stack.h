#pragma once
// Everything `seer serve` runs on, built from a model file: model, tokenizer, CPU
// backend with its KV storage, the KV manager over the same block pool, the
// scheduler policy, the ModelExecutor and the Engine on the wall clock.
#include <cstdint>
#include <memory>
#include <string>

#include "backend/backend.h"
#include "common/clock.h"
#include "engine/engine.h"
#include "engine/model_executor.h"
#include "kv/kv_manager.h"
#include "model/model_file.h"
#include "predict/predictor_flags.h"
#include "scheduler/scheduler.h"
#include "server/request_builder.h"
#include "tokenizer/tokenizer.h"

namespace seer::server {

struct ServingConfig {
  std::string model_path;
  std::string tokenizer_path;  // llama2.c checkpoints keep the tokenizer apart
  std::string served_name;     // "" = the model file's name without extension
  std::string policy = "vllm";
  int32_t block_size = 16;
  int32_t kv_blocks = 0;       // device KV blocks; 0: from kv_memory_bytes
  int64_t kv_memory_bytes = 0; // 0: kDefaultKvMemory, at least one full context
  int32_t host_kv_blocks = 0;  // host tier for swap preemption (0: none)
  int32_t max_model_len = 0;   // 0: the model's context length
  int32_t max_batch_size = 256;
  int32_t token_budget = 0;    // sarathi's τ (0: the policy's default)
  double tbt_slo_s = 0;
  std::string preemption = "recompute";  // or "swap"
  // Output-length predictor [S3] (empty spec: none) and exact allocation's padding.
  PredictorFlags predictor;
  double padding = 0.1;
  int threads = 0;             // 0: all cores
  uint64_t seed = 0x5eed;
};

inline constexpr int64_t kDefaultKvMemory = int64_t{1} << 30;

class ServingStack {
 public:
  // Throws seer::Error naming the file or flag when something cannot be built.
  explicit ServingStack(const ServingConfig& config);
  ~ServingStack();

  Engine& engine() { return *engine_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  const ModelInfo& model_info() const { return info_; }
  const ModelConfig& model_config() const { return model_->config(); }
  const KvManager& kv() const { return *kv_; }
  const LengthPredictor* predictor() const { return predictor_.get(); }
  std::string summary() const;  // one line for the start-up log

 private:
  ServingConfig config_;
  std::unique_ptr<ModelFile> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<ModelExecutor> executor_;
  std::unique_ptr<KvManager> kv_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<LengthPredictor> predictor_;  // outlives engine_, which points at it
  WallClock clock_;
  std::unique_ptr<Engine> engine_;
  ModelInfo info_;
};

}  // namespace seer::server
