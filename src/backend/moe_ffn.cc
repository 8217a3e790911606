#include "backend/moe_ffn.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/error.h"
#include "kernels/ops.h"

namespace seer {

MoeFfn::MoeFfn(int dim, int ffn_dim, int n_experts, int n_used)
    : dim_(dim), ffn_dim_(ffn_dim), n_experts_(n_experts), n_used_(n_used), tokens_of_(n_experts) {
  if (n_experts <= 0 || n_used <= 0 || n_used > n_experts)
    fail("mixture of experts: {} of {} experts per token is not valid", n_used, n_experts);
}

void MoeFfn::route(const float* logits, int64_t n) {
  chosen_.resize(static_cast<size_t>(n * n_used_));
  chosen_w_.resize(chosen_.size());
  for (auto& t : tokens_of_) t.clear();
  std::vector<float> p(static_cast<size_t>(n_experts_));
  std::vector<int32_t> order(static_cast<size_t>(n_experts_));
  for (int64_t t = 0; t < n; ++t) {
    std::copy(logits + t * n_experts_, logits + (t + 1) * n_experts_, p.begin());
    softmax_inplace(p.data(), n_experts_);
    std::iota(order.begin(), order.end(), 0);
    // Highest probability first; equal ones by expert index, so the choice is stable.
    std::partial_sort(order.begin(), order.begin() + n_used_, order.end(),
                      [&](int32_t a, int32_t b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
    float sum = 0;
    for (int k = 0; k < n_used_; ++k) sum += p[order[k]];
    sum = std::max(sum, 6.103515625e-5f);  // as llama.cpp: never divide by ~0
    for (int k = 0; k < n_used_; ++k) {
      const int32_t e = order[k];
      const float weight = p[e] / sum;
      chosen_[t * n_used_ + k] = e;
      chosen_w_[t * n_used_ + k] = weight;
      tokens_of_[e].emplace_back(static_cast<int32_t>(t), weight);
    }
  }
}

void MoeFfn::run(MatmulContext& mm, const LayerWeights& w, const float* xn, int64_t n, float* out) {
  logits_.resize(static_cast<size_t>(n * n_experts_));
  mm.run(xn, n, w.router, logits_.data());
  route(logits_.data(), n);
  std::fill(out, out + n * dim_, 0.0f);
  for (int e = 0; e < n_experts_; ++e) {
    const auto& toks = tokens_of_[e];
    if (toks.empty()) continue;
    const int64_t m = static_cast<int64_t>(toks.size());
    gathered_.resize(static_cast<size_t>(m * dim_));
    for (int64_t i = 0; i < m; ++i)
      std::copy(xn + toks[i].first * dim_, xn + (toks[i].first + 1) * dim_, gathered_.begin() + i * dim_);
    gate_.resize(static_cast<size_t>(m * ffn_dim_));
    up_.resize(gate_.size());
    down_.resize(static_cast<size_t>(m * dim_));
    const WeightTensor gate = expert_rows(w.gate_exps, n_experts_, e);
    const WeightTensor up = expert_rows(w.up_exps, n_experts_, e);
    const WeightTensor down = expert_rows(w.down_exps, n_experts_, e);
    const MatmulTarget targets[] = {{&gate, gate_.data()}, {&up, up_.data()}};
    mm.run(gathered_.data(), m, dim_, targets);
    silu_mul(gate_.data(), up_.data(), gate_.data(), m * ffn_dim_);
    mm.run(gate_.data(), m, down, down_.data());
    for (int64_t i = 0; i < m; ++i) {
      float* o = out + toks[i].first * dim_;
      const float* d = down_.data() + i * dim_;
      const float weight = toks[i].second;
      for (int j = 0; j < dim_; ++j) o[j] += weight * d[j];
    }
  }
}

}  // namespace seer
