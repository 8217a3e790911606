#include "sim/labeled_datasets.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <thread>

#include <fmt/ranges.h>

#include "common/error.h"
#include "common/progress.h"
#include "model/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace seer {
namespace {

LabeledPrompt label(const TextRecord& rec, const Tokenizer& tok) {
  LabeledPrompt out;
  out.prompt = rec.prompt;
  out.prompt_tokens = std::max<int32_t>(1, static_cast<int32_t>(tok.encode(rec.prompt, true).size()));
  out.output_tokens = std::max<int32_t>(1, static_cast<int32_t>(tok.encode(rec.answer, false).size()));
  return out;
}

}  // namespace

std::string llama2_tokenizer_path(const std::string& data_dir) {
  return (std::filesystem::path(data_dir) / "tokenizer-tests" / "ggml-vocab-llama-spm.gguf").string();
}

std::unique_ptr<Tokenizer> load_llama2_tokenizer(const std::string& data_dir) {
  const std::string path = llama2_tokenizer_path(data_dir);
  if (!std::filesystem::exists(path))
    fail("Llama-2 tokenizer not found: {} does not exist (--data-dir should be the folder holding "
         "tokenizer-tests/, alpaca/ and sharegpt/)",
         path);
  auto gguf = GgufFile::open(path);
  return tokenizer_from_gguf(*gguf);
}

std::vector<LabeledPrompt> count_tokens(const std::vector<TextRecord>& records, const Tokenizer& tok,
                                        bool progress, int threads) {
  std::vector<LabeledPrompt> out(records.size());
  std::atomic<size_t> next{0}, done{0};
  ProgressBar bar("tokenize", static_cast<int64_t>(records.size()), progress);
  // Threads take chunks of records; the calling thread also draws the bar.
  auto work = [&](bool draw) {
    constexpr size_t kChunk = 256;
    for (size_t begin = next.fetch_add(kChunk); begin < records.size(); begin = next.fetch_add(kChunk)) {
      const size_t end = std::min(records.size(), begin + kChunk);
      for (size_t i = begin; i < end; ++i) out[i] = label(records[i], tok);
      done.fetch_add(end - begin);
      if (draw) bar.update(static_cast<int64_t>(done.load()));
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::max(1, threads); ++t) pool.emplace_back(work, false);
  work(true);
  for (auto& t : pool) t.join();
  bar.finish();
  return out;
}

const std::vector<std::string>& labeled_dataset_names() {
  static const std::vector<std::string> names = {"alpaca", "sharegpt"};
  return names;
}

std::vector<TextRecord> read_text_dataset(const std::string& data_dir, const std::string& dataset) {
  if (dataset == "alpaca") return read_alpaca(dataset_path(data_dir, "alpaca"));
  if (dataset == "sharegpt") {
    std::vector<TextRecord> out;
    for (auto& conv : read_sharegpt_conversations(dataset_path(data_dir, "sharegpt-multiturn")))
      for (auto& turn : conv.turns) out.push_back(std::move(turn));
    return out;
  }
  fail("--dataset '{}': expected one of {}", dataset, fmt::join(labeled_dataset_names(), ", "));
}

std::vector<LabeledPrompt> read_labeled_dataset(const std::string& data_dir, const std::string& dataset,
                                                bool progress) {
  auto records = read_text_dataset(data_dir, dataset);
  auto tok = load_llama2_tokenizer(data_dir);
  return count_tokens(records, *tok, progress);
}

}  // namespace seer
