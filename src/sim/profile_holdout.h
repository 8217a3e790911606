#pragma once
// Held-out validation of the GPU block factors (`seer sim validate --profiles DIR
// --hold-out SPEC | --cross-validate models|tp`): per device, the four block factors
// are fitted (profile_fit.h, from its neutral start) to the profile rows not held out,
// and the error is reported on the held-out rows, next to the catalog's factors on
// the same rows. The catalog's were fitted to all rows, so on held-out rows they show
// fit error; the refitted factors show held-out error. See docs/simulator.md.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/profile_validation.h"

namespace seer {

// Rows to hold out: a profile is held out when its profiled model (folder name, e.g.
// "Llama-2-7b-hf", or its catalog model, "Llama-2-7B"; case-insensitive) is among
// `models` or its TP degree among `tps`.
struct HoldOut {
  std::vector<std::string> models;
  std::vector<int> tps;

  bool holds(const BlockProfile& b) const;
  std::string label() const;  // "model:Llama-2-7b-hf,tp:8"
};

// "model:NAME" and "tp:N" items, each argument possibly comma-separated.
// Throws seer::Error on anything else.
HoldOut parse_hold_out(const std::vector<std::string>& specs);

enum class CrossValidate { Models, Tp };
// "models" or "tp"; throws seer::Error otherwise.
CrossValidate parse_cross_validate(const std::string& s);

struct HeldOutCombination {
  std::string profile_model;
  std::string model;  // catalog model
  int tp = 1;
  ErrorStats fitted;   // factors fitted without these rows
  ErrorStats catalog;  // catalog factors (fitted with them)
};

struct HoldOutFold {
  std::string device;
  std::string hardware;
  std::string held_out;  // HoldOut::label()
  HardwareSpec fitted;   // the catalog entry with the four refitted factors
  ErrorStats train_fitted, train_catalog;
  ErrorStats held_fitted, held_catalog;
  std::vector<HeldOutCombination> combinations;
};

// Over all folds of a device: the mean of the held-out combinations' mean errors
// (each device x model x TP combination weighs the same, as in docs/simulator.md).
struct DeviceHoldOut {
  std::string device;
  int folds = 0;
  int combinations = 0;
  double mean_fitted = 0;   // held-out error
  double mean_catalog = 0;  // catalog factors on the same rows (fit error)
  double worst_fitted = 0;
  std::string worst;  // "Llama-2-7b-hf tp 8"
};

struct HoldOutValidation {
  std::string mode;  // "hold-out model:..." or "cross-validate models"
  std::vector<HoldOutFold> folds;
  std::vector<DeviceHoldOut> devices;
};

// One fold per device with rows held out by `spec` (devices without are left out).
// Throws seer::Error when `spec` holds out no row, or all rows of a device.
HoldOutValidation validate_held_out(const std::vector<BlockProfile>& profiles, const Catalog& catalog,
                                    const HoldOut& spec);
// One fold per profiled model (or TP degree) of every device.
HoldOutValidation cross_validate(const std::vector<BlockProfile>& profiles, const Catalog& catalog, CrossValidate by);

std::string render_held_out_table(const HoldOutValidation& v);
nlohmann::ordered_json held_out_json(const HoldOutValidation& v);

}  // namespace seer
