// Writes the seed corpus in fuzz/seeds (run once by hand; the seeds are committed):
//   build-fuzz/fuzz/fuzz_make_seeds fuzz/seeds
// Small files so the fuzzer mutates structure rather than tensor bytes.
#include <cstdio>
#include <string>
#include <vector>

#include "model/gguf_writer.h"
#include "model/random_model.h"

using namespace seer;

namespace {

// A complete one-layer llama model with a 40-token vocabulary and Q8_0 matrices.
void minimal_llama(const std::string& path) {
  GgufWriter w;
  w.set("general.architecture", gguf_string("llama"));
  w.set("general.name", gguf_string("fuzz seed"));
  w.set("llama.block_count", gguf_u32(1));
  w.set("llama.embedding_length", gguf_u32(32));
  w.set("llama.feed_forward_length", gguf_u32(32));
  w.set("llama.attention.head_count", gguf_u32(2));
  w.set("llama.attention.head_count_kv", gguf_u32(1));
  w.set("llama.context_length", gguf_u32(64));
  w.set("llama.rope.freq_base", gguf_f32(10000.0f));
  w.set("llama.attention.layer_norm_rms_epsilon", gguf_f32(1e-5f));
  w.set("llama.rope.scaling.type", gguf_string("linear"));
  w.set("llama.rope.scaling.factor", gguf_f32(2.0f));
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  for (int i = 3; i < 40; ++i) tokens.push_back("t" + std::to_string(i));
  w.set("tokenizer.ggml.model", gguf_string("llama"));
  w.set("tokenizer.ggml.tokens", gguf_string_array(tokens));
  w.set("tokenizer.ggml.scores", gguf_f32_array(std::vector<float>(40, 0.0f)));
  w.set("tokenizer.ggml.bos_token_id", gguf_u32(1));
  w.set("tokenizer.ggml.eos_token_id", gguf_u32(2));
  w.set("tokenizer.chat_template", gguf_string("{% for m in messages %}\n{{ m.content }}\n{% endfor %}"));
  struct T {
    const char* name;
    std::vector<int64_t> shape;
    GgmlType type;
  };
  std::vector<T> ts = {{"token_embd.weight", {32, 40}, GgmlType::Q8_0},
                       {"output_norm.weight", {32}, GgmlType::F32},
                       {"output.weight", {32, 40}, GgmlType::Q4_0},
                       {"blk.0.attn_norm.weight", {32}, GgmlType::F32},
                       {"blk.0.attn_q.weight", {32, 32}, GgmlType::Q8_0},
                       {"blk.0.attn_k.weight", {32, 16}, GgmlType::Q8_0},
                       {"blk.0.attn_v.weight", {32, 16}, GgmlType::F16},
                       {"blk.0.attn_output.weight", {32, 32}, GgmlType::BF16},
                       {"blk.0.ffn_norm.weight", {32}, GgmlType::F32},
                       {"blk.0.ffn_gate.weight", {32, 32}, GgmlType::Q4_0},
                       {"blk.0.ffn_up.weight", {32, 32}, GgmlType::Q4_0},
                       {"blk.0.ffn_down.weight", {32, 32}, GgmlType::Q4_0}};
  size_t total = 0;
  for (const auto& t : ts) total += w.add_tensor(t.name, t.shape, t.type);
  w.begin(path);
  std::vector<uint8_t> bytes(total);
  for (size_t i = 0; i < total; ++i) bytes[i] = static_cast<uint8_t>(i * 13);
  w.write_data(bytes.data(), bytes.size());
  w.finish();
}

// Every metadata type, nested arrays, GGUF v2, alignment 64, one F16 tensor.
void all_metadata_types(const std::string& path) {
  GgufWriter w(2, 64);
  w.set("general.architecture", gguf_string("mistral"));
  w.set("u8", GgufValue{GgufType::UINT8, uint64_t{7}});
  w.set("i8", GgufValue{GgufType::INT8, int64_t{-7}});
  w.set("u16", GgufValue{GgufType::UINT16, uint64_t{700}});
  w.set("i16", GgufValue{GgufType::INT16, int64_t{-700}});
  w.set("i32", gguf_i32(-70000));
  w.set("u64", gguf_u64(1ull << 40));
  w.set("i64", GgufValue{GgufType::INT64, int64_t{-(1ll << 40)}});
  w.set("f64", GgufValue{GgufType::FLOAT64, 0.5});
  w.set("b", gguf_bool(true));
  w.set("nested", gguf_array(GgufType::ARRAY, {gguf_i32_array({1, 2, 3}), gguf_i32_array({})}));
  w.set("mistral.block_count", gguf_u32(1));
  w.set("mistral.embedding_length", gguf_u32(8));
  w.set("mistral.attention.head_count", gguf_u32(2));
  w.set("mistral.feed_forward_length", gguf_u32(16));
  w.set("mistral.vocab_size", gguf_u32(4));
  w.add_tensor("token_embd.weight", {8, 4}, GgmlType::F16);
  w.begin(path);
  std::vector<uint8_t> bytes(64, 0x3c);
  w.write_data(bytes.data(), bytes.size());
  w.finish();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SEED_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  minimal_llama(dir + "/minimal-llama.gguf");
  all_metadata_types(dir + "/all-metadata-types.gguf");
  // A make-model output, shrunk, with the seed above's 40-token tokenizer copied in.
  RandomModelOptions opt;
  opt.shape = *named_model_shape("tiny");
  opt.shape.n_layers = 1;
  opt.shape.dim = 32;
  opt.shape.n_heads = 2;
  opt.shape.n_kv_heads = 1;
  opt.shape.ffn_dim = 32;
  opt.type = GgmlType::Q4_0;
  opt.progress = false;
  opt.tokenizer_from = dir + "/minimal-llama.gguf";
  write_random_model(dir + "/make-model-q4_0.gguf", opt);
  return 0;
}
