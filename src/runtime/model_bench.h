#pragma once
// Forward-pass speed of a model file on the CPU backend, measured the way llama.cpp's
// llama-bench and llama-batched-bench measure theirs so the two compare case by case
// on the same file and threads (scripts/vs_llamacpp.sh):
//  * pp N   (llama-bench -p N): one sequence's N prompt tokens in one forward pass;
//  * tg N   (llama-bench -n N): N tokens decoded one by one from an empty context;
//  * batched B (llama-batched-bench -npp P -ntg T -npl B): B sequences of P prompt
//    tokens prefilled together, then T steps decoding one token of each.
// Tokens are random ids; only the positions llama.cpp asks logits for get them.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/kv_type.h"

namespace seer {

class ModelFile;

struct ModelBenchOptions {
  int pp = 512;
  int tg = 128;
  int batched_prompt = 128;  // P of the batched cases
  int batched_gen = 128;     // T of the batched cases
  std::vector<int> parallel = {8, 32};  // B of the batched cases (empty: none)
  int repeats = 3;  // pp and tg: best of this many runs
  int threads = 0;
  KvType kv_type = kDefaultKvType;
  uint64_t seed = 1;
};

struct ModelBenchRow {
  std::string test;  // "pp512", "tg128", "batched"
  int parallel = 1;
  int prompt_tokens = 0;
  int gen_tokens = 0;
  double prompt_tokens_per_s = 0;  // pp and batched
  double gen_tokens_per_s = 0;     // tg and batched (all sequences together)
};

using ModelBenchProgress = std::function<void(const std::string& what)>;

[[nodiscard]] std::vector<ModelBenchRow> bench_model(const ModelFile& model, const ModelBenchOptions& opts,
                                                     const ModelBenchProgress& progress = {});

}  // namespace seer
