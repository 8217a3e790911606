// Corrupt, truncated, hostile and unsupported GGUF files: every case must end in a
// seer::Error (never a crash, a hang or a huge allocation). Under AddressSanitizer these
// also catch out-of-bounds reads.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "common/error.h"
#include "model/gguf_file.h"
#include "model/gguf_writer.h"
#include "model/model_config.h"
#include "model/model_file.h"
#include "model_test_util.h"

namespace seer {
namespace {

using testing::read_bytes;
using testing::tiny_model;
using testing::write_bytes;

std::string tmp(const std::string& name) { return testing::scratch_dir() + "/" + name; }

// Parses like the loaders do; returns true when the bytes parse as a usable model
// config, false when they throw seer::Error. Any other exception fails the test.
bool parses(const std::vector<uint8_t>& b, size_t len) {
  try {
    auto f = GgufFile::parse(b.data(), len, "mem");
    config_from_gguf(*f);
    return true;
  } catch (const Error&) {
    return false;
  }
}

// Raw GGUF bytes for hand-made headers.
struct Raw {
  std::vector<uint8_t> b;
  Raw& u32(uint32_t v) { return put(&v, 4); }
  Raw& u64(uint64_t v) { return put(&v, 8); }
  Raw& str(const std::string& s) {
    u64(s.size());
    return put(s.data(), s.size());
  }
  Raw& put(const void* p, size_t n) {
    const auto* c = static_cast<const uint8_t*>(p);
    b.insert(b.end(), c, c + n);
    return *this;
  }
  Raw& header(uint64_t tensors, uint64_t kvs) { return put("GGUF", 4).u32(3).u64(tensors).u64(kvs); }
  Raw& pad(size_t n) {
    b.resize(b.size() + n);
    return *this;
  }
};

void expect_error(const std::vector<uint8_t>& b, const std::string& needle) {
  try {
    auto f = GgufFile::parse(b.data(), b.size(), "crafted.gguf");
    config_from_gguf(*f);
    ADD_FAILURE() << "no error; expected one mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("crafted.gguf"), std::string::npos) << e.what();
  }
}

TEST(GgufRobustness, TruncatedTinyModelAtEveryHeaderLength) {
  std::vector<uint8_t> b = read_bytes(tiny_model(GgmlType::Q8_0));
  auto f = GgufFile::parse(b.data(), b.size(), "whole");
  size_t data_end = f->data_offset();
  for (const auto& t : f->tensors()) data_end = std::max(data_end, f->data_offset() + t.offset + t.bytes);
  ASSERT_TRUE(parses(b, b.size()));
  // Every length through the header, then strided through the data.
  for (size_t len = 0; len < data_end; len += len < f->data_offset() ? 1 : 997) EXPECT_FALSE(parses(b, len)) << len;
  EXPECT_FALSE(parses(b, data_end - 1));
  EXPECT_TRUE(parses(b, data_end));  // only the final padding cut off
}

TEST(GgufRobustness, TruncatedStories260K) {
  SEER_REQUIRE_SHARED_FILE(path, "models/stories260K.gguf");
  std::vector<uint8_t> b = read_bytes(path);
  ASSERT_TRUE(parses(b, b.size()));
  for (size_t len = 0; len < b.size(); len += len < 16384 ? 3 : 4099) EXPECT_FALSE(parses(b, len)) << len;
  EXPECT_FALSE(parses(b, b.size() - 1));
  // Through the whole loader, from disk, with the file name in the message.
  for (size_t len : {size_t{2}, size_t{20}, size_t{5000}, b.size() / 2, b.size() - 4}) {
    write_bytes(tmp("stories-cut.gguf"), std::vector<uint8_t>(b.begin(), b.begin() + static_cast<long>(len)));
    try {
      ModelFile::open(tmp("stories-cut.gguf"));
      ADD_FAILURE() << len;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("stories-cut.gguf"), std::string::npos) << e.what();
    }
  }
}

TEST(GgufRobustness, FlippedBytesNeverCrash) {
  std::vector<uint8_t> good = read_bytes(tiny_model(GgmlType::Q4_0));
  auto f = GgufFile::parse(good.data(), good.size(), "whole");
  const size_t header = f->data_offset();
  std::mt19937 rng(1234);
  int rejected = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<uint8_t> b = good;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) {
      size_t at = rng() % header;  // the header is where structure lives
      b[at] = iter % 3 == 0 ? static_cast<uint8_t>(rng()) : static_cast<uint8_t>(b[at] ^ (1u << (rng() % 8)));
    }
    rejected += !parses(b, b.size());
    if (iter % 100 == 0) {  // also the full loader (tensor shapes and types) from disk
      write_bytes(tmp("flipped.gguf"), b);
      try {
        ModelFile::open(tmp("flipped.gguf"));
      } catch (const Error&) {
      }
    }
  }
  EXPECT_GT(rejected, 100);  // the corruption is being noticed, not just survived
}

TEST(GgufRobustness, RandomFilesAreRejected) {
  std::mt19937 rng(99);
  for (int iter = 0; iter < 500; ++iter) {
    std::vector<uint8_t> b(rng() % 4096);
    for (auto& x : b) x = static_cast<uint8_t>(rng());
    if (iter % 2 == 0 && b.size() >= 8) {
      std::memcpy(b.data(), "GGUF", 4);
      b[4] = static_cast<uint8_t>(2 + iter % 2);
      b[5] = b[6] = b[7] = 0;
    }
    EXPECT_FALSE(parses(b, b.size())) << iter;
    if (iter % 50 == 0) {  // not GGUF -> tried as llama2.c -> must fail cleanly too
      write_bytes(tmp("random.bin"), b);
      EXPECT_THROW(ModelFile::open(tmp("random.bin")), Error);
    }
  }
  write_bytes(tmp("empty.gguf"), {});
  EXPECT_THROW(ModelFile::open(tmp("empty.gguf")), Error);
  EXPECT_THROW(ModelFile::open(tmp("no-such-file.gguf")), Error);
  EXPECT_THROW(ModelFile::open(testing::scratch_dir()), Error);  // a directory
}

TEST(GgufRobustness, HugeCountsAndLengths) {
  expect_error(Raw().header(0, ~uint64_t{0}).b, "metadata count");
  expect_error(Raw().header(uint64_t{1} << 62, 0).b, "tensor count");
  expect_error(Raw().header(0, 1).u64(~uint64_t{0}).pad(16).b, "metadata key");  // key length
  expect_error(Raw().header(0, 1).str("k").u32(8).u64(uint64_t{1} << 60).pad(8).b, "has length");  // string
  expect_error(Raw().header(0, 1).str("a").u32(9).u32(4).u64(uint64_t{1} << 61).pad(16).b, "array of");
  expect_error(Raw().header(0, 1).str("a").u32(9).u32(8).u64(1000000).pad(64).b, "array of");
  // Nested arrays deeper than the reader allows.
  Raw deep;
  deep.header(0, 1).str("deep").u32(9);
  for (int i = 0; i < 20; ++i) deep.u32(9).u64(1);
  deep.u32(4).u64(0).pad(32);
  expect_error(deep.b, "nested");
  // Tensor dims: too many, zero, and a product that would overflow.
  auto tensor = [](uint32_t n_dims, std::vector<uint64_t> dims, uint32_t type, uint64_t offset) {
    Raw r;
    r.header(1, 0).str("t").u32(n_dims);
    for (uint64_t d : dims) r.u64(d);
    r.u32(type).u64(offset).pad(64);
    return r.b;
  };
  expect_error(tensor(5, {1, 1, 1, 1, 1}, 0, 0), "dimensions");
  expect_error(tensor(0, {}, 0, 0), "dimensions");
  expect_error(tensor(2, {0, 4}, 0, 0), "out of range");
  expect_error(tensor(2, {uint64_t{1} << 32, uint64_t{1} << 32}, 0, 0), "out of range");
  expect_error(tensor(1, {~uint64_t{0}}, 0, 0), "out of range");
  expect_error(tensor(1, {1u << 20}, 0, 0), "beyond the end");  // 4 MiB of data in a tiny file
  expect_error(tensor(1, {8}, 0, ~uint64_t{0} & ~uint64_t{31}), "beyond the end");
}

TEST(GgufRobustness, BadTypesAndValues) {
  expect_error(Raw().put("GGUF", 4).u32(1).u64(0).u64(0).b, "version 1");
  expect_error(Raw().put("GGUF", 4).u32(4).u64(0).u64(0).b, "version 4");
  expect_error(Raw().put("GGML", 4).u32(3).u64(0).u64(0).b, "magic");
  expect_error(Raw().header(0, 1).str("k").u32(13).u32(0).b, "value type 13");
  expect_error(Raw().header(0, 1).str("k").u32(0xFFFFFFFF).u32(0).b, "value type");
  expect_error(Raw().header(0, 1).str("a").u32(9).u32(77).u64(1).pad(8).b, "element type 77");
  expect_error(Raw().header(0, 1).str("b").u32(7).put("\x02", 1).b, "bool");
  expect_error(Raw().header(0, 2).str("k").u32(4).u32(1).str("k").u32(4).u32(2).b, "duplicate metadata key");
  expect_error(Raw().header(1, 0).str("t").u32(1).u64(8).u32(99).u64(0).pad(64).b, "unknown tensor type 99");
  expect_error(Raw().header(1, 0).str("t").u32(1).u64(33).u32(8).u64(0).pad(128).b, "block size");
  expect_error(Raw().header(2, 0).str("t").u32(1).u64(8).u32(0).u64(0).str("t").u32(1).u64(8).u32(0).u64(32).pad(128).b,
               "duplicate tensor");
  // Alignment: not a power of two, zero, absurd; and an offset that breaks it.
  for (uint32_t al : {0u, 3u, 48u, 1u << 30})
    expect_error(Raw().header(0, 1).str("general.alignment").u32(4).u32(al).b, "alignment");
  expect_error(Raw().header(0, 1).str("general.alignment").u32(8).str("x").b, "general.alignment");  // wrong type
  expect_error(Raw().header(1, 0).str("t").u32(1).u64(8).u32(0).u64(16).pad(128).b, "not aligned");
}

GgufWriter& llama_hparams(GgufWriter& w, const std::string& arch) {
  w.set("general.architecture", gguf_string(arch));
  for (auto [k, v] : {std::pair{"block_count", 1}, {"embedding_length", 32}, {"attention.head_count", 2},
                      {"feed_forward_length", 32}, {"context_length", 64}})
    w.set(arch + "." + k, gguf_u32(v));
  w.set("tokenizer.ggml.tokens", gguf_string_array(std::vector<std::string>(40, "x")));
  return w;
}

TEST(GgufRobustness, UnsupportedArchitectureIsNamed) {
  for (const char* arch : {"gpt2", "bert", "falcon", "mamba"}) {
    GgufWriter w;
    llama_hparams(w, arch);
    const std::string path = tmp(std::string(arch) + ".gguf");
    w.begin(path);
    w.finish();
    try {
      ModelFile::open(path);
      ADD_FAILURE() << arch;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + arch + "'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
  SEER_REQUIRE_SHARED_FILE(bert, "tokenizer-tests/ggml-vocab-bert-bge.gguf");
  try {
    ModelFile::open(bert);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'bert'"), std::string::npos) << e.what();
  }
}

// A valid llama model with one tensor in `bad_type`: the message names tensor and type.
TEST(GgufRobustness, UnsupportedTensorTypeIsNamed) {
  for (GgmlType bad : {GgmlType::Q8_K, GgmlType::Q8_1, GgmlType::I32, GgmlType::F64}) {
    GgufWriter w;
    llama_hparams(w, "llama");
    const int64_t dim = 32, ffn = 32, vocab = 40;
    struct T {
      std::string name;
      std::vector<int64_t> shape;
    };
    std::vector<T> ts = {{"token_embd.weight", {dim, vocab}}, {"output_norm.weight", {dim}},
                         {"blk.0.attn_norm.weight", {dim}},   {"blk.0.attn_q.weight", {dim, dim}},
                         {"blk.0.attn_k.weight", {dim, dim}}, {"blk.0.attn_v.weight", {dim, dim}},
                         {"blk.0.attn_output.weight", {dim, dim}}, {"blk.0.ffn_norm.weight", {dim}},
                         {"blk.0.ffn_gate.weight", {dim, ffn}},   {"blk.0.ffn_up.weight", {dim, ffn}},
                         {"blk.0.ffn_down.weight", {ffn, dim}}};
    size_t total = 0;
    for (const auto& t : ts) {
      bool is_bad = t.name == "blk.0.attn_k.weight";
      std::vector<int64_t> shape = t.shape;
      if (is_bad && bad == GgmlType::Q8_K) shape = {256, 4};  // 256-element blocks
      total += w.add_tensor(t.name, shape, is_bad ? bad : GgmlType::F32);
    }
    const std::string path = tmp("badtype.gguf");
    w.begin(path);
    std::vector<uint8_t> zeros(total);
    w.write_data(zeros.data(), zeros.size());
    w.finish();
    try {
      ModelFile::open(path);
      ADD_FAILURE() << ggml_type_name(bad);
    } catch (const Error& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find("blk.0.attn_k.weight"), std::string::npos) << msg;
      EXPECT_NE(msg.find(std::string(ggml_type_name(bad))), std::string::npos) << msg;
    }
  }
}

TEST(GgufRobustness, MissingOrMisshapenTensors) {
  std::vector<uint8_t> b = read_bytes(tiny_model(GgmlType::F32));
  // Rename a tensor in place: "blk.1.attn_v.weight" -> "blk.1.attn_X.weight".
  std::string name = "blk.1.attn_v.weight";
  auto it = std::search(b.begin(), b.end(), name.begin(), name.end());
  ASSERT_NE(it, b.end());
  *(it + 11) = 'X';
  write_bytes(tmp("renamed.gguf"), b);
  try {
    ModelFile::open(tmp("renamed.gguf"));
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("blk.1.attn_v.weight"), std::string::npos) << e.what();
  }
  // A hyper-parameter that disagrees with the tensors.
  GgufWriter w;
  llama_hparams(w, "llama");
  w.set("llama.embedding_length", gguf_u32(64));
  w.add_tensor("token_embd.weight", {32, 40}, GgmlType::F32);
  w.begin(tmp("mismatch.gguf"));
  std::vector<float> zeros(32 * 40);
  w.write_data(zeros.data(), zeros.size() * 4);
  w.finish();
  EXPECT_THROW(ModelFile::open(tmp("mismatch.gguf")), Error);
}

}  // namespace
}  // namespace seer
