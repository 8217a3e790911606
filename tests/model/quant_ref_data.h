#pragma once
// Reads tests/data/quant_ref/ (made by scripts/reference/make_quant_refs.sh from
// llama.cpp's libggml): the manifest and, per type, ggml's quantized bytes of the
// small input followed by ggml's dequantization of them.
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "model/quant_ref_input.h"
#include "support/test_paths.h"

namespace seer::quant_ref {

struct RefManifest {
  InputShape exact{}, rmse{};
  uint64_t exact_hash = 0, rmse_hash = 0;
  struct Type {
    size_t row_bytes;  // of one row of the small input
    double ggml_rmse;  // ggml quantize -> dequantize on the large input
  };
  std::map<std::string, Type> types;
};

inline std::string ref_dir() { return seer::testing::source_dir() + "/tests/data/quant_ref"; }

inline RefManifest read_manifest() {
  RefManifest m;
  std::ifstream in(ref_dir() + "/manifest.txt");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string key;
    ls >> key;
    if (key == "exact_input" || key == "rmse_input") {
      InputShape& s = key == "exact_input" ? m.exact : m.rmse;
      uint64_t& h = key == "exact_input" ? m.exact_hash : m.rmse_hash;
      ls >> s.rows >> s.cols >> s.seed >> std::hex >> h;
    } else if (key == "type") {
      std::string name;
      RefManifest::Type t{};
      ls >> name >> t.row_bytes >> t.ggml_rmse;
      m.types[name] = t;
    }
  }
  return m;
}

struct RefVectors {
  std::vector<uint8_t> bytes;  // rows x row_bytes
  std::vector<float> floats;   // rows x cols, ggml's dequantization of `bytes`
};

// Empty vectors when the file is missing or not of the expected size.
inline RefVectors read_vectors(const std::string& type, size_t row_bytes, const InputShape& s) {
  RefVectors v;
  std::ifstream in(ref_dir() + "/" + type + ".bin", std::ios::binary);
  v.bytes.resize(row_bytes * static_cast<size_t>(s.rows));
  v.floats.resize(static_cast<size_t>(s.rows * s.cols));
  in.read(reinterpret_cast<char*>(v.bytes.data()), static_cast<std::streamsize>(v.bytes.size()));
  in.read(reinterpret_cast<char*>(v.floats.data()), static_cast<std::streamsize>(v.floats.size() * sizeof(float)));
  if (!in || in.peek() != std::char_traits<char>::eof()) return {};
  return v;
}

}  // namespace seer::quant_ref
