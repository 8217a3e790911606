#pragma once
// Perplexity of a model over a token stream, computed as llama.cpp's
// llama-perplexity does so that the two can be compared number for number: the
// tokens are cut into ctx-sized chunks (the tail that does not fill one is dropped),
// each chunk is evaluated from an empty cache with its first token replaced by BOS
// (when the vocabulary adds one), and only the second half of each chunk is scored:
// the logits at positions ctx/2 .. ctx-2 predict the tokens after them.
#include <cstdint>
#include <functional>
#include <vector>

namespace seer {

class Backend;

struct PerplexityOptions {
  int ctx = 512;
  int chunks = -1;   // -1: every whole chunk
  int batch = 512;   // tokens per forward pass (a chunk may take several)
  int32_t bos = -1;  // replaces each chunk's first token; -1: none
};

struct PerplexityResult {
  double perplexity = 0.0;
  double stderr_ppl = 0.0;  // llama-perplexity's "+/-": ppl * stddev(nll) / sqrt(count - 1)
  // Running perplexity after each chunk, as llama-perplexity prints "[i]x".
  std::vector<double> running;
  int ctx = 0;
  int64_t tokens = 0;  // tokens in the input
  int64_t scored = 0;  // tokens whose probability was scored
};

// Called after each chunk with its index, the number of chunks and the running
// perplexity.
using PerplexityProgress = std::function<void(int chunk, int chunks, double running)>;

// `backend` must hold at least ctx tokens of KV in its device pool.
[[nodiscard]] PerplexityResult perplexity(Backend& backend, const std::vector<int32_t>& tokens,
                                          const PerplexityOptions& opts, const PerplexityProgress& on_chunk = {});

// -log softmax(logits)[token], with the max subtracted in f32 and the sum in f64 (as
// llama-perplexity).
double negative_log_prob(const float* logits, int vocab, int32_t token);

}  // namespace seer
