// Reference logits from llama.cpp: loads a GGUF with libllama, decodes one
// sequence of token ids in a single batch and writes every position's logits as
// text (one line per position: the vocabulary's values in order). seer's tests
// compare against the vectors this writes (tests/backend/reference_logits/);
// build and run it with scripts/reference/make_reference_logits.sh.
//
// usage: llama_logits MODEL.gguf TOKENS(comma-separated) OUT.txt
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "llama.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s MODEL.gguf TOKENS OUT.txt\n", argv[0]);
    return 2;
  }
  std::vector<llama_token> tokens;
  std::stringstream ss(argv[2]);
  for (std::string t; std::getline(ss, t, ',');) tokens.push_back(std::atoi(t.c_str()));

  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  llama_model* model = llama_model_load_from_file(argv[1], mp);
  if (!model) {
    std::fprintf(stderr, "cannot load %s\n", argv[1]);
    return 1;
  }
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = 0;  // the model's own context, as llama.cpp does by default (Phi-3 picks its
                 // LongRoPE factors by it)
  cp.n_batch = 512;
  cp.n_ubatch = 512;
  cp.n_threads = 1;
  cp.n_threads_batch = 1;
  cp.type_k = GGML_TYPE_F32;  // f32 K/V: the comparison measures the model, not the cache
  cp.type_v = GGML_TYPE_F32;
  cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
  llama_context* ctx = llama_init_from_model(model, cp);
  if (!ctx) {
    std::fprintf(stderr, "cannot create a context\n");
    return 1;
  }
  const int n = static_cast<int>(tokens.size());
  llama_batch batch = llama_batch_init(n, 0, 1);
  for (int i = 0; i < n; ++i) {
    batch.token[i] = tokens[i];
    batch.pos[i] = i;
    batch.n_seq_id[i] = 1;
    batch.seq_id[i][0] = 0;
    batch.logits[i] = 1;
  }
  batch.n_tokens = n;
  if (llama_decode(ctx, batch) != 0) {
    std::fprintf(stderr, "llama_decode failed\n");
    return 1;
  }
  const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
  FILE* out = std::fopen(argv[3], "w");
  if (!out) return 1;
  for (int i = 0; i < n; ++i) {
    const float* l = llama_get_logits_ith(ctx, i);
    for (int v = 0; v < n_vocab; ++v) std::fprintf(out, v ? " %.7g" : "%.7g", l[v]);
    std::fprintf(out, "\n");
  }
  std::fclose(out);
  llama_batch_free(batch);
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
