#include "model/model_fingerprint.h"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

namespace seer {

namespace {

class Hasher {
 public:
  void bytes(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) {
      h_ ^= p[i];
      h_ *= 0x100000001b3ull;
    }
  }
  void text(std::string_view s) {
    bytes(s.data(), s.size());
    bytes("\0", 1);
  }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 0xcbf29ce484222325ull;
};

void tensor(Hasher& h, const WeightTensor& t) {
  if (!t.present()) return;
  h.text(fmt::format("{}|{}|{}x{}|{}", t.name, static_cast<int>(t.type), t.rows, t.cols, t.bytes));
  constexpr size_t kSample = 4096;
  const auto* p = static_cast<const char*>(t.data);
  const size_t n = std::min(kSample, t.bytes);
  h.bytes(p, n);
  if (t.bytes > 3 * kSample) {
    h.bytes(p + t.bytes / 2, kSample);
    h.bytes(p + t.bytes - kSample, kSample);
  }
}

}  // namespace

uint64_t model_fingerprint(const ModelFile& model, KvType kv_type, int32_t block_size) {
  const ModelConfig& c = model.config();
  Hasher h;
  h.text(fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", c.arch, c.n_layers, c.dim, c.n_heads, c.n_kv_heads,
                     c.head_dim, c.ffn_dim, c.vocab_size, c.rope_base, c.rope_scaling.type, c.rope_scaling.factor,
                     c.rms_eps, c.rope_neox, c.qkv_bias));
  h.text(fmt::format("kv {} block {}", kv_type_name(kv_type), block_size));
  const ModelWeights& w = model.weights();
  tensor(h, w.token_embd);
  tensor(h, w.output_norm);
  tensor(h, w.output);
  for (const LayerWeights& l : w.layers)
    for (const WeightTensor* t : {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.wo, &l.bq, &l.bk, &l.bv, &l.ffn_norm,
                                  &l.w_gate, &l.w_up, &l.w_down})
      tensor(h, *t);
  return h.value();
}

}  // namespace seer
