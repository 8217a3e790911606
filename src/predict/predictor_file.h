#pragma once
// The trained length predictor's file (docs/predictor.md, "File format"):
//   8 bytes  magic "SEERLENP"
//   u32      format version (kPredictorFileVersion)
//   u32      header length H, then H bytes of JSON: model kind, feature config,
//            buckets, max_len, class edges, weight count, tokenizer of the labels,
//            and free-form training notes
//   f32[n]   the weights, little-endian
//   u64      FNV-1a 64 of every byte before it
// Loading checks all of it; any mismatch is a seer::Error naming the file.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "predict/length_model.h"

namespace seer {

inline constexpr uint32_t kPredictorFileVersion = 1;

struct PredictorFile {
  LengthModel model;
  nlohmann::json notes = nlohmann::json::object();  // training set, split, seed, figures
};

void save_predictor_file(const std::string& path, const PredictorFile& file);
PredictorFile load_predictor_file(const std::string& path);
// True when the file starts with the predictor magic (make_length_predictor uses it
// to tell a predictor file from a typo'd spec).
bool looks_like_predictor_file(const std::string& path);

}  // namespace seer
