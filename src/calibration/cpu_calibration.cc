#include "calibration/cpu_calibration.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include <cblas.h>
#include <fmt/format.h>

#include "backend/backend.h"
#include "common/error.h"
#include "kernels/dot_kernels.h"
#include "kernels/matmul.h"
#include "model/model_file.h"

namespace seer {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

template <typename F>
double best_of(int n, F&& f) {
  double best = 1e300;
  for (int i = 0; i < n; ++i) {
    auto t0 = Clock::now();
    f();
    best = std::min(best, seconds_since(t0));
  }
  return best;
}

struct Shape {
  std::string label;
  int32_t batch;    // sequences
  int32_t tokens;   // new tokens per sequence
  int32_t context;  // cached tokens before them
};

std::vector<Shape> shapes_for(const ModelConfig& c, bool quick) {
  std::vector<Shape> all;
  auto add = [&](int32_t b, int32_t t, int32_t ctx) {
    if (t + ctx > c.context_length) return;
    all.push_back({t == 1 ? fmt::format("decode b={} ctx={}", b, ctx) : fmt::format("prefill {} ctx={}", t, ctx), b,
                   t, ctx});
  };
  if (quick) {
    for (int32_t t : {16, 64}) add(1, t, 0);
    for (int32_t b : {1, 4}) add(b, 1, 64);
    return all;
  }
  for (int32_t t : {16, 64, 256, 512}) add(1, t, 0);
  add(1, 128, 512);
  // Decode batches in each of the backend's matmul regimes (one row, tiles, GEMM).
  for (int32_t ctx : {64, 512})
    for (int32_t b : {1, 2, 4, 8, 16, 32, 48}) add(b, 1, ctx);
  return all;
}

ForwardBatch batch_for(const Shape& s, int32_t block_size) {
  ForwardBatch fb;
  const int32_t blocks = (s.context + s.tokens + block_size - 1) / block_size;
  for (int32_t q = 0; q < s.batch; ++q) {
    ForwardSequence seq;
    for (int32_t b = 0; b < blocks; ++b) seq.block_table.push_back(q * blocks + b);
    fb.sequences.push_back(std::move(seq));
    for (int32_t i = 0; i < s.tokens; ++i) fb.add(q, (q * 7 + i) % 200 + 1, s.context + i, i == s.tokens - 1);
  }
  return fb;
}

// The backend's matmul kernels as cost-model regimes, each with its own fitted
// efficiencies: one-row streaming up to where row_group() starts tiling (float
// weights), tiles up to the GEMM threshold of the layers' weight type, OpenBLAS from there.
std::vector<KernelRegime> matmul_regimes(const ModelWeights& w) {
  const GgmlType type = w.layers.empty() ? w.output.type : w.layers.front().w_up.type;
  const int64_t gemm = MatmulContext::gemm_min_batch(type);
  const int64_t last = std::min<int64_t>(gemm, 1 << 16);  // batches beyond any step's tokens
  int64_t tiled = 1;
  while (tiled < last && row_group(type, tiled) == 1) ++tiled;
  std::vector<KernelRegime> out{{1, 0.5, 0.5, 2.0}};
  if (tiled < last) out.push_back({static_cast<int>(tiled), 0.5, 0.5, 2.0});
  if (gemm != MatmulContext::kNeverGemm) out.push_back({static_cast<int>(gemm), 0.5, 0.5, 1.0});
  return out;
}

}  // namespace

HostPeaks measure_host_peaks(int threads, bool quick) {
  HostPeaks p;
  p.memory_bytes = static_cast<int64_t>(::sysconf(_SC_PHYS_PAGES)) * ::sysconf(_SC_PAGE_SIZE);
  const int n = threads > 0 ? threads : std::max(1u, std::thread::hardware_concurrency());

  // Streaming read of a buffer well beyond the caches, split over the threads.
  // Integer sums in eight independent chains keep the loop bound by memory, not
  // by add latency.
  const size_t count = quick ? size_t{8} << 20 : size_t{64} << 20;  // 64 or 512 MiB
  std::vector<uint64_t> buf(count, 1);
  std::vector<uint64_t> sums(static_cast<size_t>(n));
  double t = best_of(3, [&] {
    std::vector<std::thread> pool;
    for (int i = 0; i < n; ++i)
      pool.emplace_back([&, i] {
        const size_t lo = count * i / n, hi = count * (i + 1) / n;
        uint64_t s[8] = {};
        for (size_t j = lo; j + 8 <= hi; j += 8)
          for (int k = 0; k < 8; ++k) s[k] += buf[j + k];
        sums[i] = s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7];
      });
    for (auto& th : pool) th.join();
  });
  uint64_t total = 0;
  for (uint64_t v : sums) total += v;
  if (total == 0) fail("bandwidth probe: the buffer read back as zeros");  // keeps the reads alive
  p.memory_bandwidth = static_cast<double>(count * sizeof(uint64_t)) / t;

  const int m = quick ? 256 : 1024;
  std::vector<float> a(size_t(m) * m, 0.5f), b(size_t(m) * m, 0.25f), c(size_t(m) * m);
  openblas_set_num_threads(n);
  double g = best_of(4, [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.0f, a.data(), m, b.data(), m, 0.0f, c.data(), m);
  });
  p.peak_flops = 2.0 * m * m * m / g;
  return p;
}

CalibrationResult calibrate_cpu(const CalibrateOptions& opts) {
  if (opts.repeats < 1 || opts.repeats > 100) fail("--repeats must be in [1, 100], got {}", opts.repeats);
  auto file = ModelFile::open(opts.model_path);
  const ModelConfig& cfg = file->config();
  CalibrationResult r;
  r.model = model_spec_from_config(cfg);
  if (cfg.name.empty()) r.model.name = std::filesystem::path(opts.model_path).stem().string();
  r.cost.weight_bytes_per_param =
      static_cast<double>(file->weights().total_bytes()) / static_cast<double>(r.model.parameter_count());

  auto shapes = shapes_for(cfg, opts.quick);
  if (shapes.empty()) fail("{}: context length {} is too short for the calibration shapes", opts.model_path,
                           cfg.context_length);
  const int32_t block_size = 16;
  int32_t blocks = 0;
  for (const auto& s : shapes)
    blocks = std::max(blocks, s.batch * ((s.context + s.tokens + block_size - 1) / block_size));
  CpuBackendOptions bo;
  bo.kv.block_size = block_size;
  bo.kv.device_blocks = blocks;
  bo.kv.host_blocks = 1;
  bo.threads = opts.threads;
  auto backend = make_cpu_backend(*file, bo);
  const double kv_elements = 2.0 * cfg.n_layers * cfg.n_kv_heads * cfg.head_dim;
  r.cost.kv_bytes_per_element = static_cast<double>(backend->kv_bytes_per_token()) / kv_elements;

  std::vector<float> logits;
  for (const auto& s : shapes) {
    ForwardBatch fb = batch_for(s, block_size);
    backend->forward(fb, logits);  // warm-up: page in weights, size scratch buffers
    std::vector<double> times;
    for (int i = 0; i < opts.repeats; ++i) {
      auto t0 = Clock::now();
      backend->forward(fb, logits);
      times.push_back(seconds_since(t0));
    }
    std::sort(times.begin(), times.end());
    MeasuredIteration m;
    m.label = s.label;
    m.seconds = times[times.size() / 2];
    m.shape.chunks.assign(static_cast<size_t>(s.batch), ChunkShape{s.tokens, s.context, true});
    r.samples.push_back(std::move(m));
  }

  HostPeaks peaks = measure_host_peaks(opts.threads, opts.quick);
  HardwareSpec start;
  start.name = "cpu";
  start.memory_bytes = peaks.memory_bytes;
  start.memory_bandwidth = peaks.memory_bandwidth;
  start.peak_flops = peaks.peak_flops;
  start.host_link_bandwidth = peaks.memory_bandwidth;  // the host tier is RAM as well
  start.interconnect_bandwidth = peaks.memory_bandwidth;
  start.efficiency = {0.5, 0.5, 0.5, 0.5, 0.5, 1.0};
  start.iteration_overhead_s = 1e-4;
  start.linear_regimes = matmul_regimes(file->weights());
  r.error_before = model_error(CostModel(r.model, start, r.cost), r.samples);
  r.cpu = fit_efficiency(r.model, start, r.cost, r.samples);
  r.error_after = model_error(CostModel(r.model, r.cpu, r.cost), r.samples);
  const int threads = opts.threads > 0 ? opts.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  r.cpu.description = fmt::format(
      "this machine's CPU ({} threads), fitted by seer sim calibrate on {} ({} shapes): mean error {:.1f}%, max {:.1f}%",
      threads, std::filesystem::path(opts.model_path).filename().string(), r.samples.size(), 100 * r.error_after.mean_relative, 100 * r.error_after.max_relative);
  return r;
}

}  // namespace seer
