#pragma once
// The mixture-of-experts FFN of one layer (qwen3moe, Mixtral-style llama): a router
// scores the experts per token, the top n_used by softmax probability run, their
// outputs summed with the probabilities renormalised over the chosen ones. Tokens
// are grouped by expert so each expert's matrices are read once per batch, as GEMMs
// over its tokens.
#include <cstdint>
#include <vector>

#include "kernels/matmul.h"
#include "model/model_file.h"

namespace seer {

class MoeFfn {
 public:
  MoeFfn(int dim, int ffn_dim, int n_experts, int n_used);

  // xn: n x dim (the normalised FFN input); out: n x dim, overwritten.
  void run(MatmulContext& mm, const LayerWeights& w, const float* xn, int64_t n, float* out);

  // Experts chosen for each token of the last run (n x n_used, best first) and their
  // weights: tests and the cost model's measurements read them.
  const std::vector<int32_t>& chosen() const { return chosen_; }
  const std::vector<float>& chosen_weights() const { return chosen_w_; }

 private:
  void route(const float* logits, int64_t n);

  int dim_, ffn_dim_, n_experts_, n_used_;
  std::vector<float> logits_, gathered_, gate_, up_, down_;
  std::vector<int32_t> chosen_;
  std::vector<float> chosen_w_;
  std::vector<std::vector<std::pair<int32_t, float>>> tokens_of_;  // per expert: (token, weight)
};

}  // namespace seer
