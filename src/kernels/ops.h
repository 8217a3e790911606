#pragma once
// Element-wise and row-wise f32 operations of a Llama block.
#include <cstdint>
#include <vector>

#include "model/model_file.h"

namespace seer {

// y[r] = x[r] / sqrt(mean(x[r]^2) + eps) * w for n rows of d elements (y may be x).
void rmsnorm(const float* x, const float* w, float* y, int64_t n, int64_t d, float eps);

// h = silu(g) * u, element-wise (h may alias g or u).
void silu_mul(const float* g, const float* u, float* h, int64_t n);

// y += x
// h = gelu(g) * u with GELU's tanh approximation (Gemma's gated FFN).
void gelu_tanh_mul(const float* g, const float* u, float* h, int64_t n);
// x *= s.
void scale_inplace(float* x, int64_t n, float s);
// x = cap * tanh(x / cap) (Gemma 2 soft-capping).
void softcap_inplace(float* x, int64_t n, float cap);

void add_inplace(float* y, const float* x, int64_t n);

// x[i] = exp(x[i] - max) / sum, in place. Returns the sum of exponentials (before
// normalization) so callers can build a log-softmax: log p_i = x_i - max - log(sum).
float softmax_inplace(float* x, int64_t n);
// x[i] = exp(x[i] - shift) in place; returns the sum.
float exp_shifted_inplace(float* x, int64_t n, float shift);

// Embedding lookup: out[i] = table row ids[i] as f32. Throws seer::Error for ids
// outside the table.
void embed_rows(const WeightTensor& table, const int32_t* ids, int64_t n, float* out);

// Rotary position embedding of one head dimension layout.
class Rope {
 public:
  // neox: rotate (x[i], x[i + d/2]); otherwise adjacent pairs (x[2i], x[2i+1]).
  // linear_factor: positions are divided by it (RoPE "linear" scaling).
  // freq_divisors (rot_dim/2 values, optional): frequency i is divided by
  // freq_divisors[i] (Llama 3.x rope_freqs, Phi-3 LongRoPE factors).
  // rot_dim (0: head_dim): only the first rot_dim values of a head rotate (partial
  // rotary, Phi-4-mini), with frequencies base^(-2i/rot_dim).
  // mscale: cos and sin are multiplied by it (Phi-3 LongRoPE attention factor).
  Rope(int head_dim, double base, bool neox, double linear_factor = 1.0, const float* freq_divisors = nullptr,
       int rot_dim = 0, double mscale = 1.0);

  int head_dim() const { return head_dim_; }
  // cos/sin for one position: rot_dim/2 values each (at most head_dim/2).
  void angles(int32_t pos, float* cos_out, float* sin_out) const;
  // Rotates n_heads heads of head_dim values at x (contiguous) with precomputed
  // angles of one position.
  void apply(float* x, int n_heads, const float* cos_v, const float* sin_v) const;

 private:
  int head_dim_, rot_dim_;
  bool neox_;
  double pos_scale_, mscale_;
  std::vector<double> inv_freq_;
};

}  // namespace seer
