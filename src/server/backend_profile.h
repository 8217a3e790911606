#pragma once
// One-time profiling of the real backend for an SLO-driven token budget
// (docs/architecture.md, "token budget"): iteration time against tokens per
// iteration, measured at the context lengths the KV pool can hold, the worst context
// kept per token count. The result can be cached in a JSON file keyed by model and
// machine so a restart reuses it.
#include <cstdint>
#include <string>

#include "backend/backend.h"
#include "scheduler/iteration_profile.h"

namespace seer::server {

struct BackendProfileOptions {
  int32_t tile = 64;              // token counts profiled are multiples of it
  int32_t max_tokens = 16384;     // largest token count worth profiling
  int32_t max_model_len = 0;      // longest context a request may reach
  int32_t max_batch_size = 256;   // sequences one iteration may hold
  double slo_s = 0;               // profiling stops past 2x the SLO (> 0)
  double time_limit_s = 5;        // ...or after this much wall time
  int repeats = 3;                // the median of this many runs per shape
  bool progress = true;
};

// Measures `backend` (whose KV pool must be empty: profiling overwrites blocks).
IterationProfile profile_backend(Backend& backend, const BackendProfileOptions& o);

// Runs one small prefill and one decode step so that the first request does not pay
// for paging in the weights and sizing the scratch buffers (the first served
// iteration was ~1.7x its steady-state time without it). The pool must be empty.
void warm_up_backend(Backend& backend, int32_t max_model_len);

// The cache key: model file (name, size, layers, dim), this machine (CPU model,
// compute threads) and the settings that shape the profile.
std::string profile_cache_key(const std::string& model_path, const std::string& model_shape, int threads,
                              const BackendProfileOptions& o, int32_t pool_tokens);

struct CachedProfile {
  IterationProfile profile;  // empty: no file, no entry for the key, or an unusable file
  // Why the file cannot be used ("" when it can or is absent): empty, not JSON, not a
  // seer profile cache, or not a regular file. The caller warns and profiles anew.
  std::string problem;
};

// The cached profile for `key` in `path`.
[[nodiscard]] CachedProfile load_cached_profile(const std::string& path, const std::string& key);
// Adds or replaces `key` in `path`, keeping the other keys of a usable file and
// replacing an unusable one. Written to a temporary file renamed over `path` (atomic).
// Throws seer::Error naming the file when it cannot be written (e.g. a directory is
// in its place).
void store_cached_profile(const std::string& path, const std::string& key, const IterationProfile& p);

}  // namespace seer::server
