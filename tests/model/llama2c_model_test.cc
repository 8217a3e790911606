#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "common/error.h"
#include "model/gguf_file.h"
#include "model/gguf_writer.h"
#include "model/llama2c_model.h"
#include "model/model_file.h"
#include "model_test_util.h"

namespace seer {
namespace {

using testing::read_bytes;
using testing::write_bytes;

std::string tmp(const std::string& name) { return testing::scratch_dir() + "/" + name; }

std::vector<float> floats_of(const WeightTensor& t) {
  std::vector<float> v(static_cast<size_t>(t.rows * t.cols));
  std::memcpy(v.data(), t.data, v.size() * sizeof(float));
  return v;
}

// A llama2.c checkpoint whose every weight is distinct (value = running index / 1000),
// written in run.c's order; returns the tensors in that order for comparison.
struct Checkpoint {
  std::string path;
  std::vector<std::pair<std::string, std::vector<float>>> tensors;
};

Checkpoint write_checkpoint(const std::string& name, Llama2cHeader h, bool shared) {
  const int64_t dim = h.dim, hidden = h.hidden_dim, kv = int64_t{h.n_kv_heads} * (h.dim / h.n_heads);
  const int64_t head = h.dim / h.n_heads;
  Checkpoint c;
  c.path = tmp(name);
  float next = 0;
  auto fill = [&](int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = (next += 1) / 1000;
    return v;
  };
  auto block = [&](const char* what, int64_t per_layer) {
    std::vector<float> all = fill(per_layer * h.n_layers);
    for (int l = 0; l < h.n_layers; ++l)
      c.tensors.emplace_back("blk." + std::to_string(l) + "." + what,
                             std::vector<float>(all.begin() + l * per_layer, all.begin() + (l + 1) * per_layer));
  };
  c.tensors.emplace_back("token_embd.weight", fill(h.vocab_size * dim));
  block("attn_norm.weight", dim);
  block("attn_q.weight", dim * dim);
  block("attn_k.weight", kv * dim);
  block("attn_v.weight", kv * dim);
  block("attn_output.weight", dim * dim);
  block("ffn_norm.weight", dim);
  block("ffn_gate.weight", hidden * dim);
  block("ffn_down.weight", dim * hidden);
  block("ffn_up.weight", hidden * dim);
  c.tensors.emplace_back("output_norm.weight", fill(dim));
  std::vector<float> freq = fill(h.seq_len * head);  // freq_cis_real + imag, ignored
  std::vector<float> wcls = shared ? std::vector<float>{} : fill(h.vocab_size * dim);

  Llama2cHeader on_disk = h;
  if (!shared) on_disk.vocab_size = -h.vocab_size;
  std::vector<uint8_t> bytes = llama2c_header_bytes(on_disk);
  auto append = [&](const std::vector<float>& v) {
    const auto* p = reinterpret_cast<const uint8_t*>(v.data());
    bytes.insert(bytes.end(), p, p + v.size() * sizeof(float));
  };
  // File order: token_embd, rms_att (all layers), wq, wk, wv, wo, rms_ffn, w1, w2, w3,
  // rms_final, freq_cis, wcls: the per-layer tensors of one kind are contiguous.
  for (const auto& [n, v] : c.tensors) append(v);
  append(freq);
  append(wcls);
  if (!shared) c.tensors.emplace_back("output.weight", wcls);
  write_bytes(c.path, bytes);
  return c;
}

const WeightTensor* find_weight(const ModelWeights& w, const std::string& name) {
  if (name == "token_embd.weight") return &w.token_embd;
  if (name == "output_norm.weight") return &w.output_norm;
  if (name == "output.weight") return &w.output;
  size_t dot = name.find('.', 4);
  const LayerWeights& l = w.layers.at(std::stoul(name.substr(4, dot - 4)));
  std::string what = name.substr(dot + 1);
  for (auto [n, t] : {std::pair{"attn_norm.weight", &l.attn_norm}, {"attn_q.weight", &l.wq}, {"attn_k.weight", &l.wk},
                      {"attn_v.weight", &l.wv}, {"attn_output.weight", &l.wo}, {"ffn_norm.weight", &l.ffn_norm},
                      {"ffn_gate.weight", &l.w_gate}, {"ffn_up.weight", &l.w_up}, {"ffn_down.weight", &l.w_down}})
    if (what == n) return t;
  return nullptr;
}

const Llama2cHeader kSmall{16, 40, 2, 4, 2, 20, 8};

TEST(Llama2cModel, LoadsEveryTensorFromItsPlace) {
  for (bool shared : {true, false}) {
    Checkpoint c = write_checkpoint(shared ? "shared.bin" : "unshared.bin", kSmall, shared);
    auto m = ModelFile::open(c.path);
    const ModelConfig& cfg = m->config();
    EXPECT_EQ(cfg.arch, "llama");
    EXPECT_EQ(cfg.dim, 16);
    EXPECT_EQ(cfg.ffn_dim, 40);
    EXPECT_EQ(cfg.n_layers, 2);
    EXPECT_EQ(cfg.n_heads, 4);
    EXPECT_EQ(cfg.n_kv_heads, 2);
    EXPECT_EQ(cfg.head_dim, 4);
    EXPECT_EQ(cfg.vocab_size, 20);
    EXPECT_EQ(cfg.context_length, 8);
    EXPECT_EQ(cfg.rope_base, 10000.0);
    EXPECT_EQ(cfg.rms_eps, 1e-5);
    EXPECT_EQ(cfg.bos_id, 1);
    EXPECT_EQ(cfg.eos_id, 2);
    EXPECT_FALSE(cfg.rope_neox);
    EXPECT_EQ(cfg.tied_embeddings, shared);
    EXPECT_EQ(m->gguf(), nullptr);
    for (const auto& [name, values] : c.tensors) {
      const WeightTensor* t = find_weight(m->weights(), name);
      ASSERT_NE(t, nullptr) << name;
      EXPECT_EQ(t->type, GgmlType::F32);
      EXPECT_EQ(floats_of(*t), values) << name;
    }
    const auto& w = m->weights();
    EXPECT_EQ(w.layers[1].wk.rows, 8);
    EXPECT_EQ(w.layers[1].wk.cols, 16);
    EXPECT_EQ(w.layers[0].w_down.rows, 16);
    EXPECT_EQ(w.layers[0].w_down.cols, 40);
    if (shared) EXPECT_EQ(w.output.data, w.token_embd.data);
    else EXPECT_NE(w.output.data, w.token_embd.data);
  }
}

// The same weights written as GGUF (in llama.cpp's tensor names and shapes) load to
// byte-identical WeightTensors through both loaders.
TEST(Llama2cModel, MatchesTheSameWeightsAsGguf) {
  Checkpoint c = write_checkpoint("pair.bin", kSmall, /*shared=*/false);
  auto bin = ModelFile::open(c.path);
  GgufWriter w;
  w.set("general.architecture", gguf_string("llama"));
  w.set("llama.block_count", gguf_u32(2));
  w.set("llama.embedding_length", gguf_u32(16));
  w.set("llama.feed_forward_length", gguf_u32(40));
  w.set("llama.attention.head_count", gguf_u32(4));
  w.set("llama.attention.head_count_kv", gguf_u32(2));
  w.set("llama.context_length", gguf_u32(8));
  for (const auto& [name, values] : c.tensors) {
    const WeightTensor* t = find_weight(bin->weights(), name);
    w.add_tensor(name, t->rows == 1 ? std::vector<int64_t>{t->cols} : std::vector<int64_t>{t->cols, t->rows},
                 GgmlType::F32);
  }
  const std::string gguf_path = tmp("pair.gguf");
  w.begin(gguf_path);
  for (const auto& [name, values] : c.tensors) w.write_data(values.data(), values.size() * sizeof(float));
  w.finish();
  auto gguf = ModelFile::open(gguf_path);
  EXPECT_EQ(gguf->config().n_kv_heads, bin->config().n_kv_heads);
  EXPECT_EQ(gguf->config().vocab_size, bin->config().vocab_size);
  for (const auto& [name, values] : c.tensors) {
    const WeightTensor* a = find_weight(bin->weights(), name);
    const WeightTensor* b = find_weight(gguf->weights(), name);
    EXPECT_EQ(a->rows, b->rows) << name;
    EXPECT_EQ(a->cols, b->cols) << name;
    EXPECT_EQ(floats_of(*a), floats_of(*b)) << name;
  }
}

TEST(Llama2cModel, RejectsWrongSizesAndHeaders) {
  Checkpoint c = write_checkpoint("victim.bin", kSmall, true);
  std::vector<uint8_t> good = read_bytes(c.path);
  for (size_t len : {size_t{0}, size_t{3}, size_t{27}, size_t{28}, good.size() / 2, good.size() - 1}) {
    write_bytes(tmp("cut.bin"), std::vector<uint8_t>(good.begin(), good.begin() + static_cast<long>(len)));
    EXPECT_THROW(ModelFile::open(tmp("cut.bin")), Error) << len;
  }
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  write_bytes(tmp("long.bin"), longer);
  try {
    ModelFile::open(tmp("long.bin"));
    ADD_FAILURE() << "no error for a trailing byte";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("long.bin"), std::string::npos) << e.what();
  }
  auto with_field = [&](int field, int32_t value) {
    std::vector<uint8_t> b = good;
    std::memcpy(b.data() + 4 * field, &value, 4);
    write_bytes(tmp("hdr.bin"), b);
    return tmp("hdr.bin");
  };
  for (int field = 0; field < 7; ++field)
    for (int32_t v : {0, -1, INT32_MIN, INT32_MAX}) {
      if (field == 5 && v == -1) continue;  // a valid "unshared" flag, still the wrong size
      EXPECT_THROW(ModelFile::open(with_field(field, v)), Error) << field << "=" << v;
    }
  EXPECT_THROW(ModelFile::open(with_field(5, -20)), Error);  // unshared: needs wcls bytes
  EXPECT_THROW(ModelFile::open(with_field(3, 3)), Error);    // dim 16 not a multiple of 3 heads
  EXPECT_THROW(ModelFile::open(with_field(4, 8)), Error);    // more KV heads than heads
  std::vector<uint8_t> v1 = good;
  std::memcpy(v1.data(), "24ka", 4);  // 0x616b3432: llama2.c's newer export header
  write_bytes(tmp("v1.bin"), v1);
  try {
    ModelFile::open(tmp("v1.bin"));
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("export version"), std::string::npos) << e.what();
  }
}

TEST(Llama2cModel, Stories260KHeaderAndVectorsMatchTheGguf) {
  SEER_REQUIRE_SHARED_FILE(bin_path, "models/stories260K.bin");
  SEER_REQUIRE_SHARED_FILE(gguf_path, "models/stories260K.gguf");
  auto bin = ModelFile::open(bin_path);
  auto gguf = ModelFile::open(gguf_path);
  const ModelConfig& a = bin->config();
  const ModelConfig& b = gguf->config();
  EXPECT_EQ(a.n_layers, 5);
  EXPECT_EQ(a.dim, b.dim);
  EXPECT_EQ(a.n_heads, b.n_heads);
  EXPECT_EQ(a.n_kv_heads, b.n_kv_heads);
  EXPECT_EQ(a.head_dim, b.head_dim);
  EXPECT_EQ(a.ffn_dim, b.ffn_dim);
  EXPECT_EQ(a.vocab_size, b.vocab_size);
  EXPECT_EQ(a.context_length, 512);  // the checkpoint's seq_len; the GGUF says 2048
  EXPECT_TRUE(a.tied_embeddings);
  EXPECT_NEAR(a.rms_eps, b.rms_eps, 1e-10);
  const ModelWeights& wa = bin->weights();
  const ModelWeights& wb = gguf->weights();
  EXPECT_EQ(floats_of(wa.token_embd), floats_of(wb.token_embd));
  EXPECT_EQ(floats_of(wa.output), floats_of(wb.output));  // the GGUF stores the shared classifier twice
  EXPECT_EQ(floats_of(wa.output_norm), floats_of(wb.output_norm));
  for (int l = 0; l < a.n_layers; ++l) {
    EXPECT_EQ(floats_of(wa.layers[l].attn_norm), floats_of(wb.layers[l].attn_norm)) << l;
    EXPECT_EQ(floats_of(wa.layers[l].ffn_norm), floats_of(wb.layers[l].ffn_norm)) << l;
  }
}

// Finding about the shared data, kept as a test so it stays reproducible: the
// matrices of models/stories260K.bin hold exactly the GGUF's numbers, but not in
// llama2.c's row-major (out, in) order. For each matrix of N elements whose GGUF rows
// have C columns, GGUF element i sits at checkpoint element (i * C^5) mod (N - 1) (the
// last element stays): the effect of transposing the flat array five times without
// swapping its shape. Read as run.c reads it, the checkpoint does not produce the
// reference stories; the GGUF does. seer reads llama2.c's documented layout and does
// not special-case this file.
TEST(Llama2cModel, Stories260KMatricesAreTheGgufsInAScrambledOrder) {
  SEER_REQUIRE_SHARED_FILE(bin_path, "models/stories260K.bin");
  SEER_REQUIRE_SHARED_FILE(gguf_path, "models/stories260K.gguf");
  auto bin = ModelFile::open(bin_path);
  auto gguf = ModelFile::open(gguf_path);
  for (int l = 0; l < bin->config().n_layers; ++l) {
    const LayerWeights& a = bin->weights().layers[l];
    const LayerWeights& b = gguf->weights().layers[l];
    for (auto [x, y] : {std::pair{&a.wq, &b.wq}, {&a.wk, &b.wk}, {&a.wv, &b.wv}, {&a.wo, &b.wo},
                        {&a.w_gate, &b.w_gate}, {&a.w_up, &b.w_up}, {&a.w_down, &b.w_down}}) {
      std::vector<float> fa = floats_of(*x), fb = floats_of(*y);
      ASSERT_EQ(fa.size(), fb.size());
      const uint64_t n = fa.size(), m = n - 1;
      uint64_t mult = 1;
      for (int k = 0; k < 5; ++k) mult = mult * static_cast<uint64_t>(y->cols) % m;
      size_t mismatches = 0;
      for (uint64_t i = 0; i < m; ++i) mismatches += fb[i] != fa[i * mult % m];
      mismatches += fb[m] != fa[m];
      EXPECT_EQ(mismatches, 0u) << "layer " << l << " " << y->name;
      EXPECT_NE(fa, fb) << y->name;  // and it is not the plain layout
    }
  }
}

TEST(Llama2cModel, TruncatedStories260KIsRejectedAtEveryLength) {
  SEER_REQUIRE_SHARED_FILE(bin_path, "models/stories260K.bin");
  std::vector<uint8_t> bytes = read_bytes(bin_path);
  for (size_t len = 0; len < bytes.size(); len += len < 64 ? 1 : 9973) {
    EXPECT_THROW(llama2c_layout(bytes.data(), len, "cut"), Error) << len;
  }
  EXPECT_NO_THROW(llama2c_layout(bytes.data(), bytes.size(), "whole"));
}

TEST(Llama2cModel, TokenizerSummary) {
  SEER_REQUIRE_SHARED_FILE(tok, "models/llama2-tokenizer.bin");
  Llama2cTokenizerSummary s = summarize_llama2c_tokenizer(tok, 32000);
  EXPECT_EQ(s.vocab_size, 32000);
  EXPECT_GT(s.max_token_length, 0);
  ASSERT_GE(s.first_tokens.size(), 3u);
  EXPECT_EQ(s.first_tokens[0], "<unk>");
  EXPECT_THROW(summarize_llama2c_tokenizer(tok, 512), Error);    // trailing tokens
  EXPECT_THROW(summarize_llama2c_tokenizer(tok, 40000), Error);  // runs out
}

}  // namespace
}  // namespace seer
