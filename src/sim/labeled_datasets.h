#pragma once
// Prompts with their true token counts under the Llama-2 tokenizer (the tokenizer
// S3's and Sarathi-Serve's length statistics use): the training and evaluation data
// of the length predictor (`seer predict`) and the lengths `seer trace --lengths
// alpaca` writes. The tokenizer is the vocab-only GGUF
// <data-dir>/tokenizer-tests/ggml-vocab-llama-spm.gguf, read from its metadata.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/datasets.h"

namespace seer {

class Tokenizer;

struct LabeledPrompt {
  std::string prompt;
  int32_t prompt_tokens = 0;  // with BOS, as the prompt is prefilled
  int32_t output_tokens = 0;  // the answer's tokens, without BOS/EOS, at least 1
};

std::string llama2_tokenizer_path(const std::string& data_dir);
// Throws seer::Error naming the file when it is missing or not a tokenizer GGUF.
std::unique_ptr<Tokenizer> load_llama2_tokenizer(const std::string& data_dir);

// Tokenizes every record's prompt and answer on `threads` threads (a progress bar on
// stderr when `progress`); the result keeps the order of `records`.
std::vector<LabeledPrompt> count_tokens(const std::vector<TextRecord>& records, const Tokenizer& tok,
                                        bool progress, int threads = 2);

// The datasets of `seer predict`: "alpaca" (instruction + input -> output) and
// "sharegpt" (the sample conversations: each human turn -> the gpt turn after it).
const std::vector<std::string>& labeled_dataset_names();
std::vector<TextRecord> read_text_dataset(const std::string& data_dir, const std::string& dataset);
std::vector<LabeledPrompt> read_labeled_dataset(const std::string& data_dir, const std::string& dataset,
                                                bool progress);

}  // namespace seer
