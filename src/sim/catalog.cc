#include "sim/catalog.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "model/model_config.h"

namespace seer {
namespace {

using nlohmann::json;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("cannot open catalog file {}", path);
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    fail("{}: not valid JSON: {}", path, e.what());
  }
}

// Reads a number at obj[key]; `where` names the file and entry for the message.
double number(const json& obj, const char* key, const std::string& where, bool required = true,
              double fallback = 0) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    if (required) fail("{}: missing field '{}' (a number)", where, key);
    return fallback;
  }
  if (!it->is_number()) fail("{}: field '{}' must be a number, got {}", where, key, it->dump());
  return it->get<double>();
}

double positive(const json& obj, const char* key, const std::string& where) {
  double v = number(obj, key, where);
  if (!(v > 0)) fail("{}: field '{}' must be positive, got {}", where, key, v);
  return v;
}

int positive_int(const json& obj, const char* key, const std::string& where, int fallback = 0) {
  double v = fallback > 0 ? number(obj, key, where, false, fallback) : number(obj, key, where);
  if (!(v >= 1) || v > (1 << 24) || v != static_cast<double>(static_cast<int64_t>(v)))
    fail("{}: field '{}' must be a positive integer, got {}", where, key, v);
  return static_cast<int>(v);
}

int nonnegative_int(const json& obj, const char* key, const std::string& where) {
  double v = number(obj, key, where, false, 0.0);
  if (!(v >= 0) || v > (1 << 24) || v != static_cast<double>(static_cast<int64_t>(v)))
    fail("{}: field '{}' must be a non-negative integer, got {}", where, key, v);
  return static_cast<int>(v);
}

double fraction(const json& obj, const char* key, const std::string& where, double upper = 1.0) {
  double v = number(obj, key, where, false, 1.0);
  if (!(v > 0 && v <= upper)) fail("{}: efficiency '{}' must be in (0, {}], got {}", where, key, upper, v);
  return v;
}

bool flag(const json& obj, const char* key, const std::string& where, bool fallback) {
  auto it = obj.find(key);
  if (it == obj.end()) return fallback;
  if (!it->is_boolean()) fail("{}: field '{}' must be true or false, got {}", where, key, it->dump());
  return it->get<bool>();
}

const json& section(const json& doc, const char* key, const std::string& path) {
  auto it = doc.find(key);
  if (!doc.is_object() || it == doc.end() || !it->is_object())
    fail("{}: expected a top-level object with an object field '{}'", path, key);
  return *it;
}

HardwareSpec parse_hardware(const std::string& name, const json& e, const std::string& path) {
  const std::string where = fmt::format("{}: hardware '{}'", path, name);
  if (!e.is_object()) fail("{}: expected an object", where);
  HardwareSpec h;
  h.name = name;
  if (auto d = e.find("description"); d != e.end() && d->is_string()) h.description = d->get<std::string>();
  h.memory_bytes = static_cast<int64_t>(positive(e, "memory_bytes", where));
  h.memory_bandwidth = positive(e, "memory_bandwidth", where);
  h.peak_flops = positive(e, "peak_flops", where);
  h.host_link_bandwidth = positive(e, "host_link_bandwidth", where);
  h.interconnect_bandwidth = positive(e, "interconnect_bandwidth", where);
  h.iteration_overhead_s = number(e, "iteration_overhead_s", where, false, 0.0);
  h.all_reduce_latency_s = number(e, "all_reduce_latency_s", where, false, 0.0);
  h.kernel_latency_s = number(e, "kernel_latency_s", where, false, 0.0);
  h.send_recv_bandwidth = number(e, "send_recv_bandwidth", where, false, 0.0);
  h.send_recv_latency_s = number(e, "send_recv_latency_s", where, false, 0.0);
  h.network_bandwidth = number(e, "network_bandwidth", where, false, 0.0);
  h.network_latency_s = number(e, "network_latency_s", where, false, 0.0);
  h.gpus_per_node = positive_int(e, "gpus_per_node", where, 8);
  if (h.iteration_overhead_s < 0 || h.all_reduce_latency_s < 0 || h.kernel_latency_s < 0 ||
      h.send_recv_latency_s < 0 || h.network_latency_s < 0)
    fail("{}: overheads must not be negative", where);
  if (h.send_recv_bandwidth < 0 || h.network_bandwidth < 0) fail("{}: bandwidths must not be negative", where);
  if (auto eff = e.find("efficiency"); eff != e.end()) {
    if (!eff->is_object()) fail("{}: field 'efficiency' must be an object", where);
    const std::string ew = where + " efficiency";
    h.efficiency.memory = fraction(*eff, "memory", ew);
    h.efficiency.compute = fraction(*eff, "compute", ew, kMaxLinearCompute);
    h.efficiency.attention_memory = fraction(*eff, "attention_memory", ew);
    h.efficiency.attention_compute = fraction(*eff, "attention_compute", ew);
    h.efficiency.host_link = fraction(*eff, "host_link", ew);
    h.efficiency.interconnect = fraction(*eff, "interconnect", ew);
    h.efficiency.elementwise = fraction(*eff, "elementwise", ew);
  }
  if (auto regimes = e.find("linear_regimes"); regimes != e.end()) {
    if (!regimes->is_array()) fail("{}: field 'linear_regimes' must be an array", where);
    for (const auto& r : *regimes) {
      const std::string rw = where + " linear_regimes";
      if (!r.is_object()) fail("{}: expected objects, got {}", rw, r.dump());
      KernelRegime k{positive_int(r, "min_tokens", rw), fraction(r, "memory", rw),
                     fraction(r, "compute", rw, kMaxLinearCompute),
                     number(r, "overlap", rw, false, 1.0)};
      if (!(k.overlap >= 1 && k.overlap <= 64)) fail("{}: 'overlap' must be in [1, 64], got {}", rw, k.overlap);
      if (!h.linear_regimes.empty() && k.min_tokens <= h.linear_regimes.back().min_tokens)
        fail("{}: min_tokens must increase, got {} after {}", rw, k.min_tokens, h.linear_regimes.back().min_tokens);
      h.linear_regimes.push_back(k);
    }
  }
  return h;
}

ModelSpec parse_model(const std::string& name, const json& e, const std::string& path) {
  const std::string where = fmt::format("{}: model '{}'", path, name);
  if (!e.is_object()) fail("{}: expected an object", where);
  ModelSpec m;
  m.name = name;
  m.layers = positive_int(e, "layers", where);
  m.hidden = positive_int(e, "hidden", where);
  m.heads = positive_int(e, "heads", where);
  m.kv_heads = positive_int(e, "kv_heads", where, m.heads);
  m.head_dim = positive_int(e, "head_dim", where, std::max(1, m.hidden / m.heads));
  m.ffn = positive_int(e, "ffn", where);
  m.vocab = positive_int(e, "vocab", where);
  m.max_context = positive_int(e, "max_context", where, 2048);
  m.gated_ffn = flag(e, "gated_ffn", where, true);
  m.tied_embeddings = flag(e, "tied_embeddings", where, false);
  m.parallel_block = flag(e, "parallel_block", where, false);
  m.sliding_window = nonnegative_int(e, "sliding_window", where);
  m.local_layers = nonnegative_int(e, "local_layers", where);
  m.experts = nonnegative_int(e, "experts", where);
  m.experts_used = nonnegative_int(e, "experts_used", where);
  if (m.local_layers > m.layers) fail("{}: local_layers {} exceeds layers {}", where, m.local_layers, m.layers);
  if (m.local_layers > 0 && m.sliding_window == 0) fail("{}: local_layers needs a sliding_window", where);
  if (m.experts_used > m.experts || (m.experts > 0 && m.experts_used == 0))
    fail("{}: experts_used must be in [1, experts] for a mixture of experts", where);
  if (m.heads % m.kv_heads != 0)
    fail("{}: heads {} is not a multiple of kv_heads {}", where, m.heads, m.kv_heads);
  return m;
}

ClusterSpec parse_cluster(const std::string& name, const json& e, const std::string& path) {
  const std::string where = fmt::format("{}: cluster '{}'", path, name);
  if (!e.is_object()) fail("{}: expected an object", where);
  ClusterSpec c;
  c.name = name;
  c.description = e.value("description", "");
  auto hw = e.find("hardware");
  if (hw == e.end() || !hw->is_string()) fail("{}: missing field 'hardware' (a hardware entry's name)", where);
  c.hardware = hw->get<std::string>();
  c.tp = positive_int(e, "tp", where, 1);
  c.pp = positive_int(e, "pp", where, 1);
  c.gpus_per_node = e.contains("gpus_per_node") ? positive_int(e, "gpus_per_node", where) : 0;
  return c;
}

template <typename T>
const T& find_named(const std::vector<T>& items, const std::string& name, const char* what,
                    const std::string& dir) {
  for (const auto& it : items)
    if (lower(it.name) == lower(name)) return it;
  std::string known;
  for (const auto& it : items) known += (known.empty() ? "" : ", ") + it.name;
  fail("unknown {} '{}' (catalog {}); known: {}", what, name, dir, known);
}

nlohmann::ordered_json hardware_to_json(const HardwareSpec& h) {
  nlohmann::ordered_json j{{"description", h.description},
              {"memory_bytes", h.memory_bytes},
              {"memory_bandwidth", h.memory_bandwidth},
              {"peak_flops", h.peak_flops},
              {"host_link_bandwidth", h.host_link_bandwidth},
              {"interconnect_bandwidth", h.interconnect_bandwidth},
              {"efficiency",
               {{"memory", h.efficiency.memory},
                {"compute", h.efficiency.compute},
                {"attention_memory", h.efficiency.attention_memory},
                {"attention_compute", h.efficiency.attention_compute},
                {"host_link", h.efficiency.host_link},
                {"interconnect", h.efficiency.interconnect},
                {"elementwise", h.efficiency.elementwise}}},
              {"iteration_overhead_s", h.iteration_overhead_s},
              {"all_reduce_latency_s", h.all_reduce_latency_s},
              {"kernel_latency_s", h.kernel_latency_s}};
  // The pipeline links only where set, so an entry without them stays as it was.
  if (h.send_recv_bandwidth > 0) j["send_recv_bandwidth"] = h.send_recv_bandwidth;
  if (h.send_recv_latency_s > 0) j["send_recv_latency_s"] = h.send_recv_latency_s;
  if (h.network_bandwidth > 0) j["network_bandwidth"] = h.network_bandwidth;
  if (h.network_latency_s > 0) j["network_latency_s"] = h.network_latency_s;
  if (h.gpus_per_node != 8) j["gpus_per_node"] = h.gpus_per_node;
  if (!h.linear_regimes.empty()) {
    auto regimes = nlohmann::ordered_json::array();
    for (const auto& r : h.linear_regimes)
      regimes.push_back(
          {{"min_tokens", r.min_tokens}, {"memory", r.memory}, {"compute", r.compute}, {"overlap", r.overlap}});
    j["linear_regimes"] = regimes;
  }
  return j;
}

// Compact JSON for the hand-edited catalog: numbers as 2.039e+12 rather than
// 2039000000000.0, nested objects on one line.
std::string compact(const nlohmann::ordered_json& v) {
  if (v.is_number_float()) return fmt::format("{:.10g}", v.get<double>());
  if (v.is_object()) {
    std::string out = "{";
    for (const auto& [k, x] : v.items()) out += (out.size() > 1 ? ", " : "") + json(k).dump() + ": " + compact(x);
    return out + "}";
  }
  if (v.is_array()) {
    std::string out = "[";
    for (const auto& x : v) out += (out.size() > 1 ? ", " : "") + compact(x);
    return out + "]";
  }
  return v.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

// Two levels of indentation (document, entries), the entries' fields one per line.
std::string format_catalog(const nlohmann::ordered_json& doc) {
  std::string out = "{\n";
  size_t i = 0;
  for (const auto& [key, val] : doc.items()) {
    out += "  " + json(key).dump() + ": ";
    if (val.is_object() && !val.empty()) {
      out += "{\n";
      size_t j = 0;
      for (const auto& [name, entry] : val.items()) {
        out += "    " + json(name).dump() + ": ";
        if (entry.is_object() && !entry.empty()) {
          out += "{\n";
          size_t k = 0;
          for (const auto& [field, x] : entry.items())
            out += "      " + json(field).dump() + ": " + compact(x) + (++k < entry.size() ? ",\n" : "\n");
          out += "    }";
        } else {
          out += compact(entry);
        }
        out += ++j < val.size() ? ",\n" : "\n";
      }
      out += "  }";
    } else {
      out += compact(val);
    }
    out += ++i < doc.size() ? ",\n" : "\n";
  }
  return out + "}\n";
}

}  // namespace

KernelRegime HardwareSpec::linear_regime(double tokens) const {
  KernelRegime regime{1, efficiency.memory, efficiency.compute, 1.0};
  for (const auto& r : linear_regimes)
    if (tokens >= r.min_tokens) regime = r;
  return regime;
}

int64_t ModelSpec::layer_linear_params() const {
  int64_t q = int64_t{hidden} * heads * head_dim;
  int64_t kv = 2 * int64_t{hidden} * kv_heads * head_dim;
  int64_t o = int64_t{heads} * head_dim * hidden;
  int64_t mlp = (gated_ffn ? 3 : 2) * int64_t{hidden} * ffn * std::max(1, experts);
  int64_t router = int64_t{hidden} * experts;
  return q + kv + o + mlp + router;
}

int64_t ModelSpec::parameter_count() const {
  int64_t embed = int64_t{vocab} * hidden * (tied_embeddings ? 1 : 2);
  return layer_linear_params() * layers + embed;
}

ModelSpec model_spec_from_config(const ModelConfig& c) {
  ModelSpec m;
  m.name = c.name.empty() ? c.arch : c.name;
  m.layers = c.n_layers;
  m.hidden = c.dim;
  m.heads = c.n_heads;
  m.kv_heads = c.n_kv_heads;
  m.head_dim = c.head_dim;
  m.ffn = c.ffn_dim;
  m.vocab = c.vocab_size;
  m.max_context = c.context_length;
  m.gated_ffn = true;
  m.tied_embeddings = c.tied_embeddings;
  m.sliding_window = c.sliding_window;
  for (int l = 0; l < c.n_layers; ++l) m.local_layers += c.layer_is_local(l) ? 1 : 0;
  m.experts = c.n_experts;
  m.experts_used = c.n_experts_used;
  return m;
}

Catalog Catalog::load(const std::string& dir) {
  Catalog c;
  c.dir_ = dir;
  const std::string hw_path = (std::filesystem::path(dir) / "hardware.json").string();
  const std::string model_path = (std::filesystem::path(dir) / "models.json").string();
  json hw = read_json(hw_path);
  for (const auto& [name, e] : section(hw, "hardware", hw_path).items())
    c.hardware_.push_back(parse_hardware(name, e, hw_path));
  if (auto tiers = hw.find("shared_kv_tiers"); tiers != hw.end()) {
    if (!tiers->is_object()) fail("{}: field 'shared_kv_tiers' must be an object", hw_path);
    for (const auto& [name, e] : tiers->items()) {
      const std::string where = fmt::format("{}: shared KV tier '{}'", hw_path, name);
      if (!e.is_object()) fail("{}: expected an object", where);
      SharedTierSpec t;
      t.name = name;
      t.description = e.value("description", "");
      t.latency_s = number(e, "latency_s", where);
      if (!(t.latency_s >= 0)) fail("{}: field 'latency_s' must be >= 0, got {}", where, t.latency_s);
      t.bandwidth = positive(e, "bandwidth", where);
      c.shared_tiers_.push_back(t);
    }
  }
  if (auto clusters = hw.find("clusters"); clusters != hw.end()) {
    if (!clusters->is_object()) fail("{}: field 'clusters' must be an object", hw_path);
    for (const auto& [name, e] : clusters->items()) c.clusters_.push_back(parse_cluster(name, e, hw_path));
    for (const auto& cl : c.clusters_) c.hardware(cl.hardware);  // names a known entry
  }
  json models = read_json(model_path);
  for (const auto& [name, e] : section(models, "models", model_path).items())
    c.models_.push_back(parse_model(name, e, model_path));
  return c;
}

std::string Catalog::default_dir() {
  if (const char* env = std::getenv("SEER_CATALOG_DIR"); env && *env) return env;
  return (std::filesystem::path(SEER_DATA_DIR) / "catalog").string();
}

const HardwareSpec& Catalog::hardware(const std::string& name) const {
  return find_named(hardware_, name, "hardware", dir_);
}

const ModelSpec& Catalog::model(const std::string& name) const {
  return find_named(models_, name, "model", dir_);
}

const SharedTierSpec& Catalog::shared_tier(const std::string& name) const {
  return find_named(shared_tiers_, name, "shared KV tier", dir_);
}

const ClusterSpec& Catalog::cluster(const std::string& name) const {
  return find_named(clusters_, name, "cluster", dir_);
}

std::vector<std::string> Catalog::cluster_names() const {
  std::vector<std::string> out;
  for (const auto& c : clusters_) out.push_back(c.name);
  return out;
}

std::vector<std::string> Catalog::hardware_names() const {
  std::vector<std::string> out;
  for (const auto& h : hardware_) out.push_back(h.name);
  return out;
}

std::vector<std::string> Catalog::model_names() const {
  std::vector<std::string> out;
  for (const auto& m : models_) out.push_back(m.name);
  return out;
}

void write_hardware_entry(const std::string& path, const HardwareSpec& hw) {
  // ordered_json keeps the file's entry order and comment where they were.
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();
  if (std::filesystem::exists(path)) {
    std::ifstream in(path);
    try {
      doc = nlohmann::ordered_json::parse(in);
    } catch (const json::parse_error& e) {
      fail("{}: not valid JSON: {}", path, e.what());
    }
  }
  if (!doc.is_object()) fail("{}: expected a JSON object at the top level", path);
  if (!doc.contains("hardware")) doc["hardware"] = nlohmann::ordered_json::object();
  if (!doc["hardware"].is_object()) fail("{}: field 'hardware' must be an object", path);
  doc["hardware"][hw.name] = hardware_to_json(hw);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) fail("cannot write {}", tmp);
    out << format_catalog(doc);
    if (!out) fail("error writing {}", tmp);
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace seer
