#include "predict/predictor_file.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "common/error.h"
#include "predict/length_trainer.h"
#include "predict/retraining_predictor.h"
#include "predict/trained_predictor.h"
#include "support/test_paths.h"

namespace seer {
namespace {

PredictorFile small_file() {
  TrainOptions o;
  o.features.hash_bits = 10;
  o.max_len = 500;
  o.buckets = LengthBuckets::equal(500, 5);
  o.fine_classes = 12;
  o.epochs = 2;
  std::vector<LengthExample> ex = {{"say hi", 2}, {"write a story about a dragon", 400}, {"list three fruits", 12}};
  PredictorFile f;
  f.model = train_length_model(ex, o);
  f.notes = {{"dataset", "tiny"}, {"split_seed", 3}};
  return f;
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const std::string& path, const std::string& b) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(b.data(), static_cast<std::streamsize>(b.size()));
}

// The message of the seer::Error `f` throws ("" when it does not throw).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

class PredictorFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = testing::scratch_dir() + "/predictor.seerlp";
    save_predictor_file(path_, small_file());
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::string path_;
};

TEST_F(PredictorFileTest, RoundTripKeepsModelNotesAndPredictions) {
  const PredictorFile in = small_file();
  const PredictorFile out = load_predictor_file(path_);
  EXPECT_EQ(out.model.kind, in.model.kind);
  EXPECT_EQ(out.model.features, in.model.features);
  EXPECT_EQ(out.model.buckets.width, 100);
  EXPECT_EQ(out.model.class_edges, in.model.class_edges);
  EXPECT_EQ(out.model.class_bucket, in.model.class_bucket);
  EXPECT_EQ(out.model.weights, in.model.weights);
  EXPECT_EQ(out.notes.at("dataset"), "tiny");
  for (const char* p : {"say hi", "write a story about a dragon", "something new"}) {
    EXPECT_EQ(predict_length(out.model, p).bucket, predict_length(in.model, p).bucket);
    EXPECT_EQ(predict_length(out.model, p).tokens, predict_length(in.model, p).tokens);
  }
  EXPECT_TRUE(looks_like_predictor_file(path_));
  auto made = make_length_predictor(path_, PredictorOptions{});
  Request r;
  r.prompt_text = "write a story about a dragon";
  EXPECT_EQ(made->predict(r).bucket, predict_length(in.model, r.prompt_text).bucket);
  EXPECT_EQ(made->stats().predictions, 1);
  EXPECT_EQ(dynamic_cast<TrainedPredictor*>(made.get())->model().weights, in.model.weights);
  PredictorOptions retrain;
  retrain.retrain = true;
  auto online = make_length_predictor(path_, retrain);
  ASSERT_NE(dynamic_cast<RetrainingPredictor*>(online.get()), nullptr);
  EXPECT_EQ(online->predict(r).bucket, predict_length(in.model, r.prompt_text).bucket);
}

TEST_F(PredictorFileTest, CorruptTruncatedWrongMagicAndOtherVersionsAreClearErrors) {
  const std::string good = bytes_of(path_);
  auto load_with = [&](const std::string& bytes) {
    write_bytes(path_, bytes);
    return error_of([&] { (void)load_predictor_file(path_); });
  };
  std::string corrupt = good;
  corrupt[corrupt.size() - 20] ^= 0x40;  // inside the weights
  EXPECT_NE(load_with(corrupt).find("corrupt (checksum mismatch)"), std::string::npos);
  EXPECT_NE(load_with(corrupt).find(path_), std::string::npos);
  EXPECT_NE(load_with(good.substr(0, good.size() / 2)).find("truncated"), std::string::npos);
  EXPECT_NE(load_with(good.substr(0, 10)).find("truncated"), std::string::npos);
  EXPECT_NE(load_with("").find("truncated"), std::string::npos);
  std::string magic = good;
  magic[0] = 'X';
  EXPECT_NE(load_with(magic).find("wrong magic"), std::string::npos);
  std::string version = good;
  version[8] = 2;  // the u32 version after the magic
  EXPECT_NE(load_with(version).find("version 2 is not supported"), std::string::npos);
  std::string header = good;
  header[16] = '#';  // the JSON header's first byte
  EXPECT_NE(load_with(header).find("not valid JSON"), std::string::npos);
  EXPECT_NE(load_with(good + "x").find("unexpected bytes"), std::string::npos);
  write_bytes(path_, magic);
  EXPECT_NE(error_of([&] { (void)make_length_predictor(path_, PredictorOptions{}); }).find(path_), std::string::npos);
  EXPECT_NE(error_of([&] { (void)load_predictor_file(path_ + ".missing"); }).find("cannot open"), std::string::npos);
  EXPECT_EQ(load_with(good), "");
}

TEST_F(PredictorFileTest, SaveRejectsAnInconsistentModel) {
  PredictorFile f = small_file();
  f.model.weights.pop_back();
  EXPECT_THROW(save_predictor_file(path_, f), Error);
}

}  // namespace
}  // namespace seer
