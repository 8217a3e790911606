#pragma once
// llama.cpp's tokenizer test vectors (ggml-vocab-NAME.gguf.inp / .out): texts
// separated by a marker, and one line of expected ids per text.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace seer::testing {

struct VocabCase {
  std::string text;
  std::vector<int32_t> ids;
};

// Throws seer::Error when .out has fewer lines than .inp has cases.
std::vector<VocabCase> read_vocab_cases(const std::filesystem::path& inp, const std::filesystem::path& out);
// "1 2 3"
std::string show_ids(const std::vector<int32_t>& ids);

}  // namespace seer::testing
