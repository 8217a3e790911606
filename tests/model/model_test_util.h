#pragma once
// Helpers shared by the model tests: whole-file I/O and small generated models.
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "model/ggml_types.h"
#include "model/random_model.h"
#include "support/test_paths.h"

namespace seer::testing {

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// The `tiny` shape written once per type and seed into the scratch directory.
inline std::string tiny_model(GgmlType type, uint64_t seed = 1) {
  std::string path = scratch_dir() + "/tiny-" + std::string(ggml_type_name(type)) + "-" + std::to_string(seed) + ".gguf";
  std::ifstream probe(path);
  if (!probe.good()) {
    RandomModelOptions opt;
    opt.shape = *named_model_shape("tiny");
    opt.type = type;
    opt.seed = seed;
    opt.progress = false;
    write_random_model(path, opt);
  }
  return path;
}

}  // namespace seer::testing
