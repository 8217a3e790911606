#include "cli/model_loading.h"

#include <cstdint>
#include <vector>

#include "common/error.h"
#include "common/progress.h"

namespace seer::cli {

void prefault(const ModelWeights& w) {
  std::vector<const WeightTensor*> ts = {&w.token_embd, &w.output_norm, &w.output};
  for (const auto& l : w.layers)
    for (const WeightTensor* t :
         {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.wo, &l.bq, &l.bk, &l.bv, &l.ffn_norm, &l.w_gate, &l.w_up, &l.w_down})
      ts.push_back(t);
  const auto total = static_cast<int64_t>(w.total_bytes());
  ProgressBar bar("loading weights", total >> 20, total > (256 << 20));
  int64_t done = 0;
  volatile uint8_t sink = 0;
  for (const WeightTensor* t : ts) {
    if (!t->present()) continue;
    const auto* p = static_cast<const uint8_t*>(t->data);
    for (size_t off = 0; off < t->bytes; off += 4096) sink = sink + p[off];
    done += static_cast<int64_t>(t->bytes);
    bar.update(done >> 20, "MiB");
  }
  bar.finish("MiB");
}

std::unique_ptr<Tokenizer> load_tokenizer(const ModelFile& m, const std::string& path) {
  if (!path.empty()) return tokenizer_from_llama2c(path, m.config().vocab_size);
  if (m.gguf()) return tokenizer_from_gguf(*m.gguf());
  fail("{} is a llama2.c checkpoint without a vocabulary: pass --tokenizer tokenizer.bin", m.path());
}

}  // namespace seer::cli
