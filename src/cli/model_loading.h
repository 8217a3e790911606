#pragma once
// Loading a model for the commands that run it directly on the CPU backend
// (generate, perplexity): its tokenizer and a first touch of the weights.
#include <memory>
#include <string>

#include "model/model_file.h"
#include "tokenizer/tokenizer.h"

namespace seer::cli {

// The GGUF's own vocabulary, or a llama2.c tokenizer.bin given by path.
std::unique_ptr<Tokenizer> load_tokenizer(const ModelFile& m, const std::string& tokenizer_path);

// Touches every page of the (memory-mapped) weights so that the first forward pass
// does not pay for reading the file, with a progress line for big models.
void prefault(const ModelWeights& w);

}  // namespace seer::cli
