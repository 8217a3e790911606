// Reference vectors for seer's GGML block formats, made with llama.cpp's libggml
// (built by scripts/reference/make_quant_refs.sh; not part of seer's build).
//
// For each type: quantizes the small input of tests/model/quant_ref_input.h with
// ggml's quantizer (ggml_quantize_chunk, no importance matrix: what llama-quantize
// does without --imatrix) and writes <dir>/<TYPE>.bin = the quantized bytes followed
// by ggml's dequantization of them (to_float, f32 little-endian). For the larger
// input it writes only the RMSE of ggml's quantize -> dequantize against the input
// into <dir>/manifest.txt, with the shapes, seeds and input hashes.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ggml.h"
#include "model/quant_ref_input.h"

extern "C" void quantize_row_q8_K_ref(const float* x, void* y, int64_t k);
extern "C" void dequantize_row_q8_K(const void* x, float* y, int64_t k);

namespace {

struct RefType {
  ggml_type type;
  const char* name;
};

const RefType kTypes[] = {
    {GGML_TYPE_Q4_0, "Q4_0"},   {GGML_TYPE_Q4_1, "Q4_1"},     {GGML_TYPE_Q5_0, "Q5_0"},
    {GGML_TYPE_Q5_1, "Q5_1"},   {GGML_TYPE_Q8_0, "Q8_0"},     {GGML_TYPE_Q2_K, "Q2_K"},
    {GGML_TYPE_Q3_K, "Q3_K"},   {GGML_TYPE_Q4_K, "Q4_K"},     {GGML_TYPE_Q5_K, "Q5_K"},
    {GGML_TYPE_Q6_K, "Q6_K"},   {GGML_TYPE_Q8_K, "Q8_K"},     {GGML_TYPE_IQ4_NL, "IQ4_NL"},
    {GGML_TYPE_IQ4_XS, "IQ4_XS"},
};

// Q8_K is an activation format: ggml_quantize_chunk does not take it and its traits
// in libggml-base have no from_float_ref/to_float; its reference functions are
// exported by name (declared in ggml's internal ggml-quants.h, above).
std::vector<uint8_t> quantize(ggml_type t, const std::vector<float>& x, int64_t rows, int64_t cols) {
  const size_t row_bytes = ggml_row_size(t, cols);
  std::vector<uint8_t> q(row_bytes * rows);
  if (t == GGML_TYPE_Q8_K) {
    for (int64_t r = 0; r < rows; ++r)
      quantize_row_q8_K_ref(x.data() + r * cols, q.data() + r * row_bytes, cols);
  } else {
    ggml_quantize_chunk(t, x.data(), q.data(), 0, rows, cols, nullptr);
  }
  return q;
}

std::vector<float> dequantize(ggml_type t, const std::vector<uint8_t>& q, int64_t rows, int64_t cols) {
  const size_t row_bytes = ggml_row_size(t, cols);
  std::vector<float> y(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    if (t == GGML_TYPE_Q8_K)
      dequantize_row_q8_K(q.data() + r * row_bytes, y.data() + r * cols, cols);
    else
      ggml_get_type_traits(t)->to_float(q.data() + r * row_bytes, y.data() + r * cols, cols);
  }
  return y;
}

double rmse(const std::vector<float>& a, const std::vector<float>& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
  return std::sqrt(sum / a.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  using seer::quant_ref::InputShape;
  const InputShape ex = seer::quant_ref::kExactInput, rm = seer::quant_ref::kRmseInput;
  const std::vector<float> x = seer::quant_ref::make_input(ex.rows, ex.cols, ex.seed);
  const std::vector<float> big = seer::quant_ref::make_input(rm.rows, rm.cols, rm.seed);

  FILE* manifest = std::fopen((dir + "/manifest.txt").c_str(), "w");
  if (!manifest) return 1;
  std::fprintf(manifest, "# written by scripts/reference/make_quant_refs.sh (ggml_quant_ref.cc)\n");
  std::fprintf(manifest, "exact_input %lld %lld %llu %016llx\n", (long long)ex.rows, (long long)ex.cols,
               (unsigned long long)ex.seed, (unsigned long long)seer::quant_ref::input_hash(x));
  std::fprintf(manifest, "rmse_input %lld %lld %llu %016llx\n", (long long)rm.rows, (long long)rm.cols,
               (unsigned long long)rm.seed, (unsigned long long)seer::quant_ref::input_hash(big));
  for (const RefType& t : kTypes) {
    const std::vector<uint8_t> q = quantize(t.type, x, ex.rows, ex.cols);
    const std::vector<float> y = dequantize(t.type, q, ex.rows, ex.cols);
    FILE* f = std::fopen((dir + "/" + t.name + ".bin").c_str(), "wb");
    if (!f) return 1;
    std::fwrite(q.data(), 1, q.size(), f);
    std::fwrite(y.data(), sizeof(float), y.size(), f);
    std::fclose(f);
    const double err = rmse(big, dequantize(t.type, quantize(t.type, big, rm.rows, rm.cols), rm.rows, rm.cols));
    std::fprintf(manifest, "type %s %zu %.9g\n", t.name, ggml_row_size(t.type, ex.cols), err);
    std::printf("%-7s %6zu bytes  rmse %.6g\n", t.name, q.size(), err);
  }
  std::fclose(manifest);
  return 0;
}
