#include "backend/test_model.h"

#include <cmath>
#include <cstring>
#include <random>

#include "model/quant.h"

namespace seer::testing {

TestModel::TestModel(const TestModelSpec& s) : rng_state_(s.seed) {
  ModelConfig& c = config_;
  c.name = "test";
  c.n_layers = s.n_layers;
  c.dim = s.dim;
  c.n_heads = s.n_heads;
  c.n_kv_heads = s.n_kv_heads;
  c.head_dim = s.dim / s.n_heads;
  c.ffn_dim = s.ffn_dim;
  c.vocab_size = s.vocab;
  c.context_length = 512;
  c.rope_base = 10000.0;
  c.rms_eps = 1e-5;
  c.qkv_bias = s.qkv_bias;
  c.rope_neox = s.rope_neox;
  c.tied_embeddings = s.tied_embeddings;
  if (s.rope_factor != 1.0) {
    c.rope_scaling.type = "linear";
    c.rope_scaling.factor = s.rope_factor;
  }
  const int64_t q_dim = int64_t{c.n_heads} * c.head_dim, kv_dim = int64_t{c.n_kv_heads} * c.head_dim;
  auto inv = [](int64_t fan_in) { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(fan_in))); };
  ModelWeights& w = weights_;
  w.token_embd = add("token_embd.weight", c.vocab_size, c.dim, s.type, 1.0f);
  w.output_norm = add("output_norm.weight", 1, c.dim, GgmlType::F32, 0.2f, 1.0f);
  w.output = s.tied_embeddings ? w.token_embd : add("output.weight", c.vocab_size, c.dim, s.type, 2 * inv(c.dim));
  for (int l = 0; l < c.n_layers; ++l) {
    LayerWeights L;
    const std::string p = "blk." + std::to_string(l) + ".";
    L.attn_norm = add(p + "attn_norm.weight", 1, c.dim, GgmlType::F32, 0.2f, 1.0f);
    // Larger Q/K weights give peaked attention, so positions really matter.
    L.wq = add(p + "attn_q.weight", q_dim, c.dim, s.type, 3 * inv(c.dim));
    L.wk = add(p + "attn_k.weight", kv_dim, c.dim, s.type, 3 * inv(c.dim));
    L.wv = add(p + "attn_v.weight", kv_dim, c.dim, s.type, inv(c.dim));
    L.wo = add(p + "attn_output.weight", c.dim, q_dim, s.type, inv(q_dim));
    if (s.qkv_bias) {
      L.bq = add(p + "attn_q.bias", 1, q_dim, GgmlType::F32, 0.5f);
      L.bk = add(p + "attn_k.bias", 1, kv_dim, GgmlType::F32, 0.5f);
      L.bv = add(p + "attn_v.bias", 1, kv_dim, GgmlType::F32, 0.5f);
    }
    L.ffn_norm = add(p + "ffn_norm.weight", 1, c.dim, GgmlType::F32, 0.2f, 1.0f);
    L.w_gate = add(p + "ffn_gate.weight", c.ffn_dim, c.dim, s.type, inv(c.dim));
    L.w_up = add(p + "ffn_up.weight", c.ffn_dim, c.dim, s.type, inv(c.dim));
    L.w_down = add(p + "ffn_down.weight", c.dim, c.ffn_dim, s.type, inv(c.ffn_dim));
    w.layers.push_back(L);
  }
}

WeightTensor TestModel::add(const std::string& name, int64_t rows, int64_t cols, GgmlType type, float scale,
                            float offset) {
  std::mt19937 rng(rng_state_++);
  std::uniform_real_distribution<float> dist(-scale, scale);
  auto m = std::make_unique<Matrix>();
  const size_t row_bytes = ggml_row_bytes(type, cols);
  m->bytes.resize(row_bytes * rows);
  m->f32.resize(rows * cols);
  std::vector<float> src(cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (auto& v : src) v = offset + dist(rng);
    uint8_t* dst = m->bytes.data() + r * row_bytes;
    float* f = &m->f32[r * cols];
    switch (type) {
      case GgmlType::F32:
        std::memcpy(dst, src.data(), cols * 4);
        std::copy(src.begin(), src.end(), f);
        break;
      case GgmlType::F16:
      case GgmlType::BF16:
        for (int64_t i = 0; i < cols; ++i) {
          uint16_t h = type == GgmlType::F16 ? fp32_to_fp16(src[i]) : fp32_to_bf16(src[i]);
          std::memcpy(dst + 2 * i, &h, 2);
          f[i] = type == GgmlType::F16 ? fp16_to_fp32(h) : bf16_to_fp32(h);
        }
        break;
      default:  // the block types: the format's quantizer, and the values it stores
        quantize_row(type, src.data(), dst, cols);
        dequantize_row(type, dst, f, cols);
    }
  }
  WeightTensor t{name, type, rows, cols, m->bytes.data(), m->bytes.size()};
  storage_.push_back(std::move(m));
  return t;
}

const std::vector<float>& TestModel::f32(const WeightTensor& t) const {
  for (const auto& m : storage_)
    if (m->bytes.data() == t.data) return m->f32;
  std::abort();
}

namespace {

// y[r] = sum_i W[r][i] x[i]
std::vector<float> matvec(const std::vector<float>& W, int64_t rows, int64_t cols, const std::vector<float>& x) {
  std::vector<float> y(rows);
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0;
    for (int64_t i = 0; i < cols; ++i) s += static_cast<double>(W[r * cols + i]) * x[i];
    y[r] = static_cast<float>(s);
  }
  return y;
}

std::vector<float> rmsnorm_ref(const std::vector<float>& x, const std::vector<float>& w, double eps) {
  double ss = 0;
  for (float v : x) ss += static_cast<double>(v) * v;
  const double scale = 1.0 / std::sqrt(ss / x.size() + eps);
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = static_cast<float>(x[i] * scale * w[i]);
  return y;
}

void rope_ref(float* x, int n_heads, int hd, int pos, double base, bool neox, double factor) {
  for (int h = 0; h < n_heads; ++h) {
    float* v = x + h * hd;
    for (int i = 0; i < hd / 2; ++i) {
      const double theta = (pos / factor) * std::pow(base, -2.0 * i / hd);
      const int a = neox ? i : 2 * i, b = neox ? i + hd / 2 : 2 * i + 1;
      const double xa = v[a], xb = v[b];
      v[a] = static_cast<float>(xa * std::cos(theta) - xb * std::sin(theta));
      v[b] = static_cast<float>(xa * std::sin(theta) + xb * std::cos(theta));
    }
  }
}

}  // namespace

std::vector<float> TestModel::reference_logits(const std::vector<int32_t>& tokens) const {
  const ModelConfig& c = config_;
  const int hd = c.head_dim, group = c.n_heads / c.n_kv_heads;
  const int64_t q_dim = int64_t{c.n_heads} * hd, kv_dim = int64_t{c.n_kv_heads} * hd;
  const size_t n = tokens.size();
  const double factor = c.rope_scaling.type == "linear" ? c.rope_scaling.factor : 1.0;
  // Contiguous caches: [layer][pos][kv_dim].
  std::vector<std::vector<float>> kcache(c.n_layers), vcache(c.n_layers);
  std::vector<float> logits;
  const auto& embd = f32(weights_.token_embd);
  for (size_t pos = 0; pos < n; ++pos) {
    std::vector<float> x(embd.begin() + tokens[pos] * c.dim, embd.begin() + (tokens[pos] + 1) * c.dim);
    for (int l = 0; l < c.n_layers; ++l) {
      const LayerWeights& L = weights_.layers[l];
      auto xn = rmsnorm_ref(x, f32(L.attn_norm), c.rms_eps);
      auto q = matvec(f32(L.wq), q_dim, c.dim, xn);
      auto k = matvec(f32(L.wk), kv_dim, c.dim, xn);
      auto v = matvec(f32(L.wv), kv_dim, c.dim, xn);
      if (c.qkv_bias) {
        for (int64_t i = 0; i < q_dim; ++i) q[i] += f32(L.bq)[i];
        for (int64_t i = 0; i < kv_dim; ++i) k[i] += f32(L.bk)[i];
        for (int64_t i = 0; i < kv_dim; ++i) v[i] += f32(L.bv)[i];
      }
      rope_ref(q.data(), c.n_heads, hd, static_cast<int>(pos), c.rope_base, c.rope_neox, factor);
      rope_ref(k.data(), c.n_kv_heads, hd, static_cast<int>(pos), c.rope_base, c.rope_neox, factor);
      kcache[l].insert(kcache[l].end(), k.begin(), k.end());
      vcache[l].insert(vcache[l].end(), v.begin(), v.end());
      std::vector<float> att(q_dim, 0.0f);
      for (int h = 0; h < c.n_heads; ++h) {
        const int kvh = h / group;
        std::vector<double> s(pos + 1);
        double mx = -1e300;
        for (size_t j = 0; j <= pos; ++j) {
          double d = 0;
          for (int i = 0; i < hd; ++i) d += static_cast<double>(q[h * hd + i]) * kcache[l][j * kv_dim + kvh * hd + i];
          s[j] = d / std::sqrt(static_cast<double>(hd));
          mx = std::max(mx, s[j]);
        }
        double sum = 0;
        for (auto& e : s) sum += (e = std::exp(e - mx));
        for (int i = 0; i < hd; ++i) {
          double a = 0;
          for (size_t j = 0; j <= pos; ++j) a += s[j] / sum * vcache[l][j * kv_dim + kvh * hd + i];
          att[h * hd + i] = static_cast<float>(a);
        }
      }
      auto o = matvec(f32(L.wo), c.dim, q_dim, att);
      for (int i = 0; i < c.dim; ++i) x[i] += o[i];
      xn = rmsnorm_ref(x, f32(L.ffn_norm), c.rms_eps);
      auto g = matvec(f32(L.w_gate), c.ffn_dim, c.dim, xn);
      auto u = matvec(f32(L.w_up), c.ffn_dim, c.dim, xn);
      for (int i = 0; i < c.ffn_dim; ++i) g[i] = static_cast<float>(g[i] / (1.0 + std::exp(-double(g[i]))) * u[i]);
      auto d = matvec(f32(L.w_down), c.dim, c.ffn_dim, g);
      for (int i = 0; i < c.dim; ++i) x[i] += d[i];
    }
    auto xn = rmsnorm_ref(x, f32(weights_.output_norm), c.rms_eps);
    auto out = matvec(f32(weights_.output), c.vocab_size, c.dim, xn);
    logits.insert(logits.end(), out.begin(), out.end());
  }
  return logits;
}

}  // namespace seer::testing
