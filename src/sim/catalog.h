#pragma once
// The simulator's catalogs: hardware (accelerators and the calibrated `cpu`) and
// model shapes, read from JSON data files (data/catalog/{hardware,models}.json) so
// adding a GPU or a model is a data change, not a code change.
#include <cstdint>
#include <string>
#include <vector>

namespace seer {

struct ModelConfig;

// Fractions of the peak a real kernel reaches; the cost model divides by them.
struct Efficiency {
  double memory = 1.0;             // weight streaming in the linear layers
  double compute = 1.0;            // GEMMs of the linear layers
  double attention_memory = 1.0;   // reading K/V
  double attention_compute = 1.0;  // QK^T and PV
  double host_link = 1.0;          // swap to/from the host tier
  double interconnect = 1.0;       // tensor-parallel all-reduce
  double elementwise = 1.0;        // norms, RoPE, activation, residual add (activation traffic)
};

// Linear layers whose row count (tokens in the iteration) is at least `min_tokens`
// run another kernel and reach other fractions of the peaks: the CPU backend streams
// one row at a time for one or two rows, register tiles up to its GEMM threshold and
// OpenBLAS above it (docs/kernels.md), three regimes one smooth roofline cannot fit.
// `overlap` says how far the weight streaming and the arithmetic run at the same
// time: the GEMM takes the p-norm (mem^p + flops^p)^(1/p) of the two times with
// p = overlap; 1 is one after the other (their sum, as Vidur's GPU profiles and a
// dequantize-then-GEMM show), large p their max (full overlap); the CPU's one-row
// dot kernels measure in between.
// The linear layers' compute factors may exceed 1: they are relative to peak_flops, the
// CPU entry's f32 SGEMM peak, while quantized weights run int8 dot products and GEMM
// tiles, and with VNNI one instruction does 4x the multiply-adds of an f32 FMA. Bounded
// at 1, `seer sim calibrate` predicted int8 prefill and batched decode at ~2x their
// measured time (mean error 59 %, 2026-11-26; 3.8 % with this bound).
inline constexpr double kMaxLinearCompute = 4.0;

struct KernelRegime {
  int min_tokens = 1;
  double memory = 1.0;
  double compute = 1.0;
  double overlap = 1.0;  // p >= 1
};

struct HardwareSpec {
  std::string name;
  std::string description;
  int64_t memory_bytes = 0;          // device memory of one accelerator
  double memory_bandwidth = 0;       // bytes/s
  double peak_flops = 0;             // dense FP16 FLOP/s
  double host_link_bandwidth = 0;    // bytes/s per direction (PCIe)
  double interconnect_bandwidth = 0; // bytes/s per direction (NVLink), for all-reduce
  Efficiency efficiency;
  // Sorted by min_tokens; below the first one the GEMMs use efficiency.memory and
  // .compute. Empty for the GPUs.
  std::vector<KernelRegime> linear_regimes;
  double iteration_overhead_s = 0;   // fixed per iteration (launches, sampling, bookkeeping)
  double all_reduce_latency_s = 0;   // fixed per all-reduce
  double kernel_latency_s = 0;       // floor of one kernel (launch + tail), per op per layer
  // Pipeline parallelism: one point-to-point send of activations between two GPUs
  // of a node (0: interconnect_bandwidth x efficiency.interconnect and
  // all_reduce_latency_s) and between two nodes (0: not modelled; a pipeline that
  // crosses nodes is refused). Effective figures: no efficiency factor applies.
  double send_recv_bandwidth = 0;    // bytes/s
  double send_recv_latency_s = 0;
  double network_bandwidth = 0;      // bytes/s
  double network_latency_s = 0;
  int gpus_per_node = 8;

  // The regime of a GEMM over `tokens` rows (efficiency.memory and .compute,
  // overlap 1, below the first listed one).
  KernelRegime linear_regime(double tokens) const;
};

struct ModelSpec {
  std::string name;
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;
  int head_dim = 0;  // hidden / heads unless the catalog says otherwise
  int ffn = 0;
  int vocab = 0;
  int max_context = 0;
  bool gated_ffn = true;        // SwiGLU: gate, up, down; else up, down
  bool tied_embeddings = false;
  bool parallel_block = false;  // attention and MLP share one input norm (phi-2, GPT-J)
  // Sliding-window attention: local_layers of the layers attend to the last
  // sliding_window positions only (their attention FLOPs and K/V reads are capped).
  int sliding_window = 0;
  int local_layers = 0;
  // Mixture of experts: `experts` FFNs of size ffn per layer, experts_used of them
  // run per token (0: a dense FFN).
  int experts = 0;
  int experts_used = 0;

  // Parameters of the linear layers of one transformer block.
  int64_t layer_linear_params() const;
  int64_t parameter_count() const;
};

// A KV tier shared by replicas over the network (kv/shared_kv_tier.h): one fetch
// takes latency_s + bytes / bandwidth.
struct SharedTierSpec {
  std::string name;
  std::string description;
  double latency_s = 0;  // per fetch (one pipelined round trip)
  double bandwidth = 0;  // bytes/s
  double fetch_time(int64_t bytes) const { return latency_s + static_cast<double>(bytes) / bandwidth; }
};

// A named multi-GPU setup (hardware.json's optional "clusters" section): which
// accelerator, how many devices per tensor-parallel group (tp) and pipeline stages
// (pp), tp x pp GPUs in all, `gpus_per_node` to a node (0: the hardware's).
struct ClusterSpec {
  std::string name;
  std::string description;
  std::string hardware;
  int tp = 1;
  int pp = 1;
  int gpus_per_node = 0;
};

// The shape of a real model file (for calibration against the CPU backend).
ModelSpec model_spec_from_config(const ModelConfig& c);

class Catalog {
 public:
  // Reads <dir>/hardware.json and <dir>/models.json; throws seer::Error naming the
  // file and field on malformed entries.
  static Catalog load(const std::string& dir);
  // $SEER_CATALOG_DIR when set, else the source tree's data/catalog.
  static std::string default_dir();

  // Case-insensitive lookups; unknown names throw, listing the known ones.
  const HardwareSpec& hardware(const std::string& name) const;
  const ModelSpec& model(const std::string& name) const;
  // hardware.json's optional "shared_kv_tiers" section.
  const SharedTierSpec& shared_tier(const std::string& name) const;
  // hardware.json's optional "clusters" section.
  const ClusterSpec& cluster(const std::string& name) const;
  std::vector<std::string> cluster_names() const;
  std::vector<std::string> hardware_names() const;
  std::vector<std::string> model_names() const;

  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::vector<HardwareSpec> hardware_;
  std::vector<ModelSpec> models_;
  std::vector<SharedTierSpec> shared_tiers_;
  std::vector<ClusterSpec> clusters_;
};

// Inserts or replaces the entry `hw.name` in the hardware catalog file `path`
// (creating the file if absent), keeping every other entry as it is.
void write_hardware_entry(const std::string& path, const HardwareSpec& hw);

}  // namespace seer
