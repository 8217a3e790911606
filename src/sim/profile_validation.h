#pragma once
// `seer sim validate --profiles DIR`: the cost model against measured GPU profiles
// (Vidur's layout: compute/<device>/<org>/<model>/mlp.csv with per-op times of one
// transformer block vs token count and TP degree; network/<topology>/all_reduce.csv).
// See docs/simulator.md.
#include <array>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/catalog.h"
#include "sim/cost_model.h"

namespace seer {

struct ErrorStats {
  int64_t points = 0;
  double mean_relative = 0;  // mean |predicted - measured| / measured
  double max_relative = 0;
  double mean_signed = 0;    // mean (predicted - measured) / measured: + means the model is slow
};

struct LayerValidation {
  std::string device;    // profile folder (a100, h100, a40)
  std::string hardware;  // catalog entry
  std::string profile_model;
  std::string model;     // catalog model with the same shape; "" when none
  int tp = 1;
  ErrorStats error;
};

// One op of the block over every profiled model and TP degree of one device.
struct OpValidation {
  std::string device;
  std::string op;  // Vidur's name
  ErrorStats error;
};

struct AllReduceValidation {
  std::string topology;  // profile folder (a100_dgx, ...)
  std::string hardware;
  int devices = 0;
  std::string note;  // why the catalog's ring model does not describe this topology; "" if it does
  ErrorStats error;
};

struct ProfileValidation {
  std::vector<LayerValidation> layers;
  std::vector<OpValidation> ops;
  std::vector<AllReduceValidation> all_reduce;
};

// Catalog hardware for a profile device folder ("a100" -> A100-80GB); "" if none.
std::string hardware_for_profile_device(const std::string& device);

// Throws seer::Error when `dir` has no compute profiles.
ProfileValidation validate_against_profiles(const std::string& dir, const Catalog& catalog);

// The rows `validate` checks and `profile_fit.h` fits to, per device x profiled
// model x TP degree: per token count, the measured per-block non-attention time (the
// ops the profile has, summed). Only profiles with a catalog model and hardware.
struct BlockPoint {
  double tokens = 0;
  double measured_s = 0;
  std::array<bool, kLayerOpCount> has_op{};  // ops the profile measured (phi-2 lacks one)
};

struct BlockProfile {
  std::string device;         // profile folder (a100, h100, a40)
  std::string hardware;       // catalog entry
  std::string profile_model;  // profile folder (Llama-2-7b-hf)
  const ModelSpec* model = nullptr;  // into the Catalog given to read_block_profiles
  int tp = 1;
  std::vector<BlockPoint> points;
};

// Throws seer::Error when `dir` has no compute profiles. The result points into
// `catalog`, which must outlive it.
std::vector<BlockProfile> read_block_profiles(const std::string& dir, const Catalog& catalog);

std::string render_validation_table(const ProfileValidation& v);
nlohmann::ordered_json validation_json(const ProfileValidation& v);

}  // namespace seer
