#include "model/llama2c_model.h"

#include <cstring>

#include "common/error.h"
#include "model/gguf_file.h"
#include "model/mapped_file.h"
#include "model/model_file.h"

namespace seer {
namespace {

// llama2.c's newer exports start with this magic ("ak42"); run.c reads only the legacy
// header-less format, and so does seer.
constexpr uint32_t kLlama2cMagicV1 = 0x616b3432;

}  // namespace

Llama2cLayout llama2c_layout(const uint8_t* data, size_t size, const std::string& name) {
  if (size < kLlama2cHeaderBytes)
    fail("{}: offset 0: not a GGUF file, and too short ({} bytes) for a llama2.c checkpoint header of {} bytes",
         name, size, kLlama2cHeaderBytes);
  uint32_t magic;
  std::memcpy(&magic, data, 4);
  if (magic == kLlama2cMagicV1) {
    int32_t version = 0;
    if (size >= 8) std::memcpy(&version, data + 4, 4);
    fail("{}: llama2.c export version {} ('ak42' header) is not supported; export the legacy format "
         "(export.py --version 0)",
         name, version);
  }
  Llama2cLayout L;
  Llama2cHeader& h = L.header;
  int32_t fields[7];
  std::memcpy(fields, data, sizeof(fields));
  h = Llama2cHeader{fields[0], fields[1], fields[2], fields[3], fields[4], fields[5], fields[6]};
  const char* names[7] = {"dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len"};
  for (int i = 0; i < 7; ++i) {
    int32_t v = i == 5 && fields[i] < 0 && fields[i] != INT32_MIN ? -fields[i] : fields[i];
    if (v <= 0)
      fail("{}: offset {}: llama2.c header field {} = {} (expected a positive integer; not a GGUF file or "
           "llama2.c checkpoint?)",
           name, 4 * i, names[i], fields[i]);
  }
  L.shared_classifier = h.vocab_size > 0;
  const int32_t vocab = L.shared_classifier ? h.vocab_size : -h.vocab_size;
  if (h.dim % h.n_heads != 0)
    fail("{}: llama2.c header: dim {} is not a multiple of n_heads {}", name, h.dim, h.n_heads);
  if (h.n_kv_heads > h.n_heads)
    fail("{}: llama2.c header: n_kv_heads {} exceeds n_heads {}", name, h.n_kv_heads, h.n_heads);

  ModelConfig& c = L.config;
  c.arch = "llama";
  c.name = "llama2.c checkpoint";
  c.n_layers = h.n_layers;
  c.dim = h.dim;
  c.n_heads = h.n_heads;
  c.n_kv_heads = h.n_kv_heads;
  c.head_dim = h.dim / h.n_heads;
  c.ffn_dim = h.hidden_dim;
  c.vocab_size = vocab;
  c.context_length = h.seq_len;
  c.rope_base = 10000.0;
  c.rms_eps = 1e-5;
  // run.c rotates adjacent pairs (x[2i], x[2i+1]) like llama.cpp's "llama" RoPE, so the
  // weights are used as stored: llama.cpp's convert-llama2c-to-ggml copies Q/K without
  // the permutation its Hugging Face converter applies.
  c.rope_neox = false;
  c.tied_embeddings = L.shared_classifier;
  c.bos_id = 1;
  c.eos_id = 2;
  c.validate(name);  // bounds every dimension, so the products below cannot overflow

  const int64_t dim = c.dim, hidden = c.ffn_dim, kv_dim = int64_t{c.n_kv_heads} * c.head_dim;
  size_t off = kLlama2cHeaderBytes;
  auto add = [&](std::string tname, int64_t rows, int64_t cols) {
    L.tensors.push_back(Llama2cTensor{std::move(tname), rows, cols, off});
    off += L.tensors.back().bytes();
  };
  auto per_layer = [&](const char* suffix, int64_t rows, int64_t cols) {
    for (int l = 0; l < c.n_layers; ++l) add("blk." + std::to_string(l) + "." + suffix, rows, cols);
  };
  add("token_embd.weight", vocab, dim);
  per_layer("attn_norm.weight", 1, dim);
  per_layer("attn_q.weight", dim, dim);
  per_layer("attn_k.weight", kv_dim, dim);
  per_layer("attn_v.weight", kv_dim, dim);
  per_layer("attn_output.weight", dim, dim);
  per_layer("ffn_norm.weight", 1, dim);
  per_layer("ffn_gate.weight", hidden, dim);  // llama2.c w1
  per_layer("ffn_down.weight", dim, hidden);  // w2
  per_layer("ffn_up.weight", hidden, dim);    // w3
  add("output_norm.weight", 1, dim);
  // freq_cis_real and freq_cis_imag, unused since llama2.c computes RoPE itself.
  off += 2 * (static_cast<size_t>(h.seq_len) * static_cast<size_t>(c.head_dim / 2) * sizeof(float));
  if (!L.shared_classifier) add("output.weight", vocab, dim);
  L.file_size = off;
  if (size != off)
    fail("{}: llama2.c checkpoint with dim {}, hidden_dim {}, {} layers, {} heads, {} KV heads, vocab {}{}, "
         "seq_len {} must be {} bytes, but the file has {} ({})",
         name, h.dim, h.hidden_dim, h.n_layers, h.n_heads, h.n_kv_heads, vocab,
         L.shared_classifier ? "" : " (unshared classifier)", h.seq_len, off, size,
         size < off ? "truncated" : "trailing bytes or a wrong header");
  return L;
}

std::vector<uint8_t> llama2c_header_bytes(const Llama2cHeader& h) {
  int32_t fields[7] = {h.dim, h.hidden_dim, h.n_layers, h.n_heads, h.n_kv_heads, h.vocab_size, h.seq_len};
  std::vector<uint8_t> out(sizeof(fields));
  std::memcpy(out.data(), fields, sizeof(fields));
  return out;
}

std::unique_ptr<ModelFile> open_llama2c_model(const std::string& path) {
  std::unique_ptr<ModelFile> m(new ModelFile());
  m->path_ = path;
  m->mapping_ = std::make_unique<MappedFile>(path);
  const uint8_t* base = m->mapping_->data();
  Llama2cLayout L = llama2c_layout(base, m->mapping_->size(), path);
  m->config_ = L.config;
  ModelWeights& w = m->weights_;
  w.layers.resize(static_cast<size_t>(L.config.n_layers));
  auto tensor = [&](const Llama2cTensor& t) {
    return WeightTensor{t.name, GgmlType::F32, t.rows, t.cols, base + t.offset, t.bytes()};
  };
  for (const Llama2cTensor& t : L.tensors) {
    if (t.name == "token_embd.weight") {
      w.token_embd = tensor(t);
    } else if (t.name == "output_norm.weight") {
      w.output_norm = tensor(t);
    } else if (t.name == "output.weight") {
      w.output = tensor(t);
    } else {
      // "blk.<l>.<what>"
      size_t dot = t.name.find('.', 4);
      LayerWeights& l = w.layers[std::stoul(t.name.substr(4, dot - 4))];
      std::string what = t.name.substr(dot + 1);
      WeightTensor* dst = what == "attn_norm.weight"     ? &l.attn_norm
                          : what == "attn_q.weight"      ? &l.wq
                          : what == "attn_k.weight"      ? &l.wk
                          : what == "attn_v.weight"      ? &l.wv
                          : what == "attn_output.weight" ? &l.wo
                          : what == "ffn_norm.weight"    ? &l.ffn_norm
                          : what == "ffn_gate.weight"    ? &l.w_gate
                          : what == "ffn_down.weight"    ? &l.w_down
                                                         : &l.w_up;
      *dst = tensor(t);
    }
  }
  if (L.shared_classifier) w.output = w.token_embd;
  return m;
}

Llama2cTokenizerSummary summarize_llama2c_tokenizer(const std::string& path, int32_t vocab_size) {
  MappedFile f(path);
  const uint8_t* p = f.data();
  const size_t size = f.size();
  size_t pos = 0;
  auto read_i32 = [&](const char* what) {
    if (size - pos < 4)
      fail("{}: offset {}: expected {} (4 bytes) but the file ends (truncated llama2.c tokenizer?)", path, pos,
           what);
    int32_t v;
    std::memcpy(&v, p + pos, 4);
    pos += 4;
    return v;
  };
  Llama2cTokenizerSummary s;
  s.vocab_size = vocab_size;
  s.max_token_length = read_i32("max_token_length");
  if (s.max_token_length <= 0 || s.max_token_length > (1 << 16))
    fail("{}: offset 0: max_token_length {} out of range (not a llama2.c tokenizer?)", path, s.max_token_length);
  for (int32_t i = 0; i < vocab_size; ++i) {
    read_i32("token score");
    size_t at = pos;
    int32_t len = read_i32("token length");
    if (len < 0 || len > s.max_token_length || static_cast<size_t>(len) > size - pos)
      fail("{}: offset {}: token {} has length {} (expected 0..{} within the file)", path, at, i, len,
           s.max_token_length);
    if (s.first_tokens.size() < 8) s.first_tokens.emplace_back(reinterpret_cast<const char*>(p + pos), len);
    pos += static_cast<size_t>(len);
  }
  if (pos != size)
    fail("{}: {} trailing bytes after {} tokens (does the tokenizer belong to a model with another vocab size?)",
         path, size - pos, vocab_size);
  return s;
}

}  // namespace seer
