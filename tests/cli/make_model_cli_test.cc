// `seer make-model` as a user runs it, checked through `seer inspect --json`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_seer.h"
#include "support/test_paths.h"

namespace seer {
namespace {

using testing::run_seer;
using testing::scratch_dir;
using testing::slurp;

std::string tmp(const std::string& name) { return scratch_dir() + "/" + name; }

TEST(MakeModelCli, TinyInEveryTypeThenInspect) {
  for (const char* type : {"f32", "f16", "bf16", "q8_0", "q4_0"}) {
    const std::string out = tmp(std::string("cli-tiny-") + type + ".gguf");
    auto m = run_seer({"make-model", "--shape", "tiny", "--type", type, "--out", out, "--seed", "7"});
    ASSERT_EQ(m.exit_code, 0) << m.err;
    EXPECT_NE(m.err.find("RANDOM weights"), std::string::npos) << m.err;
    auto r = run_seer({"inspect", "--json", out});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(doc["config"]["layers"], 2);
    EXPECT_EQ(doc["config"]["embedding_size"], 64);
    EXPECT_EQ(doc["config"]["heads"], 4);
    EXPECT_EQ(doc["config"]["kv_heads"], 2);
    EXPECT_EQ(doc["config"]["ffn_size"], 192);
    EXPECT_EQ(doc["config"]["vocab_size"], 259);
    EXPECT_EQ(doc["config"]["name"], "random tiny (random weights)");
    std::string upper = type;
    for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    for (const auto& t : doc["tensors"]) {
      std::string name = t["name"];
      bool norm = name.find("norm") != std::string::npos;
      EXPECT_EQ(t["type"], norm ? std::string("F32") : upper) << name;
    }
    EXPECT_EQ(doc["tensors"].size(), 2u * 9 + 3);
  }
}

TEST(MakeModelCli, CustomShapeAndErrors) {
  const std::string out = tmp("cli-custom.gguf");
  auto m = run_seer({"make-model", "--shape", "llama-125m", "--layers", "1", "--dim", "128", "--heads", "4",
                     "--kv-heads", "1", "--ffn", "256", "--vocab", "300", "--context", "128", "--type", "q8_0",
                     "--out", out, "--quiet"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_EQ(m.err, "");
  auto r = run_seer({"inspect", "--json", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["config"]["layers"], 1);
  EXPECT_EQ(doc["config"]["kv_heads"], 1);
  EXPECT_EQ(doc["config"]["context_length"], 128);
  EXPECT_EQ(doc["config"]["vocab_size"], 300);

  auto bad_shape = run_seer({"make-model", "--shape", "gpt-5", "--out", tmp("x.gguf")});
  EXPECT_EQ(bad_shape.exit_code, 1);
  EXPECT_NE(bad_shape.err.find("gpt-5"), std::string::npos) << bad_shape.err;
  auto bad_type = run_seer({"make-model", "--type", "q8_k", "--out", tmp("x.gguf")});  // activations only
  EXPECT_EQ(bad_type.exit_code, 1);
  auto bad_k_rows = run_seer({"make-model", "--type", "q4_k", "--out", tmp("x.gguf")});  // tiny: rows of 64
  EXPECT_EQ(bad_k_rows.exit_code, 1);
  EXPECT_NE(bad_k_rows.err.find("256"), std::string::npos) << bad_k_rows.err;
  auto bad_rows = run_seer({"make-model", "--ffn", "100", "--type", "q4_0", "--out", tmp("x.gguf")});
  EXPECT_EQ(bad_rows.exit_code, 1);
  EXPECT_NE(bad_rows.err.find("100"), std::string::npos) << bad_rows.err;
  auto no_out = run_seer({"make-model", "--shape", "tiny"});
  EXPECT_NE(no_out.exit_code, 0);
}

// Every other block type: rows of 256 and 512 elements (K-quants need multiples of
// 256); inspect reports the type and its bits per weight, generate runs it.
TEST(MakeModelCli, BlockTypesInspectAndGenerate) {
  const std::pair<const char*, double> types[] = {{"q4_1", 5.0},   {"q5_0", 5.5},    {"q5_1", 6.0},
                                                  {"q2_k", 2.625}, {"q3_k", 3.4375}, {"q4_k", 4.5},
                                                  {"q5_k", 5.5},   {"q6_k", 6.5625}, {"iq4_nl", 4.5},
                                                  {"iq4_xs", 4.25}};
  for (const auto& [type, bpw] : types) {
    const std::string out = tmp(std::string("cli-block-") + type + ".gguf");
    auto m = run_seer({"make-model", "--layers", "1", "--dim", "256", "--heads", "4", "--ffn", "512", "--vocab",
                       "300", "--type", type, "--out", out, "--quiet"});
    ASSERT_EQ(m.exit_code, 0) << type << ": " << m.err;
    auto r = run_seer({"inspect", "--json", out});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto doc = nlohmann::json::parse(r.out);
    EXPECT_TRUE(doc["loadable"].get<bool>()) << type;
    std::string upper = type;
    for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    for (const auto& t : doc["tensors"]) {
      if (std::string(t["name"]).find("norm") != std::string::npos) continue;
      EXPECT_EQ(t["type"], upper) << t["name"];
      EXPECT_DOUBLE_EQ(t["bits_per_weight"].get<double>(), bpw) << type;
    }
    auto text = run_seer({"inspect", out});
    EXPECT_NE(text.out.find(upper + " ("), std::string::npos) << text.out;
    auto g = run_seer({"generate", "-m", out, "-p", "hello", "-n", "4", "--temp", "0", "--threads", "2"});
    EXPECT_EQ(g.exit_code, 0) << type << ": " << g.err;
  }
}

TEST(MakeModelCli, TokenizerFromStories) {
  SEER_REQUIRE_SHARED_FILE(path, "models/stories260K.gguf");
  const std::string out = tmp("cli-tok.gguf");
  auto m = run_seer({"make-model", "--tokenizer-from", path, "--out", out, "--quiet"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  auto r = run_seer({"inspect", "--json", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["config"]["vocab_size"], 512);
  EXPECT_EQ(doc["tokenizer"]["vocab_size"], 512);
}

}  // namespace
}  // namespace seer
