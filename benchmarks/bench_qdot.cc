// bench_qdot: the quantized dot kernels alone, one thread, every compiled instruction
// set (kernels/qdot.h), and their GEMM tiles where they have one (`-gemm`): a weight matrix of random blocks (fp16 scales set to small
// finite values) against n quantized activation columns, best of 5 runs.
// Usage: bench_qdot [--types q8_0,q4_k,...] [--batches 1,2,4,8,16,32] [--rows 4096] [--cols 2048]
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/dot_kernels.h"
#include "kernels/kernel_level.h"
#include "kernels/quantize_act.h"
#include "model/quant.h"

#include "bench_args.h"

namespace seer {
namespace {

using bench_args::split;

// Offsets of the fp16 scale fields, so that random blocks hold finite scales.
std::vector<size_t> fp16_fields(GgmlType t) {
  switch (t) {
    case GgmlType::Q4_1: return {0, 2};
    case GgmlType::Q5_1: return {0, 2};
    case GgmlType::Q2_K: return {offsetof(BlockQ2_K, d), offsetof(BlockQ2_K, dmin)};
    case GgmlType::Q3_K: return {offsetof(BlockQ3_K, d)};
    case GgmlType::Q4_K: return {0, 2};
    case GgmlType::Q5_K: return {0, 2};
    case GgmlType::Q6_K: return {offsetof(BlockQ6_K, d)};
    default: return {0};
  }
}

int run(const std::vector<std::string>& types, const std::vector<int>& batches, int64_t m, int64_t k) {
  std::mt19937 rng(1);
  std::printf("cpu: %s\n", cpu_summary_line().c_str());
  std::printf("bench_qdot: %lld x %lld weights, one thread, GMAC/s (weight GB/s)\n", static_cast<long long>(m),
              static_cast<long long>(k));
  for (const auto& name : types) {
    const auto type = ggml_type_from_name(name);
    const QDotKernel* ref = type ? qdot_kernel(*type, QIsa::Scalar) : nullptr;
    if (!ref || k % ref->block_elems != 0) {
      std::fprintf(stderr, "bench_qdot: %s is not a quantized type for %lld columns\n", name.c_str(),
                   static_cast<long long>(k));
      return 2;
    }
    std::vector<uint8_t> bytes(ggml_row_bytes(*type, k) * m);
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    for (size_t off = 0; off < bytes.size(); off += ref->block_bytes)
      for (size_t f : fp16_fields(*type)) {
        const uint16_t h = fp32_to_fp16(static_cast<float>(rng() % 1000) * 1e-4f);
        std::memcpy(&bytes[off + f], &h, 2);
      }
    const WeightTensor w{"w", *type, m, k, bytes.data(), bytes.size()};
    for (int n : batches) {
      std::vector<float> x(n * k);
      for (auto& v : x) v = static_cast<float>(rng() % 2001) / 1000.0f - 1.0f;
      std::vector<int8_t> q(n * k);
      std::vector<float> d(n * k / kQK), s(n * k / kQK);
      std::vector<BlockQ8_K> kb(ref->act == ActKind::Q8K ? n * k / kQK_K : 0);
      for (int r = 0; r < n; ++r) {
        quantize_act_q8(&x[r * k], k, &q[r * k], &d[r * k / kQK], &s[r * k / kQK]);
        if (!kb.empty()) quantize_act_q8k(&x[r * k], k, &kb[r * k / kQK_K]);
      }
      const QuantActs acts{q.data(), d.data(), s.data(), kb.data()};
      std::vector<float> y(n * m);
      std::printf("  %-7s n=%3d", std::string(ggml_type_name(*type)).c_str(), n);
      for (QIsa isa : kAllQIsas) {
        const QDotKernel* kern = qdot_kernel(*type, isa);
        if (!kern) continue;
        for (bool gemm : {false, true}) {
          if (gemm && !kern->gemm) continue;
          auto once = [&] {
            if (gemm)
              gemm_rows_quant_with(*kern, w, 0, m, acts, n, y.data(), m);
            else
              dot_rows_quant_with(*kern, w, 0, m, acts, n, y.data(), m);
          };
          once();  // warm-up
          double best = 1e30;
          for (int rep = 0; rep < 5; ++rep) {
            const auto t0 = std::chrono::steady_clock::now();
            once();
            best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
          }
          std::printf("  %s%s %6.1f (%5.1f)", qisa_name(isa), gemm ? "-gemm" : "", n * m * k / best * 1e-9,
                      bytes.size() / best * 1e-9);
        }
      }
      std::printf("\n");
    }
  }
  return 0;
}

}  // namespace
}  // namespace seer

int main(int argc, char** argv) {
  std::vector<std::string> types = {"q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl",
                                    "q2_k", "q3_k", "q4_k", "q5_k", "q6_k", "iq4_xs"};
  std::vector<int> batches = {1, 2, 4, 8, 16, 32};
  int64_t rows = 4096, cols = 2048;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "usage: bench_qdot [--types q8_0,q4_k,...] [--batches 1,8] [--rows N] [--cols N]\n");
      return 2;
    }
    const std::string v = argv[++i];
    if (a == "--types") types = seer::split(v);
    else if (a == "--batches") {
      batches.clear();
      for (const auto& b : seer::split(v)) batches.push_back(std::stoi(b));
    } else if (a == "--rows") rows = std::stoll(v);
    else if (a == "--cols") cols = std::stoll(v);
    else {
      std::fprintf(stderr, "bench_qdot: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  return seer::run(types, batches, rows, cols);
}
