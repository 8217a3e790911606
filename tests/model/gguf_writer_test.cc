#include <gtest/gtest.h>

#include <filesystem>

#include "common/error.h"
#include "model/gguf_file.h"
#include "model/gguf_writer.h"
#include "model/quant.h"
#include "model_test_util.h"

namespace seer {
namespace {

GgufValue scalar(GgufType t, uint64_t u) { return GgufValue{t, u}; }
GgufValue signed_scalar(GgufType t, int64_t i) { return GgufValue{t, i}; }

std::string tmp(const std::string& name) { return testing::scratch_dir() + "/" + name; }

TEST(GgufWriter, RoundTripsEveryMetadataType) {
  GgufWriter w;
  w.set("u8", scalar(GgufType::UINT8, 255));
  w.set("i8", signed_scalar(GgufType::INT8, -128));
  w.set("u16", scalar(GgufType::UINT16, 65535));
  w.set("i16", signed_scalar(GgufType::INT16, -32768));
  w.set("u32", gguf_u32(4000000000u));
  w.set("i32", gguf_i32(-2000000000));
  w.set("u64", gguf_u64(0xFFFFFFFFFFFFFFF0ull));
  w.set("i64", signed_scalar(GgufType::INT64, INT64_MIN));
  w.set("f32", gguf_f32(1.5f));
  w.set("f64", GgufValue{GgufType::FLOAT64, 2.718281828459045});
  w.set("bool.t", gguf_bool(true));
  w.set("bool.f", gguf_bool(false));
  w.set("str", gguf_string("h\xC3\xA9llo\nworld"));
  w.set("str.empty", gguf_string(""));
  w.set("arr.str", gguf_string_array({"a", "", "ccc"}));
  w.set("arr.f32", gguf_f32_array({0.25f, -1.0f}));
  w.set("arr.empty", gguf_array(GgufType::INT32, {}));
  // [[1, 2], [], [3]] of u16, and a depth-3 array of strings.
  w.set("arr.nested", gguf_array(GgufType::ARRAY, {gguf_array(GgufType::UINT16, {scalar(GgufType::UINT16, 1),
                                                                                  scalar(GgufType::UINT16, 2)}),
                                                   gguf_array(GgufType::UINT16, {}),
                                                   gguf_array(GgufType::UINT16, {scalar(GgufType::UINT16, 3)})}));
  w.set("arr.deep", gguf_array(GgufType::ARRAY, {gguf_array(GgufType::ARRAY, {gguf_string_array({"x", "y"})})}));
  w.set("u32", gguf_u32(7));  // replaces, keeps one entry
  const std::string path = tmp("meta.gguf");
  w.begin(path);
  w.finish();
  EXPECT_EQ(std::filesystem::file_size(path), w.file_size());

  auto f = GgufFile::open(path);
  EXPECT_EQ(f->metadata().size(), 19u);
  EXPECT_EQ(f->get_int("u8"), 255);
  EXPECT_EQ(f->get_int("i8"), -128);
  EXPECT_EQ(f->get_int("u16"), 65535);
  EXPECT_EQ(f->get_int("i16"), -32768);
  EXPECT_EQ(f->get_int("u32"), 7);
  EXPECT_EQ(f->get_int("i32"), -2000000000);
  EXPECT_EQ(std::get<uint64_t>(f->find("u64")->v), 0xFFFFFFFFFFFFFFF0ull);
  EXPECT_THROW(f->get_int("u64"), Error);  // does not fit int64: reported, not wrapped
  EXPECT_EQ(f->get_int("i64"), INT64_MIN);
  EXPECT_EQ(f->get_float("f32"), 1.5);
  EXPECT_EQ(f->get_float("f64"), 2.718281828459045);
  EXPECT_TRUE(f->find("bool.t")->as_bool("bool.t"));
  EXPECT_FALSE(f->find("bool.f")->as_bool("bool.f"));
  EXPECT_EQ(f->get_string("str"), "h\xC3\xA9llo\nworld");
  EXPECT_EQ(f->get_string("str.empty"), "");
  for (const char* k : {"u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f32", "f64", "str", "arr.str"})
    EXPECT_NE(f->find(k), nullptr) << k;
  EXPECT_EQ(f->find("i16")->type, GgufType::INT16);
  EXPECT_EQ(f->find("f64")->type, GgufType::FLOAT64);

  const auto& strs = f->get_array("arr.str");
  ASSERT_EQ(strs.size(), 3u);
  EXPECT_EQ(strs[2].as_string("arr.str"), "ccc");
  EXPECT_EQ(f->find("arr.str")->elem_type, GgufType::STRING);
  EXPECT_EQ(f->get_array("arr.f32")[1].as_float("arr.f32"), -1.0);
  EXPECT_TRUE(f->get_array("arr.empty").empty());
  EXPECT_EQ(f->find("arr.empty")->elem_type, GgufType::INT32);

  const auto& nested = f->get_array("arr.nested");
  ASSERT_EQ(nested.size(), 3u);
  EXPECT_EQ(nested[0].elem_type, GgufType::UINT16);
  EXPECT_EQ(nested[0].as_array("n").size(), 2u);
  EXPECT_EQ(nested[0].as_array("n")[1].as_int("n"), 2);
  EXPECT_TRUE(nested[1].as_array("n").empty());
  EXPECT_EQ(nested[2].as_array("n")[0].as_int("n"), 3);
  const auto& deep = f->get_array("arr.deep")[0].as_array("d")[0].as_array("d");
  ASSERT_EQ(deep.size(), 2u);
  EXPECT_EQ(deep[1].as_string("d"), "y");
}

TEST(GgufWriter, RoundTripsTensorsOfEveryTypeAndAlignment) {
  for (uint64_t alignment : {32u, 64u, 256u}) {
    for (uint32_t version : {2u, 3u}) {
      GgufWriter w(version, alignment);
      w.set("general.architecture", gguf_string("none"));
      std::vector<GgmlType> types = {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0, GgmlType::Q4_0,
                                     GgmlType::Q4_K};
      std::vector<std::vector<uint8_t>> data;
      for (size_t i = 0; i < types.size(); ++i) {
        std::vector<int64_t> shape = types[i] == GgmlType::Q4_K ? std::vector<int64_t>{256, 3}
                                                                  : std::vector<int64_t>{64, 3, 2};
        size_t bytes = w.add_tensor("t" + std::to_string(i), shape, types[i]);
        std::vector<uint8_t> d(bytes);
        for (size_t b = 0; b < bytes; ++b) d[b] = static_cast<uint8_t>(b * 31 + i * 7);
        data.push_back(std::move(d));
      }
      const std::string path = tmp("tensors.gguf");
      w.begin(path);
      // Stream in uneven chunks that straddle tensor boundaries.
      std::vector<uint8_t> all;
      for (const auto& d : data) all.insert(all.end(), d.begin(), d.end());
      for (size_t off = 0; off < all.size(); off += 37) w.write_data(all.data() + off, std::min<size_t>(37, all.size() - off));
      w.finish();

      auto f = GgufFile::open(path);
      EXPECT_EQ(f->version(), version);
      EXPECT_EQ(f->alignment(), alignment);
      EXPECT_EQ(f->data_offset() % alignment, 0u);
      EXPECT_EQ(f->file_size(), w.file_size());
      ASSERT_EQ(f->tensors().size(), types.size());
      for (size_t i = 0; i < types.size(); ++i) {
        const GgufTensorInfo& t = f->tensors()[i];
        EXPECT_EQ(t.type, types[i]);
        EXPECT_EQ(t.offset % alignment, 0u);
        ASSERT_EQ(t.bytes, data[i].size());
        EXPECT_EQ(0, std::memcmp(t.data, data[i].data(), t.bytes)) << "tensor " << i << " alignment " << alignment;
      }
      EXPECT_EQ(f->find_tensor("t3")->shape, (std::vector<int64_t>{64, 3, 2}));
    }
  }
}

TEST(GgufWriter, RejectsMisuse) {
  GgufWriter w;
  EXPECT_THROW(w.add_tensor("q", {33, 2}, GgmlType::Q8_0), Error);  // row not a block multiple
  EXPECT_THROW(w.add_tensor("z", {0}, GgmlType::F32), Error);
  EXPECT_THROW(w.add_tensor("five", {1, 1, 1, 1, 1}, GgmlType::F32), Error);
  w.add_tensor("a", {4}, GgmlType::F32);
  EXPECT_THROW(w.add_tensor("a", {4}, GgmlType::F32), Error);
  EXPECT_THROW(GgufWriter(4), Error);
  EXPECT_THROW(GgufWriter(3, 48), Error);

  // An array whose items do not have the declared element type.
  GgufWriter bad;
  bad.set("mixed", gguf_array(GgufType::INT32, {gguf_i32(1), gguf_string("x")}));
  EXPECT_THROW(bad.begin(tmp("bad.gguf")), Error);
}

TEST(GgufWriter, IncompleteDataLeavesNoFile) {
  const std::string path = tmp("incomplete.gguf");
  {
    GgufWriter w;
    w.add_tensor("a", {8}, GgmlType::F32);
    w.begin(path);
    float x[4] = {};
    w.write_data(x, sizeof(x));
    EXPECT_THROW(w.finish(), Error);
    EXPECT_THROW(w.write_data(x, 64), Error);  // more than declared
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".partial"));
}

}  // namespace
}  // namespace seer
