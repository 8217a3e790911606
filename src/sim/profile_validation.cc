#include "sim/profile_validation.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "common/error.h"
#include "sim/cost_model.h"

namespace seer {
namespace {

namespace fs = std::filesystem;

// Per device, per op: the error over all rows of all its profiles.
using OpErrors = std::map<std::string, std::array<ErrorStats, kLayerOpCount>>;

struct CsvTable {
  std::map<std::string, size_t> column;
  std::vector<std::vector<std::string>> rows;

  const std::string* cell(const std::vector<std::string>& row, const std::string& name) const {
    auto it = column.find(name);
    return it == column.end() || it->second >= row.size() ? nullptr : &row[it->second];
  }
  double number(const std::vector<std::string>& row, const std::string& name, const std::string& path) const {
    const std::string* c = cell(row, name);
    if (!c) fail("{}: missing column '{}'", path, name);
    try {
      return std::stod(*c);
    } catch (const std::exception&) {
      fail("{}: column '{}' holds '{}', not a number", path, name, *c);
    }
  }
};

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(item);
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

CsvTable read_csv(const fs::path& path) {
  std::ifstream in(path);
  if (!in) fail("cannot open {}", path.string());
  CsvTable t;
  std::string line;
  if (!std::getline(in, line)) fail("{}: empty file", path.string());
  auto header = split_csv_line(line);
  for (size_t i = 0; i < header.size(); ++i) t.column[header[i]] = i;
  while (std::getline(in, line))
    if (!line.empty()) t.rows.push_back(split_csv_line(line));
  return t;
}

void add_error(ErrorStats& e, double predicted, double measured) {
  if (!(measured > 0)) return;
  const double rel = (predicted - measured) / measured;
  ++e.points;
  e.mean_relative += std::fabs(rel);
  e.mean_signed += rel;
  e.max_relative = std::max(e.max_relative, std::fabs(rel));
}

void finish(ErrorStats& e) {
  if (e.points == 0) return;
  e.mean_relative /= static_cast<double>(e.points);
  e.mean_signed /= static_cast<double>(e.points);
}

std::string alnum_lower(const std::string& s) {
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) out += static_cast<char>(std::tolower(u));
  }
  return out;
}

// The catalog model with the profile's shape (vocabularies are padded in the
// profiles and do not enter the per-layer time), preferring the one whose name the
// profile's folder contains (Meta-Llama-3-70B has Llama-2-70B's block shape).
const ModelSpec* model_with_shape(const Catalog& catalog, const std::string& profile, int heads, int kv_heads,
                                  int hidden, int ffn, bool gated) {
  const ModelSpec* found = nullptr;
  for (const auto& name : catalog.model_names()) {
    const ModelSpec& m = catalog.model(name);
    if (m.heads != heads || m.kv_heads != kv_heads || m.hidden != hidden || m.ffn != ffn || m.gated_ffn != gated)
      continue;
    if (alnum_lower(profile).find(alnum_lower(name)) != std::string::npos) return &m;
    if (!found) found = &m;
  }
  return found;
}

std::string tp_column(const CsvTable& t) {
  // Some profiles truncate the header to "num_tensor_parallel_work".
  for (const char* c : {"num_tensor_parallel_workers", "num_tensor_parallel_work"})
    if (t.column.count(c)) return c;
  return "num_tensor_parallel_workers";
}

// One row of a compute profile: the block's shape, the token count and the
// measured time of each op (ms in the file, seconds here; NaN where the profile lacks the op).
struct ProfileRow {
  int heads = 0, kv_heads = 0, hidden = 0, ffn = 0, tp = 1;
  bool gated = false;
  double tokens = 0;
  LayerOpTimes measured{};
};

ProfileRow parse_row(const CsvTable& t, const std::vector<std::string>& row, const std::string& tpcol,
                     const std::string& where) {
  ProfileRow r;
  r.heads = static_cast<int>(t.number(row, "n_head", where));
  r.kv_heads = static_cast<int>(t.number(row, "n_kv_head", where));
  r.hidden = static_cast<int>(t.number(row, "n_embd", where));
  r.ffn = static_cast<int>(t.number(row, "n_expanded_embd", where));
  const std::string* gated_cell = t.cell(row, "use_gated_mlp");
  r.gated = gated_cell && (*gated_cell == "True" || *gated_cell == "true" || *gated_cell == "1");
  r.tp = static_cast<int>(t.number(row, tpcol, where));
  r.tokens = t.number(row, "num_tokens", where);
  for (size_t i = 0; i < kLayerOpCount; ++i) {
    const std::string column = fmt::format("time_stats.{}.mean", vidur_op_name(LayerOp(i)));
    const std::string* c = t.cell(row, column);
    r.measured[i] = !c || c->empty() ? std::nan("") : t.number(row, column, where) * 1e-3;  // ms
  }
  return r;
}

const ModelSpec* model_of(const Catalog& catalog, const std::string& profile_model, const ProfileRow& r) {
  return model_with_shape(catalog, profile_model, r.heads, r.kv_heads, r.hidden, r.ffn, r.gated);
}

void validate_compute_file(const fs::path& path, const std::string& device, const Catalog& catalog,
                           ProfileValidation& out, OpErrors& op_errors) {
  const CsvTable t = read_csv(path);
  const std::string where = path.string();
  const std::string tpcol = tp_column(t);
  std::map<int, LayerValidation> by_tp;
  for (const auto& row : t.rows) {
    const ProfileRow r = parse_row(t, row, tpcol, where);
    LayerValidation& v = by_tp[r.tp];
    v.device = device;
    v.hardware = hardware_for_profile_device(device);
    v.profile_model = path.parent_path().filename().string();
    v.tp = r.tp;
    const ModelSpec* m = model_of(catalog, v.profile_model, r);
    if (!m || v.hardware.empty()) continue;
    v.model = m->name;
    CostModelOptions o;
    o.tp = r.tp;
    o.check_fits = false;  // one block is profiled, whatever the whole model needs
    CostModel cost(*m, catalog.hardware(v.hardware), o);
    const LayerOpTimes predicted = cost.layer_op_times(r.tokens);
    // Ops the profile lacks (phi-2 has no post-attention norm) count on neither side.
    double measured_sum = 0, predicted_sum = 0;
    for (size_t i = 0; i < kLayerOpCount; ++i) {
      if (std::isnan(r.measured[i])) continue;
      measured_sum += r.measured[i];
      predicted_sum += predicted[i];
      add_error(op_errors[device][i], predicted[i], r.measured[i]);
    }
    add_error(v.error, predicted_sum, measured_sum);
  }
  for (auto& [tp, v] : by_tp) {
    finish(v.error);
    out.layers.push_back(std::move(v));
  }
}

void read_block_file(const fs::path& path, const std::string& device, const Catalog& catalog,
                     std::vector<BlockProfile>& out) {
  const CsvTable t = read_csv(path);
  const std::string where = path.string();
  const std::string tpcol = tp_column(t);
  const std::string hardware = hardware_for_profile_device(device);
  if (hardware.empty()) return;
  std::map<int, BlockProfile> by_tp;
  for (const auto& row : t.rows) {
    const ProfileRow r = parse_row(t, row, tpcol, where);
    const std::string profile_model = path.parent_path().filename().string();
    const ModelSpec* m = model_of(catalog, profile_model, r);
    if (!m) continue;
    BlockProfile& b = by_tp[r.tp];
    b.device = device;
    b.hardware = hardware;
    b.profile_model = profile_model;
    b.model = m;
    b.tp = r.tp;
    BlockPoint p;
    p.tokens = r.tokens;
    for (size_t i = 0; i < kLayerOpCount; ++i) {
      p.has_op[i] = !std::isnan(r.measured[i]);
      if (p.has_op[i]) p.measured_s += r.measured[i];
    }
    if (p.measured_s > 0) b.points.push_back(p);
  }
  for (auto& [tp, b] : by_tp) out.push_back(std::move(b));
}

void validate_all_reduce_file(const fs::path& path, const Catalog& catalog, ProfileValidation& out) {
  const std::string topology = path.parent_path().filename().string();
  const std::string hardware = hardware_for_profile_device(topology.substr(0, topology.find('_')));
  if (hardware.empty()) return;
  const CsvTable t = read_csv(path);
  const std::string where = path.string();
  const HardwareSpec& hw = catalog.hardware(hardware);
  std::map<int, AllReduceValidation> by_devices;
  for (const auto& row : t.rows) {
    const int n = static_cast<int>(t.number(row, "num_workers", where));
    // Single-node collectives only (all workers on one node), as Vidur uses them for TP.
    if (static_cast<int>(t.number(row, "devices_per_node", where)) != n) continue;
    const double bytes = t.number(row, "size", where);
    const double measured = t.number(row, "time_stats.all_reduce.mean", where) * 1e-3;
    AllReduceValidation& v = by_devices[n];
    v.topology = topology;
    v.hardware = hardware;
    v.devices = n;
    if (topology.find("pairwise") != std::string::npos && n > 2)
      v.note = "GPUs linked in NVLink pairs: beyond a pair the ring crosses PCIe, which the catalog does not model";
    // Any model: the all-reduce depends on the bytes only.
    CostModelOptions o;
    o.check_fits = false;
    ModelSpec any;
    any.heads = any.kv_heads = 1;
    CostModel cost(any, hw, o);
    add_error(v.error, cost.all_reduce_time(bytes, n), measured);
  }
  for (auto& [n, v] : by_devices) {
    finish(v.error);
    out.all_reduce.push_back(std::move(v));
  }
}

std::vector<fs::path> sorted_files(const fs::path& root, const std::string& name) {
  std::vector<fs::path> files;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return files;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file() && e.path().filename() == name) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

std::string hardware_for_profile_device(const std::string& device) {
  if (device == "a100") return "A100-80GB";
  if (device == "h100") return "H100-80GB";
  if (device == "a40") return "A40";
  return "";
}

ProfileValidation validate_against_profiles(const std::string& dir, const Catalog& catalog) {
  ProfileValidation v;
  const fs::path compute = fs::path(dir) / "compute";
  auto files = sorted_files(compute, "mlp.csv");
  if (files.empty()) fail("--profiles {}: no compute/<device>/<org>/<model>/mlp.csv files", dir);
  OpErrors op_errors;
  for (const auto& f : files) {
    // compute/<device>/<org>/<model>/mlp.csv
    const std::string device = fs::relative(f, compute).begin()->string();
    validate_compute_file(f, device, catalog, v, op_errors);
  }
  for (auto& [device, errors] : op_errors)
    for (size_t i = 0; i < kLayerOpCount; ++i) {
      if (errors[i].points == 0) continue;
      finish(errors[i]);
      v.ops.push_back({device, vidur_op_name(LayerOp(i)), errors[i]});
    }
  for (const auto& f : sorted_files(fs::path(dir) / "network", "all_reduce.csv"))
    validate_all_reduce_file(f, catalog, v);
  return v;
}

std::vector<BlockProfile> read_block_profiles(const std::string& dir, const Catalog& catalog) {
  const fs::path compute = fs::path(dir) / "compute";
  auto files = sorted_files(compute, "mlp.csv");
  if (files.empty()) fail("--profiles {}: no compute/<device>/<org>/<model>/mlp.csv files", dir);
  std::vector<BlockProfile> out;
  for (const auto& f : files) read_block_file(f, fs::relative(f, compute).begin()->string(), catalog, out);
  return out;
}

std::string render_validation_table(const ProfileValidation& v) {
  std::string out = fmt::format("{:<6} {:<28} {:<15} {:>3} {:>6} {:>9} {:>9} {:>9}\n", "device", "profile",
                                "catalog model", "tp", "points", "mean err", "max err", "bias");
  for (const auto& l : v.layers) {
    if (l.model.empty()) {
      out += fmt::format("{:<6} {:<28} {:<15} {:>3}   (no catalog model with this shape)\n", l.device,
                         l.profile_model, "-", l.tp);
      continue;
    }
    out += fmt::format("{:<6} {:<28} {:<15} {:>3} {:>6} {:>8.1f}% {:>8.1f}% {:>+8.1f}%{}\n", l.device, l.profile_model,
                       l.model, l.tp, l.error.points, 100 * l.error.mean_relative, 100 * l.error.max_relative,
                       100 * l.error.mean_signed, l.error.mean_relative > 0.10 ? "  > 10%" : "");
  }
  out += fmt::format("\nper op, all models and TP degrees of a device:\n{:<6} {:<26} {:>6} {:>9} {:>9} {:>9}\n",
                     "device", "op", "points", "mean err", "max err", "bias");
  for (const auto& o : v.ops)
    out += fmt::format("{:<6} {:<26} {:>6} {:>8.1f}% {:>8.1f}% {:>+8.1f}%\n", o.device, o.op, o.error.points,
                       100 * o.error.mean_relative, 100 * o.error.max_relative, 100 * o.error.mean_signed);
  out += fmt::format("\n{:<22} {:<12} {:>7} {:>6} {:>9} {:>9} {:>9}\n", "all-reduce topology", "hardware", "devices",
                     "points", "mean err", "max err", "bias");
  for (const auto& a : v.all_reduce) {
    out += fmt::format("{:<22} {:<12} {:>7} {:>6} {:>8.1f}% {:>8.1f}% {:>+8.1f}%\n", a.topology, a.hardware, a.devices,
                       a.error.points, 100 * a.error.mean_relative, 100 * a.error.max_relative,
                       100 * a.error.mean_signed);
    if (!a.note.empty()) out += fmt::format("    not modelled: {}\n", a.note);
  }
  return out;
}

nlohmann::ordered_json validation_json(const ProfileValidation& v) {
  auto err = [](const ErrorStats& e) {
    return nlohmann::ordered_json{{"points", e.points},
                                  {"mean_relative_error", e.mean_relative},
                                  {"max_relative_error", e.max_relative},
                                  {"mean_signed_error", e.mean_signed}};
  };
  nlohmann::ordered_json j;
  j["layers"] = nlohmann::ordered_json::array();
  for (const auto& l : v.layers) {
    auto e = err(l.error);
    j["layers"].push_back({{"device", l.device},
                           {"hardware", l.hardware},
                           {"profile_model", l.profile_model},
                           {"model", l.model.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(l.model)},
                           {"tp", l.tp},
                           {"error", e}});
  }
  j["ops"] = nlohmann::ordered_json::array();
  for (const auto& o : v.ops) j["ops"].push_back({{"device", o.device}, {"op", o.op}, {"error", err(o.error)}});
  j["all_reduce"] = nlohmann::ordered_json::array();
  for (const auto& a : v.all_reduce)
    j["all_reduce"].push_back(
        {{"topology", a.topology},
         {"hardware", a.hardware},
         {"devices", a.devices},
         {"modelled", a.note.empty()},
         {"error", err(a.error)}});
  return j;
}

}  // namespace seer
