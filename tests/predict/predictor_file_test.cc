#include "predict/predictor_file.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "common/error.h"
#include "predict/length_trainer.h"
#include "predict/retraining_predictor.h"
#include "predict/text_features.h"
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

// `file` (a predictor file's bytes) with its JSON header changed by `edit` and the
// checksum recomputed: a well-formed file that disagrees with itself or with seer.
template <typename F>
std::string with_header(const std::string& file, F&& edit) {
  uint32_t len = 0;
  std::memcpy(&len, file.data() + 12, sizeof(len));
  nlohmann::json header = nlohmann::json::parse(file.substr(16, len));
  edit(header);
  const std::string text = header.dump();
  const auto new_len = static_cast<uint32_t>(text.size());
  std::string out = file.substr(0, 12);
  out.append(reinterpret_cast<const char*>(&new_len), sizeof(new_len));
  out += text;
  out += file.substr(16 + len, file.size() - 16 - len - sizeof(uint64_t));  // the weights
  const uint64_t sum = fnv1a64(out);
  out.append(reinterpret_cast<const char*>(&sum), sizeof(sum));
  return out;
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
  LengthQuery r;
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

TEST_F(PredictorFileTest, WellFormedButMismatchedFilesAreClearErrors) {
  const std::string good = bytes_of(path_);
  auto load_with = [&](const std::string& bytes) {
    write_bytes(path_, bytes);
    return error_of([&] { (void)load_predictor_file(path_); });
  };
  EXPECT_EQ(load_with(with_header(good, [](nlohmann::json&) {})), "");  // the helper itself is faithful
  // Feature config of another model: its weights do not fit this one's dimension.
  const std::string bits = load_with(with_header(good, [](nlohmann::json& h) { h["features"]["hash_bits"] = 12; }));
  const std::string want = "expected " + std::to_string(((1 << 12) + 25) * small_file().model.outputs()) + " weights";
  EXPECT_NE(bits.find(want), std::string::npos) << bits;
  EXPECT_NE(bits.find(path_), std::string::npos);
  // Labels counted with another tokenizer: lengths in another unit.
  const std::string labels =
      load_with(with_header(good, [](nlohmann::json& h) { h["label_tokenizer"] = "gpt-2 BPE"; }));
  EXPECT_NE(labels.find("counted with 'gpt-2 BPE'"), std::string::npos) << labels;
  const std::string kind = load_with(with_header(good, [](nlohmann::json& h) { h["kind"] = "mlp"; }));
  EXPECT_NE(kind.find("model kind 'mlp'"), std::string::npos) << kind;
  const std::string missing = load_with(with_header(good, [](nlohmann::json& h) { h.erase("buckets"); }));
  EXPECT_NE(missing.find("bad predictor header"), std::string::npos) << missing;
  const std::string edges =
      load_with(with_header(good, [](nlohmann::json& h) { h["class_edges"] = std::vector<int>{5, 3}; }));
  EXPECT_NE(edges.find("class edges"), std::string::npos) << edges;
  const std::string hash = load_with(with_header(good, [](nlohmann::json& h) { h["features"]["hash_bits"] = 40; }));
  EXPECT_NE(hash.find("hash_bits must be in [8, 24]"), std::string::npos) << hash;
  EXPECT_NE(hash.find(path_), std::string::npos) << hash;
}

TEST_F(PredictorFileTest, SaveRejectsAnInconsistentModel) {
  PredictorFile f = small_file();
  f.model.weights.pop_back();
  EXPECT_THROW(save_predictor_file(path_, f), Error);
}

}  // namespace
}  // namespace seer
