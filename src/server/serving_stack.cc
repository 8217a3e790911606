#include "server/serving_stack.h"

#include <algorithm>
#include <filesystem>

#include "common/error.h"

namespace seer::server {

namespace {

std::unique_ptr<Tokenizer> load_tokenizer(const ModelFile& model, const std::string& tokenizer_path) {
  if (!tokenizer_path.empty()) return tokenizer_from_llama2c(tokenizer_path, model.config().vocab_size);
  if (model.gguf()) return tokenizer_from_gguf(*model.gguf());
  fail("{} is a llama2.c checkpoint: give its tokenizer with --tokenizer tokenizer.bin", model.path());
}

// Served requests carry no true length, so the oracle cannot run here.
std::unique_ptr<LengthPredictor> make_serving_predictor(const PredictorFlags& flags, int32_t max_model_len) {
  if (flags.spec == "oracle")
    fail("--predictor oracle needs the true output lengths of a trace and works only in `seer sim`; serve with a "
         "predictor file from `seer predict train`");
  return make_predictor_from_flags(flags, max_model_len);
}

}  // namespace

ServingStack::ServingStack(const ServingConfig& config) : config_(config) {
  if (config.block_size < 1 || config.block_size > 1024) fail("--block-size must be in [1, 1024]");
  if (config.kv_blocks < 0 || config.kv_memory_bytes < 0 || config.host_kv_blocks < 0)
    fail("--kv-blocks, --kv-memory and --swap-blocks must be >= 0");
  require_predictor_for(config.policy, config.predictor);  // before the (slow) model load
  model_ = ModelFile::open(config.model_path);
  const ModelConfig& mc = model_->config();
  tokenizer_ = load_tokenizer(*model_, config.tokenizer_path);

  const int32_t max_model_len = config.max_model_len > 0 ? std::min(config.max_model_len, mc.context_length)
                                                         : mc.context_length;
  // Size the device pool: explicit blocks, or bytes (default 1 GiB) but never less
  // than one request of the full context.
  CpuBackendOptions bo;
  bo.kv.block_size = config.block_size;
  bo.kv.host_blocks = config.host_kv_blocks;
  bo.threads = config.threads;
  const int64_t bytes_per_token = 2LL * mc.n_layers * mc.n_kv_heads * mc.head_dim * sizeof(float);
  const int64_t bytes_per_block = bytes_per_token * config.block_size;
  const int32_t context_blocks = (max_model_len + config.block_size - 1) / config.block_size;
  if (config.kv_blocks > 0) {
    bo.kv.device_blocks = config.kv_blocks;
  } else {
    int64_t bytes = config.kv_memory_bytes > 0 ? config.kv_memory_bytes : kDefaultKvMemory;
    int64_t blocks = std::max<int64_t>(bytes / std::max<int64_t>(bytes_per_block, 1), 1);
    if (config.kv_memory_bytes == 0) blocks = std::max<int64_t>(blocks, context_blocks);
    bo.kv.device_blocks = static_cast<int>(std::min<int64_t>(blocks, 1 << 24));
  }
  backend_ = make_cpu_backend(*model_, bo);
  executor_ = std::make_unique<ModelExecutor>(*backend_, config.seed);

  KvConfig kc;
  kc.block_size = backend_->block_size();
  kc.device_blocks = backend_->device_blocks();
  kc.host_blocks = backend_->host_blocks();
  kc.bytes_per_block = static_cast<int64_t>(backend_->kv_bytes_per_token()) * kc.block_size;
  kv_ = std::make_unique<KvManager>(kc);

  SchedulerConfig sc;
  sc.policy = config.policy;
  sc.max_batch_size = config.max_batch_size;
  sc.token_budget = config.token_budget;
  sc.tbt_slo_s = config.tbt_slo_s;
  if (config.preemption == "swap") sc.preemption = PreemptionMode::Swap;
  else if (config.preemption != "recompute") fail("--preemption must be recompute or swap, got '{}'", config.preemption);
  if (sc.preemption == PreemptionMode::Swap && kc.host_blocks == 0)
    fail("--preemption swap needs a host tier: give --swap-blocks N");
  if (!(config.padding >= 0 && config.padding <= 10)) fail("--padding must be in [0, 10], got {}", config.padding);
  sc.padding = config.padding;
  scheduler_ = make_scheduler(sc);
  predictor_ = make_serving_predictor(config.predictor, max_model_len);

  EngineConfig ec;
  ec.max_model_len = max_model_len;
  ec.eos_ids = tokenizer_->end_of_generation_ids();
  ec.vocab_size = mc.vocab_size;
  ec.predictor = predictor_.get();
  engine_ = std::make_unique<Engine>(*scheduler_, *executor_, *kv_, clock_, ec);

  info_.served_name = !config.served_name.empty() ? config.served_name
                                                  : std::filesystem::path(config.model_path).stem().string();
  info_.tokenizer = tokenizer_.get();
  info_.chat_template = ChatTemplate::detect(mc.chat_template);
  info_.max_model_len = max_model_len;
  info_.kv_capacity_tokens = kc.device_blocks * kc.block_size;
  info_.vocab_size = std::min(mc.vocab_size, tokenizer_->vocab_size());
}

ServingStack::~ServingStack() = default;

std::string ServingStack::summary() const {
  const ModelConfig& mc = model_->config();
  return fmt::format(
      "model {} ({} layers, dim {}, vocab {}, context {}), tokenizer {}, chat template {}{}, policy {}, KV {} "
      "blocks x {} tokens ({:.1f} MiB){}{}",
      info_.served_name, mc.n_layers, mc.dim, mc.vocab_size, info_.max_model_len, tokenizer_->type_name(),
      info_.chat_template.name(), info_.chat_template.fallback() ? " (fallback)" : "", config_.policy,
      kv_->num_blocks(), kv_->block_size(),
      static_cast<double>(kv_->num_blocks()) * kv_->bytes_per_block() / (1 << 20),
      kv_->num_blocks(KvTier::Host) ? fmt::format(", host tier {} blocks", kv_->num_blocks(KvTier::Host)) : "",
      predictor_ ? fmt::format(", length predictor {}", predictor_->name()) : "");
}

}  // namespace seer::server
