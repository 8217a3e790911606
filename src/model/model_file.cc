#include "model/model_file.h"

#include <cstring>

#include "common/error.h"
#include "model/gguf_file.h"
#include "model/mapped_file.h"

namespace seer {

size_t ModelWeights::total_bytes() const {
  size_t n = token_embd.bytes + output_norm.bytes + rope_freqs.bytes;
  if (output.data != token_embd.data) n += output.bytes;
  for (const auto& l : layers)
    for (const WeightTensor* t : {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.wo, &l.bq, &l.bk, &l.bv, &l.q_norm, &l.k_norm, &l.ffn_norm,
                                  &l.w_gate, &l.w_up, &l.w_down, &l.attn_post_norm, &l.ffn_post_norm, &l.router, &l.gate_exps, &l.up_exps,
                                  &l.down_exps})
      n += t->bytes;
  return n;
}

ModelFile::~ModelFile() = default;

std::unique_ptr<ModelFile> ModelFile::open(const std::string& path) {
  char magic[4] = {};
  {
    MappedFile probe(path);
    if (probe.size() >= 4) std::memcpy(magic, probe.data(), 4);
  }
  if (std::memcmp(magic, "GGUF", 4) == 0) return open_gguf_model(path);
  return open_llama2c_model(path);
}

namespace {

// Looks up a tensor and checks its shape {cols, rows} and that seer can compute with
// its type.
WeightTensor weight(const GgufFile& f, const std::string& name, int64_t cols, int64_t rows, bool required = true) {
  const GgufTensorInfo* t = f.find_tensor(name);
  if (!t) {
    if (required) fail("{}: missing tensor '{}'", f.path(), name);
    return {};
  }
  auto info = ggml_type_info(static_cast<uint32_t>(t->type));
  if (!info->computable)
    fail("{}: tensor '{}' has type {}, which seer cannot compute with (supported: {})", f.path(), name, info->name,
         computable_type_names());
  int64_t got_cols = t->shape[0];
  int64_t got_rows = t->shape.size() > 1 ? t->shape[1] : 1;
  if (t->shape.size() > 2 || got_cols != cols || got_rows != rows)
    fail("{}: tensor '{}' has shape [{}, {}], expected [{}, {}]", f.path(), name, got_cols, got_rows, cols, rows);
  return WeightTensor{name, t->type, rows, cols, t->data, t->bytes};
}

// A stacked expert tensor of GGML shape {cols, rows, n_experts}, as one matrix of
// rows * n_experts rows.
WeightTensor experts_weight(const GgufFile& f, const std::string& name, int64_t cols, int64_t rows, int n_experts) {
  const GgufTensorInfo* t = f.find_tensor(name);
  if (!t) fail("{}: missing tensor '{}'", f.path(), name);
  auto info = ggml_type_info(static_cast<uint32_t>(t->type));
  if (!info->computable)
    fail("{}: tensor '{}' has type {}, which seer cannot compute with (supported: F32, F16, BF16, Q8_0, Q4_0)",
         f.path(), name, info->name);
  if (t->shape.size() != 3 || t->shape[0] != cols || t->shape[1] != rows || t->shape[2] != n_experts)
    fail("{}: tensor '{}' should have shape [{}, {}, {}]", f.path(), name, cols, rows, n_experts);
  return WeightTensor{name, t->type, rows * n_experts, cols, t->data, t->bytes};
}

}  // namespace

WeightTensor row_slice(const WeightTensor& t, int64_t first, int64_t count) {
  const size_t row_bytes = t.bytes / static_cast<size_t>(t.rows);
  return WeightTensor{t.name + "[rows " + std::to_string(first) + "+" + std::to_string(count) + "]", t.type, count,
                      t.cols, static_cast<const uint8_t*>(t.data) + static_cast<size_t>(first) * row_bytes,
                      static_cast<size_t>(count) * row_bytes};
}

std::unique_ptr<ModelFile> open_gguf_model(const std::string& path) {
  std::unique_ptr<ModelFile> m(new ModelFile());
  m->path_ = path;
  m->gguf_ = GgufFile::open(path);
  const GgufFile& f = *m->gguf_;
  m->config_ = config_from_gguf(f);
  const ModelConfig& c = m->config_;
  ModelWeights& w = m->weights_;
  const int64_t q_dim = int64_t{c.n_heads} * c.head_dim;
  const int64_t kv_dim = int64_t{c.n_kv_heads} * c.head_dim;
  w.token_embd = weight(f, "token_embd.weight", c.dim, c.vocab_size);
  w.output_norm = weight(f, "output_norm.weight", c.dim, 1);
  w.output = c.tied_embeddings ? w.token_embd : weight(f, "output.weight", c.dim, c.vocab_size);
  const int rope_dim = c.rope_dim > 0 ? c.rope_dim : c.head_dim;
  if (c.rope_freqs) {
    w.rope_freqs = weight(f, c.rope_freqs_tensor, rope_dim / 2, 1);
    if (w.rope_freqs.type != GgmlType::F32) fail("{}: tensor '{}' must be F32", path, c.rope_freqs_tensor);
  }
  for (int i = 0; i < c.n_layers; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    LayerWeights l;
    l.attn_norm = weight(f, p + "attn_norm.weight", c.dim, 1);
    if (f.find_tensor(p + "attn_qkv.weight")) {  // phi3: Q, K and V rows in one tensor
      const WeightTensor qkv = weight(f, p + "attn_qkv.weight", c.dim, q_dim + 2 * kv_dim);
      l.wq = row_slice(qkv, 0, q_dim);
      l.wk = row_slice(qkv, q_dim, kv_dim);
      l.wv = row_slice(qkv, q_dim + kv_dim, kv_dim);
    } else {
      l.wq = weight(f, p + "attn_q.weight", c.dim, q_dim);
      l.wk = weight(f, p + "attn_k.weight", c.dim, kv_dim);
      l.wv = weight(f, p + "attn_v.weight", c.dim, kv_dim);
    }
    l.wo = weight(f, p + "attn_output.weight", q_dim, c.dim);
    l.bq = weight(f, p + "attn_q.bias", q_dim, 1, c.qkv_bias);
    l.bk = weight(f, p + "attn_k.bias", kv_dim, 1, c.qkv_bias);
    l.bv = weight(f, p + "attn_v.bias", kv_dim, 1, c.qkv_bias);
    l.q_norm = weight(f, p + "attn_q_norm.weight", c.head_dim, 1, c.qk_norm);
    l.k_norm = weight(f, p + "attn_k_norm.weight", c.head_dim, 1, c.qk_norm);
    l.ffn_norm = weight(f, p + "ffn_norm.weight", c.dim, 1);
    if (c.n_experts > 0) {
      l.router = weight(f, p + "ffn_gate_inp.weight", c.dim, c.n_experts);
      l.gate_exps = experts_weight(f, p + "ffn_gate_exps.weight", c.dim, c.ffn_dim, c.n_experts);
      l.up_exps = experts_weight(f, p + "ffn_up_exps.weight", c.dim, c.ffn_dim, c.n_experts);
      l.down_exps = experts_weight(f, p + "ffn_down_exps.weight", c.ffn_dim, c.dim, c.n_experts);
    } else if (!f.find_tensor(p + "ffn_gate.weight") && f.find_tensor(p + "ffn_up.weight")) {
      // phi3: ffn_up holds the gate rows, then the up rows.
      const WeightTensor gate_up = weight(f, p + "ffn_up.weight", c.dim, 2 * int64_t{c.ffn_dim});
      l.w_gate = row_slice(gate_up, 0, c.ffn_dim);
      l.w_up = row_slice(gate_up, c.ffn_dim, c.ffn_dim);
    } else {
      l.w_gate = weight(f, p + "ffn_gate.weight", c.dim, c.ffn_dim);
      l.w_up = weight(f, p + "ffn_up.weight", c.dim, c.ffn_dim);
    }
    if (c.n_experts == 0) l.w_down = weight(f, p + "ffn_down.weight", c.ffn_dim, c.dim);
    l.attn_post_norm = weight(f, p + "post_attention_norm.weight", c.dim, 1, c.post_norms);
    l.ffn_post_norm = weight(f, p + "post_ffw_norm.weight", c.dim, 1, c.post_norms);
    for (const WeightTensor* t : {&l.attn_norm, &l.ffn_norm, &l.q_norm, &l.k_norm, &l.attn_post_norm, &l.ffn_post_norm})
      if (t->present() && t->type != GgmlType::F32) fail("{}: norm tensor '{}' must be F32", path, t->name);
    w.layers.push_back(std::move(l));
  }
  if (w.output_norm.type != GgmlType::F32) fail("{}: norm tensor 'output_norm.weight' must be F32", path);
  return m;
}

}  // namespace seer
