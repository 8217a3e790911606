#include "sim/profile_holdout.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "common/error.h"
#include "sim/profile_fit.h"

namespace seer {
namespace {

using Profiles = std::vector<const BlockProfile*>;

bool same_name(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

// Distinct devices in order of first appearance.
std::vector<std::string> devices_of(const std::vector<BlockProfile>& profiles) {
  std::vector<std::string> out;
  for (const auto& b : profiles)
    if (std::find(out.begin(), out.end(), b.device) == out.end()) out.push_back(b.device);
  return out;
}

HoldOutFold run_fold(const std::vector<BlockProfile>& profiles, const Catalog& catalog, const std::string& device,
                     const HoldOut& spec) {
  Profiles train, held;
  for (const auto& b : profiles)
    if (b.device == device) (spec.holds(b) ? held : train).push_back(&b);
  HoldOutFold f;
  f.device = device;
  f.hardware = held.front()->hardware;
  f.held_out = spec.label();
  if (train.empty()) fail("--hold-out {} holds out every profile of {}: nothing left to fit", f.held_out, device);
  const HardwareSpec& hw = catalog.hardware(f.hardware);
  f.fitted = fit_block_factors(with_start_factors(hw), train);
  f.train_fitted = block_time_error(f.fitted, train);
  f.train_catalog = block_time_error(hw, train);
  f.held_fitted = block_time_error(f.fitted, held);
  f.held_catalog = block_time_error(hw, held);
  for (const BlockProfile* b : held)
    f.combinations.push_back(
        {b->profile_model, b->model->name, b->tp, block_time_error(f.fitted, {b}), block_time_error(hw, {b})});
  return f;
}

void summarize(HoldOutValidation& v) {
  std::vector<std::string> devices;
  for (const auto& f : v.folds)
    if (std::find(devices.begin(), devices.end(), f.device) == devices.end()) devices.push_back(f.device);
  for (const auto& device : devices) {
    DeviceHoldOut s;
    s.device = device;
    for (const auto& f : v.folds) {
      if (f.device != device) continue;
      ++s.folds;
      for (const auto& c : f.combinations) {
        ++s.combinations;
        s.mean_fitted += c.fitted.mean_relative;
        s.mean_catalog += c.catalog.mean_relative;
        if (c.fitted.mean_relative > s.worst_fitted) {
          s.worst_fitted = c.fitted.mean_relative;
          s.worst = fmt::format("{} tp {}", c.profile_model, c.tp);
        }
      }
    }
    if (s.combinations > 0) {
      s.mean_fitted /= s.combinations;
      s.mean_catalog /= s.combinations;
    }
    v.devices.push_back(s);
  }
}

nlohmann::ordered_json error_json(const ErrorStats& e) {
  return {{"points", e.points},
          {"mean_relative_error", e.mean_relative},
          {"max_relative_error", e.max_relative},
          {"mean_signed_error", e.mean_signed}};
}

}  // namespace

bool HoldOut::holds(const BlockProfile& b) const {
  for (const auto& m : models)
    if (same_name(m, b.profile_model) || (b.model && same_name(m, b.model->name))) return true;
  return std::find(tps.begin(), tps.end(), b.tp) != tps.end();
}

std::string HoldOut::label() const {
  std::string out;
  for (const auto& m : models) out += (out.empty() ? "" : ",") + ("model:" + m);
  for (int tp : tps) out += (out.empty() ? "" : ",") + fmt::format("tp:{}", tp);
  return out;
}

HoldOut parse_hold_out(const std::vector<std::string>& specs) {
  HoldOut h;
  for (const auto& arg : specs)
    for (const auto& item : split(arg, ',')) {
      const auto colon = item.find(':');
      const std::string kind = item.substr(0, colon), value = colon == std::string::npos ? "" : item.substr(colon + 1);
      if (kind == "model" && !value.empty()) {
        h.models.push_back(value);
      } else if (kind == "tp" && !value.empty() &&
                 std::all_of(value.begin(), value.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
        h.tps.push_back(std::stoi(value));
      } else {
        fail("--hold-out: expected model:NAME or tp:N, got '{}'", item);
      }
    }
  if (h.models.empty() && h.tps.empty()) fail("--hold-out: nothing to hold out");
  return h;
}

CrossValidate parse_cross_validate(const std::string& s) {
  if (s == "models") return CrossValidate::Models;
  if (s == "tp") return CrossValidate::Tp;
  fail("--cross-validate: expected 'models' or 'tp', got '{}'", s);
}

HoldOutValidation validate_held_out(const std::vector<BlockProfile>& profiles, const Catalog& catalog,
                                    const HoldOut& spec) {
  HoldOutValidation v;
  v.mode = "hold-out " + spec.label();
  for (const auto& device : devices_of(profiles)) {
    const bool any = std::any_of(profiles.begin(), profiles.end(),
                                 [&](const BlockProfile& b) { return b.device == device && spec.holds(b); });
    if (any) v.folds.push_back(run_fold(profiles, catalog, device, spec));
  }
  if (v.folds.empty()) {
    std::set<std::string> models;
    for (const auto& b : profiles) models.insert(b.profile_model);
    std::string known;
    for (const auto& m : models) known += (known.empty() ? "" : ", ") + m;
    fail("--hold-out {} matches no profile (profiled models: {})", spec.label(), known);
  }
  summarize(v);
  return v;
}

HoldOutValidation cross_validate(const std::vector<BlockProfile>& profiles, const Catalog& catalog, CrossValidate by) {
  HoldOutValidation v;
  v.mode = by == CrossValidate::Models ? "cross-validate models" : "cross-validate tp";
  for (const auto& device : devices_of(profiles)) {
    std::vector<HoldOut> folds;
    for (const auto& b : profiles) {
      if (b.device != device) continue;
      HoldOut h;
      if (by == CrossValidate::Models) h.models = {b.profile_model};
      else h.tps = {b.tp};
      if (std::none_of(folds.begin(), folds.end(), [&](const HoldOut& o) { return o.label() == h.label(); }))
        folds.push_back(h);
    }
    std::sort(folds.begin(), folds.end(), [](const HoldOut& a, const HoldOut& b) {
      return a.tps == b.tps ? a.models < b.models : a.tps < b.tps;
    });
    for (const auto& h : folds) v.folds.push_back(run_fold(profiles, catalog, device, h));
  }
  summarize(v);
  return v;
}

std::string render_held_out_table(const HoldOutValidation& v) {
  auto pct = [](const ErrorStats& e) { return fmt::format("{:.1f}%", 100 * e.mean_relative); };
  std::string out = fmt::format(
      "{}: per device, memory/compute/elementwise/kernel floor refitted to the rows not held out\n"
      "(src/sim/profile_fit.h); errors are mean relative errors of the per-block non-attention time\n"
      "over the rows. 'catalog' = data/catalog/hardware.json's factors, fitted to all rows: fit error.\n\n",
      v.mode);
  out += fmt::format("{:<6} {:<32} {:>6} {:>8} {:>8} {:>6} {:>9} {:>8}   {:>6} {:>7} {:>7} {:>8}\n", "device",
                     "held out", "train", "fit err", "catalog", "held", "held err", "catalog", "memory", "compute",
                     "elemwis", "floor");
  for (const auto& f : v.folds)
    out += fmt::format("{:<6} {:<32} {:>6} {:>8} {:>8} {:>6} {:>9} {:>8}   {:>6.3f} {:>7.3f} {:>7.3f} {:>6.2f}us{}\n",
                       f.device, f.held_out, f.train_fitted.points, pct(f.train_fitted), pct(f.train_catalog),
                       f.held_fitted.points, pct(f.held_fitted), pct(f.held_catalog), f.fitted.efficiency.memory,
                       f.fitted.efficiency.compute, f.fitted.efficiency.elementwise, 1e6 * f.fitted.kernel_latency_s,
                       f.held_fitted.mean_relative > 0.10 ? "  > 10%" : "");
  out += fmt::format("\nper held-out combination:\n{:<6} {:<28} {:<15} {:>3} {:>6} {:>9} {:>9} {:>9} {:>8}\n",
                     "device", "profile", "catalog model", "tp", "points", "held err", "max err", "bias", "catalog");
  for (const auto& f : v.folds)
    for (const auto& c : f.combinations)
      out += fmt::format("{:<6} {:<28} {:<15} {:>3} {:>6} {:>8.1f}% {:>8.1f}% {:>+8.1f}% {:>7.1f}%{}\n", f.device,
                         c.profile_model, c.model, c.tp, c.fitted.points, 100 * c.fitted.mean_relative,
                         100 * c.fitted.max_relative, 100 * c.fitted.mean_signed, 100 * c.catalog.mean_relative,
                         c.fitted.mean_relative > 0.10 ? "  > 10%" : "");
  out += fmt::format("\nper device, mean of the held-out combinations' mean errors:\n{:<6} {:>5} {:>12} {:>9} {:>9}   {}\n",
                     "device", "folds", "combinations", "held err", "catalog", "worst held-out combination");
  for (const auto& d : v.devices)
    out += fmt::format("{:<6} {:>5} {:>12} {:>8.2f}% {:>8.2f}%   {} ({:.1f}%)\n", d.device, d.folds, d.combinations,
                       100 * d.mean_fitted, 100 * d.mean_catalog, d.worst, 100 * d.worst_fitted);
  return out;
}

nlohmann::ordered_json held_out_json(const HoldOutValidation& v) {
  nlohmann::ordered_json j;
  j["mode"] = v.mode;
  j["folds"] = nlohmann::ordered_json::array();
  for (const auto& f : v.folds) {
    nlohmann::ordered_json combos = nlohmann::ordered_json::array();
    for (const auto& c : f.combinations)
      combos.push_back({{"profile_model", c.profile_model},
                        {"model", c.model},
                        {"tp", c.tp},
                        {"held_out_error", error_json(c.fitted)},
                        {"catalog_error", error_json(c.catalog)}});
    j["folds"].push_back({{"device", f.device},
                          {"hardware", f.hardware},
                          {"held_out", f.held_out},
                          {"fitted_factors",
                           {{"memory", f.fitted.efficiency.memory},
                            {"compute", f.fitted.efficiency.compute},
                            {"elementwise", f.fitted.efficiency.elementwise},
                            {"kernel_latency_s", f.fitted.kernel_latency_s}}},
                          {"train_fit_error", error_json(f.train_fitted)},
                          {"train_catalog_error", error_json(f.train_catalog)},
                          {"held_out_error", error_json(f.held_fitted)},
                          {"held_out_catalog_error", error_json(f.held_catalog)},
                          {"combinations", combos}});
  }
  j["devices"] = nlohmann::ordered_json::array();
  for (const auto& d : v.devices)
    j["devices"].push_back({{"device", d.device},
                            {"folds", d.folds},
                            {"combinations", d.combinations},
                            {"mean_held_out_error", d.mean_fitted},
                            {"mean_catalog_error", d.mean_catalog},
                            {"worst_held_out_error", d.worst_fitted},
                            {"worst_held_out_combination", d.worst}});
  return j;
}

}  // namespace seer
