#include "server/serving_stack.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "backend/cpu_backend.h"
#include "common/error.h"
#include "engine/draft_proposer.h"
#include "kernels/kernel_level.h"
#include "model/kv_type.h"
#include "kv/chunk_cost.h"
#include "runtime/chunk_cost_profile.h"
#include "runtime/model_draft_proposer.h"
#include "model/model_fingerprint.h"
#include "server/backend_profile.h"
#include "server/host_tier_size.h"
#include "server/tool_formats/registry.h"

namespace seer::server {

namespace {

std::unique_ptr<Tokenizer> load_tokenizer(const ModelFile& model, const std::string& tokenizer_path) {
  if (!tokenizer_path.empty()) return tokenizer_from_llama2c(tokenizer_path, model.config().vocab_size);
  if (model.gguf()) return tokenizer_from_gguf(*model.gguf());
  fail("{} is a llama2.c checkpoint: give its tokenizer with --tokenizer tokenizer.bin", model.path());
}

// Served requests carry no true length, so neither the oracle nor the noisy oracle
// can run here: refused at start-up rather than with a 400 for every request.
std::unique_ptr<LengthPredictor> make_serving_predictor(const PredictorFlags& flags, int32_t max_model_len) {
  if (flags.spec == "oracle" || flags.spec.rfind("noisy:", 0) == 0)
    fail("--predictor {} needs the true output lengths of a trace and works only in `seer sim`; serve with a "
         "predictor file from `seer predict train`", flags.spec);
  return make_predictor_from_flags(flags, max_model_len);
}

// The shared tier restores K/V onto the host tier (ConversationCache::restore_from_shared):
// without one, every restore would fail, so --shared-kv is refused up front.
void require_host_tier_for_shared_kv(const ServingConfig& config) {
  if (config.shared_kv.empty()) return;
  const PolicyInfo& info = policy_info(config.policy);
  if (!info.caches_conversations || !info.cache_host_tier) {
    std::string names;
    for (const PolicyInfo& p : scheduler_policies())
      if (p.caches_conversations && p.cache_host_tier) names += (names.empty() ? "" : ", ") + p.name;
    fail("--shared-kv restores K/V onto the conversation cache's host tier, which --policy {} does not have: use a "
         "policy that has one ({}) with --swap-blocks N",
         config.policy, names);
  }
  if (config.host_kv_blocks == 0)
    fail("--shared-kv restores K/V onto the host tier, and --swap-blocks 0 leaves none: give --swap-blocks auto or N "
         "(host-tier KV blocks, e.g. --swap-blocks 2048)");
}

// The TBT SLO the token budget is derived from (0: none, the policy's fixed budget).
double tbt_slo_for(const ServingConfig& config) {
  if (config.tbt_slo_s) return *config.tbt_slo_s;
  const PolicyInfo& info = policy_info(config.policy);
  return info.uses_token_budget && info.default_token_budget == 0 && config.token_budget == 0 ? kDefaultTbtSlo : 0;
}

std::unique_ptr<RedisKvStore> make_shared_kv(const ServingConfig& config, const ModelFile& model, Backend& backend) {
  if (!(config.shared_kv_ttl_s >= 1)) fail("--shared-kv-ttl must be >= 1 second (got {})", config.shared_kv_ttl_s);
  if (config.shared_kv_max_bytes < 0) fail("--shared-kv-max-bytes must be >= 0");
  if (config.shared_kv_timeout_ms <= 0) fail("--shared-kv-timeout-ms must be > 0 (got {})", config.shared_kv_timeout_ms);
  RedisKvStoreOptions o;
  o.endpoint = parse_redis_url(config.shared_kv, "--shared-kv");
  o.fingerprint = model_fingerprint(model, config.kv_type, backend.block_size());
  o.block_size = backend.block_size();
  o.block_bytes = static_cast<int64_t>(backend.kv_block_bytes());
  o.chunk_tokens = config.chunk_tokens;
  o.limits = {config.shared_kv_max_bytes, config.shared_kv_ttl_s};
  o.timeout = std::chrono::milliseconds(config.shared_kv_timeout_ms);
  o.observe_latency = config.shared_kv_latency;
  KvBlockAccess access;
  access.read = [&backend](KvTier t, int32_t block, char* dst) {
    backend.read_kv_block(t == KvTier::Host, block, dst);
  };
  access.write_host = [&backend](int32_t block, const char* src) { backend.write_host_kv_block(block, src); };
  std::fprintf(stderr, "seer serve: shared KV tier at %s (model fingerprint %016llx, TTL %.0f s%s)\n",
               o.endpoint.text().c_str(), static_cast<unsigned long long>(o.fingerprint), o.limits.ttl_s,
               o.limits.max_bytes > 0 ? fmt::format(", cap {} bytes", o.limits.max_bytes).c_str() : "");
  return std::make_unique<RedisKvStore>(std::move(o), std::move(access));
}

// The speculative-decoding drafter the flags ask for (null: none). Made before the
// start-up profiles so that a draft model that cannot draft fails fast.
std::unique_ptr<DraftProposer> make_drafter(const ServingConfig& config, const ModelFile& target,
                                            int32_t max_model_len) {
  if (config.draft_model.empty())
    return config.speculate == "ngram" ? std::make_unique<NgramDraftProposer>(config.draft_tokens) : nullptr;
  if (config.speculate == "ngram") fail("--draft-model and --speculate ngram exclude each other (one drafter per server)");
  ModelDraftOptions o{.max_tokens = config.draft_tokens, .slots = config.draft_slots, .slot_tokens = max_model_len,
                      .threads = config.threads, .kv_type = config.kv_type};
  auto drafter = ModelDraftProposer::open(config.draft_model, target, o);
  std::fprintf(stderr, "seer serve: draft model %s: K/V %.1f MiB (%d requests x %d tokens), on the engine thread "
               "between steps\n", config.draft_model.c_str(), static_cast<double>(drafter->kv_bytes()) / (1 << 20),
               drafter->slots(), drafter->slot_tokens());
  return drafter;
}

}  // namespace

IterationTimeFn ServingStack::measured_iteration_time(int32_t max_model_len, const SchedulerConfig& sc) {
  BackendProfileOptions po;
  po.tile = sc.tile;
  po.max_tokens = sc.max_token_budget;
  po.max_model_len = max_model_len;
  po.max_batch_size = sc.max_batch_size;
  po.slo_s = sc.tbt_slo_s;
  po.progress = config_.progress;
  const ModelConfig& mc = model_->config();
  // Another kernel level (SEER_KERNEL_LEVEL) times the iterations differently.
  std::fprintf(stderr, "seer serve: cpu %s\n", cpu_summary_line().c_str());
  const std::string key =
      profile_cache_key(config_.model_path,
                        fmt::format("{}x{}x{}@{}", mc.arch, mc.n_layers, mc.dim, qisa_name(active_kernel_level())),
                        static_cast<CpuBackend&>(*backend_).threads(), po,
                        backend_->device_blocks() * backend_->block_size());
  IterationProfile profile;
  if (!config_.profile_cache.empty()) {
    CachedProfile cached = load_cached_profile(config_.profile_cache, key);
    if (!cached.problem.empty())
      std::fprintf(stderr, "seer serve: warning: --profile-cache %s: %s; profiling again and rewriting it\n",
                   config_.profile_cache.c_str(), cached.problem.c_str());
    profile = std::move(cached.profile);
  }
  if (!profile.empty()) {
    std::fprintf(stderr, "seer serve: iteration-time profile from %s\n", config_.profile_cache.c_str());
  } else {
    profile = profile_backend(*backend_, po);
    if (!config_.profile_cache.empty()) {
      try {
        store_cached_profile(config_.profile_cache, key, profile);
      } catch (const Error& e) {  // a cache: serving goes on, the next start profiles again
        std::fprintf(stderr, "seer serve: warning: %s\n", e.what());
      }
    }
  }
  std::string pts;
  for (const auto& [t, sec] : profile.points()) pts += fmt::format(" {}:{:.2f}ms", t, sec * 1e3);
  std::fprintf(stderr, "seer serve: iteration time vs tokens (worst context):%s\n", pts.c_str());
  return [profile](int32_t tokens) { return profile(tokens); };
}

ChunkCostFn ServingStack::chunk_cost(int32_t max_model_len, bool cache_keeps_kv) {
  if (config_.chunk_cost == "analytic" || !cache_keeps_kv || parse_eviction_policy(config_.eviction) != EvictionPolicy::Pensieve) {
    // Attention reads l positions, the linear layers cost about 6 d_model positions'
    // worth (12 d^2 weights vs 2 d per position).
    const double linear = 6.0 * model_->config().dim;
    return [linear](int32_t l) { return static_cast<double>(l) + linear; };
  }
  // Measured while the device pool is still empty, on the chunk the cache evicts
  // (rounded up to whole blocks, as the cache does).
  ChunkCostProfileOptions po;
  const int32_t bs = backend_->block_size();
  po.chunk_tokens = (config_.chunk_tokens + bs - 1) / bs * bs;
  po.max_context = max_model_len;
  chunk_cost_points_ = profile_chunk_cost(*backend_, po);
  std::string pts;
  for (const auto& [l, sec] : chunk_cost_points_) pts += fmt::format(" {}:{:.2f}ms", l, sec * 1e3);
  std::fprintf(stderr, "seer serve: eviction Cost(l) of a %d-token chunk at position l, measured:%s\n",
               po.chunk_tokens, pts.c_str());
  return interpolated_chunk_cost(chunk_cost_points_);
}

ServingStack::ServingStack(const ServingConfig& config) : config_(config) {
  check_stack_knobs(config);
  if (config.kv_blocks < 0 || config.kv_memory_bytes < 0 || config.host_kv_blocks < kAutoHostKvBlocks)
    fail("--kv-blocks, --kv-memory and --swap-blocks must be >= 0");
  if (config.chunk_cost != "profile" && config.chunk_cost != "analytic")
    fail("--chunk-cost must be profile or analytic, got '{}'", config.chunk_cost);
  require_predictor_for(config.policy, config.predictor.enabled());  // before the (slow) model load
  require_host_tier_for_shared_kv(config);
  model_ = ModelFile::open(config.model_path);
  const ModelConfig& mc = model_->config();
  tokenizer_ = load_tokenizer(*model_, config.tokenizer_path);

  const int32_t max_model_len = config.max_model_len > 0 ? std::min(config.max_model_len, mc.context_length)
                                                         : mc.context_length;
  std::unique_ptr<DraftProposer> drafter = make_drafter(config, *model_, max_model_len);
  // Size the device pool: explicit blocks, or bytes (default 1 GiB) but never less
  // than one request of the full context.
  CpuBackendOptions bo;
  bo.kv.block_size = config.block_size;
  bo.kv.type = config.kv_type;
  bo.threads = config.threads;
  // Sliding-window layers get block groups of their own, trimmed behind the window.
  std::vector<bool> local(static_cast<size_t>(mc.n_layers));
  for (int l = 0; l < mc.n_layers; ++l) local[static_cast<size_t>(l)] = mc.layer_is_local(l);
  bo.kv.layer_groups = kv_layer_groups(local, config.swa_kv == "window");
  const KvLayerGroups& groups = bo.kv.layer_groups;
  const auto bytes_per_token = static_cast<int64_t>(kv_bytes_per_token(mc, config.kv_type));
  const int64_t bytes_per_block = groups.block_share(bytes_per_token) * config.block_size;
  const int32_t context_blocks = groups.groups * ((max_model_len + config.block_size - 1) / config.block_size);
  if (config.kv_blocks > 0) {
    bo.kv.device_blocks = config.kv_blocks;
  } else {
    int64_t bytes = config.kv_memory_bytes > 0 ? config.kv_memory_bytes : kDefaultKvMemory;
    int64_t blocks = std::max<int64_t>(bytes / std::max<int64_t>(bytes_per_block, 1), 1);
    if (config.kv_memory_bytes == 0) blocks = std::max<int64_t>(blocks, context_blocks);
    bo.kv.device_blocks = static_cast<int>(std::min<int64_t>(blocks, 1 << 24));
  }
  bo.kv.host_blocks = config.host_kv_blocks;
  if (config.host_kv_blocks == kAutoHostKvBlocks) {
    HostTierSize host = auto_host_tier(bytes_per_block, bo.kv.device_blocks * bytes_per_block, available_memory_bytes());
    bo.kv.host_blocks = host.blocks;
    host_tier_reason_ = std::move(host.reason);
  }
  backend_ = make_cpu_backend(*model_, bo);
  warm_up_backend(*backend_, max_model_len);
  executor_ = std::make_unique<ModelExecutor>(*backend_, config.seed);

  const KvConfig kc = backend_->kv_config();
  EngineStackParts parts;
  parts.kv = kc;
  SchedulerConfig& sc = parts.scheduler;
  static_cast<SchedulerKnobs&>(sc) = config;
  sc.tbt_slo_s = tbt_slo_for(config);
  if (sc.preemption == PreemptionMode::Swap && kc.host_blocks == 0)
    fail("--preemption swap needs a host tier: give --swap-blocks auto or N");
  check_padding_flag(config.padding);
  sc.padding = config.padding;
  if (sc.tbt_slo_s > 0 && sc.token_budget == 0) sc.iteration_time = measured_iteration_time(max_model_len, sc);
  token_budget_ = resolve_token_budget(sc);
  if (sc.iteration_time) {
    const double took = sc.iteration_time(token_budget_);
    const char* whence = config.tbt_slo_s ? "" : " (the default target; --tbt-slo S sets another, 0 none)";
    if (took <= sc.tbt_slo_s)
      std::fprintf(stderr, "seer serve: TBT SLO %.3f s%s -> token budget %d (largest multiple of %d whose iteration "
                   "takes <= the SLO; %.2f ms measured)\n", sc.tbt_slo_s, whence, token_budget_, sc.tile, took * 1e3);
    else
      std::fprintf(stderr, "seer serve: warning: TBT SLO %.3f s%s is out of reach on this machine: even the smallest "
                   "token budget takes %.2f ms at the longest context, so TBT under load will exceed it -> token "
                   "budget %d\n", sc.tbt_slo_s, whence, took * 1e3, token_budget_);
  }
  parts.predictor = make_serving_predictor(config.predictor, max_model_len);
  if (parts.predictor) predictor_buckets_ = seer::predictor_buckets(config.predictor, max_model_len);

  ConversationCacheSetup& cs = parts.cache;
  cs.chunk_tokens = config.chunk_tokens;
  cs.swap_out_threshold = config.swap_out_threshold;
  cs.eviction = config.eviction;
  cs.histories_when_stateless = true;  // a conversation id continues under any policy
  cs.prefix_reuse = config.prefix_reuse;
  cs.max_conversations = config.max_conversations;
  cs.max_conversations_per_tenant = config.max_conversations_per_tenant;
  cs.idle_expiry_s = config.conversation_ttl_s;
  const PolicyInfo& info = policy_info(config.policy);
  cs.chunk_cost = chunk_cost(max_model_len, info.caches_conversations || config.prefix_reuse);
  if (!config.shared_kv.empty()) {
    shared_kv_ = make_shared_kv(config, *model_, *backend_);
    cs.shared = shared_kv_.get();
    cs.shared_write_through = config.shared_kv_write_through;
  }

  EngineConfig& ec = parts.engine;
  ec.max_model_len = max_model_len;
  ec.eos_ids = tokenizer_->end_of_generation_ids();
  ec.vocab_size = mc.vocab_size;
  parts.drafter = std::move(drafter);
  ec.speculation_gate.enabled = config.speculate_gate == "adaptive";
  stack_ = std::make_unique<EngineStack>(std::move(parts), *executor_, clock_);
  if (!config.iteration_log.empty()) {
    iteration_log_ = std::make_unique<IterationLog>(config.iteration_log, kc.bytes_per_block);
    stack_->engine().add_observer(iteration_log_.get());
  }

  info_.served_name = !config.served_name.empty() ? config.served_name
                                                  : std::filesystem::path(config.model_path).stem().string();
  info_.tokenizer = tokenizer_.get();
  info_.chat_template = load_chat_template(config.chat_template_file, mc.chat_template, *tokenizer_);
  info_.max_model_len = max_model_len;
  info_.kv_capacity_tokens = kc.tokens_for(kc.device_blocks);  // see max_request_tokens()
  info_.vocab_size = std::min(mc.vocab_size, tokenizer_->vocab_size());
  info_.grammars = make_grammar_cache(*tokenizer_);
  info_.reasoning = make_reasoning_config(info_.chat_template, *tokenizer_, parse_reasoning_format(config.reasoning_format),
                                          config.reasoning_budget);
  info_.reasoning.memory_entries = static_cast<size_t>(config.reasoning_memory);
  info_.tool_format = &tool_format_of(info_.chat_template);
  if (!config.tool_call_format.empty()) {
    info_.tool_format = tool_format_named(config.tool_call_format);
    if (!info_.tool_format) fail("--tool-call-format: no format is called '{}'", config.tool_call_format);
  }
}

ServingStack::~ServingStack() = default;

std::string ServingStack::summary() const {
  const ModelConfig& mc = model_->config();
  const KvConfig& kv = stack_->kv().config();
  const DraftProposer* drafter = stack_->drafter();
  return fmt::format(
      "model {} ({} layers, dim {}, vocab {}, context {}), tokenizer {}, chat template {}, tool calls {}, policy {}, KV {} "
      "blocks x {} tokens{} ({:.1f} MiB, {}){}, token budget {}{}",
      info_.served_name, mc.n_layers, mc.dim, mc.vocab_size, info_.max_model_len, tokenizer_->type_name(),
      info_.chat_template.describe(), info_.tool_format->name(), config_.policy,
      kv.device_blocks, kv.block_size,
      kv.groups > 1 ? fmt::format(" in {} layer groups (window {}: --swa-kv window)", kv.groups, kv.window) : "",
      static_cast<double>(kv.device_blocks) * kv.bytes_per_block / (1 << 20), kv_type_name(config_.kv_type),
      kv.host_blocks
          ? fmt::format(", host tier {} blocks ({:.1f} MiB{}{})", kv.host_blocks,
                        static_cast<double>(kv.host_blocks) * kv.bytes_per_block / (1 << 20),
                        host_tier_reason_.empty() ? "" : ", ", host_tier_reason_)
      : cache().config().host_tier
          ? fmt::format(", no host tier (conversations stay on the device only{})",
                        host_tier_reason_.empty() ? ": give --swap-blocks auto or N" : ": " + host_tier_reason_)
          : "",
      token_budget_, predictor() ? fmt::format(", length predictor {}", predictor()->name()) : "") +
         (drafter ? fmt::format(", speculative decoding {} ({} draft tokens)", drafter->name(), drafter->max_tokens())
                   : "");
}

}  // namespace seer::server
