#include "runtime/perplexity.h"

#include <algorithm>
#include <cmath>

#include "backend/backend.h"
#include "common/error.h"

namespace seer {

double negative_log_prob(const float* logits, int vocab, int32_t token) {
  const float max_logit = *std::max_element(logits, logits + vocab);
  double sum = 0.0;
  for (int i = 0; i < vocab; ++i) sum += std::exp(logits[i] - max_logit);
  return -(static_cast<double>(logits[token] - max_logit) - std::log(sum));
}

PerplexityResult perplexity(Backend& backend, const std::vector<int32_t>& tokens, const PerplexityOptions& opts,
                            const PerplexityProgress& on_chunk) {
  const int ctx = opts.ctx;
  if (ctx < 4) fail("--ctx must be at least 4, got {}", ctx);
  if (opts.batch < 1) fail("--batch must be >= 1, got {}", opts.batch);
  if (static_cast<int64_t>(tokens.size()) < 2 * static_cast<int64_t>(ctx))
    fail("perplexity with a context of {} needs at least {} tokens; the text has {}", ctx, 2 * ctx, tokens.size());
  const int64_t needed_blocks = (ctx + backend.block_size() - 1) / backend.block_size();
  if (backend.device_blocks() < needed_blocks)
    fail("the KV pool holds {} blocks, a context of {} needs {}", backend.device_blocks(), ctx, needed_blocks);

  const int available = static_cast<int>(tokens.size() / ctx);
  const int chunks = opts.chunks < 0 ? available : std::min(opts.chunks, available);
  const int first = ctx / 2;
  const int vocab = backend.vocab_size();

  ForwardSequence seq;
  for (int b = 0; b < needed_blocks; ++b) seq.block_table.push_back(b);

  PerplexityResult r;
  r.ctx = ctx;
  r.tokens = static_cast<int64_t>(tokens.size());
  double nll = 0.0, nll2 = 0.0;
  std::vector<float> logits;
  for (int c = 0; c < chunks; ++c) {
    const int64_t start = static_cast<int64_t>(c) * ctx;
    for (int p0 = 0; p0 < ctx; p0 += opts.batch) {
      const int p1 = std::min(ctx, p0 + opts.batch);
      ForwardBatch b;
      b.sequences.push_back(seq);
      for (int p = p0; p < p1; ++p) {
        const int32_t tok = p == 0 && opts.bos >= 0 ? opts.bos : tokens[start + p];
        b.add(0, tok, p, p >= first && p < ctx - 1);
      }
      backend.forward(b, logits);
      for (size_t i = 0; i < b.logit_rows.size(); ++i) {
        const int p = b.positions[b.logit_rows[i]];
        const double v = negative_log_prob(logits.data() + i * static_cast<size_t>(vocab), vocab, tokens[start + p + 1]);
        nll += v;
        nll2 += v * v;
      }
    }
    r.scored += ctx - first - 1;
    r.running.push_back(std::exp(nll / static_cast<double>(r.scored)));
    if (on_chunk) on_chunk(c, chunks, r.running.back());
  }
  const double mean = nll / static_cast<double>(r.scored);
  const double var = nll2 / static_cast<double>(r.scored) - mean * mean;
  r.perplexity = std::exp(mean);
  r.stderr_ppl = var > 0 && r.scored > 1 ? std::sqrt(var / static_cast<double>(r.scored - 1)) * r.perplexity : 0.0;
  return r;
}

}  // namespace seer
