#include "sampling/sampling_params.h"

#include <cmath>

#include "common/error.h"

namespace seer {

namespace {
constexpr size_t kMaxStopStrings = 64;
constexpr size_t kMaxStopBytes = 1024;
constexpr int kMaxTopLogprobs = 20;  // OpenAI's and vLLM's default limit
}  // namespace

void SamplingParams::validate() const {
  if (!std::isfinite(temperature) || temperature < 0.0f)
    fail("temperature must be a finite number >= 0 (0 means greedy), got {}", temperature);
  if (!(top_p > 0.0f && top_p <= 1.0f)) fail("top_p must be in (0, 1], got {}", top_p);
  if (top_k < 0) fail("top_k must be >= 0 (0 disables it), got {}", top_k);
  if (!(min_p >= 0.0f && min_p <= 1.0f)) fail("min_p must be in [0, 1], got {}", min_p);
  if (!std::isfinite(repetition_penalty) || repetition_penalty <= 0.0f)
    fail("repetition_penalty must be > 0 (1 disables it), got {}", repetition_penalty);
  if (!(frequency_penalty >= -2.0f && frequency_penalty <= 2.0f))
    fail("frequency_penalty must be in [-2, 2], got {}", frequency_penalty);
  if (!(presence_penalty >= -2.0f && presence_penalty <= 2.0f))
    fail("presence_penalty must be in [-2, 2], got {}", presence_penalty);
  if (top_logprobs < 0 || top_logprobs > kMaxTopLogprobs)
    fail("top_logprobs must be in [0, {}], got {}", kMaxTopLogprobs, top_logprobs);
  if (max_tokens < 1) fail("max_tokens must be >= 1, got {}", max_tokens);
  for (const auto& [token, bias] : logit_bias) {
    if (token < 0) fail("logit_bias: token id {} must be >= 0", token);
    if (!(bias >= -100.0f && bias <= 100.0f)) fail("logit_bias[{}] must be in [-100, 100], got {}", token, bias);
  }
  if (stop.size() > kMaxStopStrings) fail("stop: at most {} strings allowed, got {}", kMaxStopStrings, stop.size());
  for (size_t i = 0; i < stop.size(); ++i) {
    if (stop[i].empty()) fail("stop[{}] must not be empty", i);
    if (stop[i].size() > kMaxStopBytes) fail("stop[{}] is longer than {} bytes", i, kMaxStopBytes);
  }
}

}  // namespace seer
