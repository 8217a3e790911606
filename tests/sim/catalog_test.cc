#include "sim/catalog.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "common/error.h"
#include "support/test_paths.h"

namespace seer {
namespace {

std::string write_file(const std::string& dir, const std::string& name, const std::string& text) {
  std::filesystem::create_directories(dir);
  std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Catalog, DefaultCatalogHoldsTheIssuesHardwareAndModels) {
  Catalog c = Catalog::load(Catalog::default_dir());
  for (const char* hw : {"A100-80GB", "H100-80GB", "H200", "A40"}) {
    const HardwareSpec& h = c.hardware(hw);
    EXPECT_GT(h.memory_bytes, int64_t{40} << 30) << hw;
    EXPECT_GT(h.memory_bandwidth, 5e11) << hw;
    EXPECT_GT(h.peak_flops, 1e14) << hw;
    EXPECT_LE(h.efficiency.compute, 1.0) << hw;
  }
  for (const char* m : {"Llama-2-7B", "Llama-2-13B", "Llama-2-70B", "Mistral-7B", "GPT-J-6B", "GPT-NeoX-20B",
                        "LLaMA-13B", "LLaMA-33B", "OPT-13B", "Yi-34B", "Falcon-180B"}) {
    EXPECT_GT(c.model(m).layers, 0) << m;
  }
}

TEST(Catalog, ParameterCountsMatchThePublishedSizes) {
  Catalog c = Catalog::load(Catalog::default_dir());
  auto billions = [&](const char* m) { return c.model(m).parameter_count() / 1e9; };
  EXPECT_NEAR(billions("Llama-2-7B"), 6.74, 0.05);
  EXPECT_NEAR(billions("Llama-2-13B"), 13.0, 0.1);
  EXPECT_NEAR(billions("Llama-2-70B"), 69.0, 0.5);
  EXPECT_NEAR(billions("Mistral-7B"), 7.24, 0.05);
  EXPECT_NEAR(billions("GPT-J-6B"), 6.05, 0.05);
  EXPECT_NEAR(billions("GPT-NeoX-20B"), 20.5, 0.3);
  EXPECT_NEAR(billions("LLaMA-33B"), 32.5, 0.3);
  EXPECT_NEAR(billions("OPT-13B"), 12.85, 0.2);
  EXPECT_NEAR(billions("Yi-34B"), 34.4, 0.3);
  EXPECT_NEAR(billions("Falcon-180B"), 179.0, 2.0);
}

TEST(Catalog, LookupIsCaseInsensitiveAndUnknownNamesListTheKnownOnes) {
  Catalog c = Catalog::load(Catalog::default_dir());
  EXPECT_EQ(c.model("llama-2-7b").name, "Llama-2-7B");
  EXPECT_EQ(c.hardware("a100-80gb").name, "A100-80GB");
  std::string msg = error_of([&] { c.model("Llama-9-1B"); });
  EXPECT_NE(msg.find("unknown model 'Llama-9-1B'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Llama-2-70B"), std::string::npos) << msg;
  msg = error_of([&] { c.hardware("TPUv5"); });
  EXPECT_NE(msg.find("H100-80GB"), std::string::npos) << msg;
}

TEST(Catalog, MalformedEntriesNameTheFileEntryAndField) {
  std::string dir = testing::scratch_dir() + "/catalog_bad";
  write_file(dir, "models.json", R"({"models": {"M": {"layers": 2, "hidden": 64, "heads": 4, "ffn": 128}}})");
  write_file(dir, "hardware.json",
             R"({"hardware": {"G": {"memory_bytes": 1e9, "memory_bandwidth": "fast", "peak_flops": 1e12,
                 "host_link_bandwidth": 1e9, "interconnect_bandwidth": 1e9}}})");
  std::string msg = error_of([&] { Catalog::load(dir); });
  EXPECT_NE(msg.find("hardware.json: hardware 'G'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'memory_bandwidth' must be a number"), std::string::npos) << msg;

  write_file(dir, "hardware.json", R"({"hardware": {}})");
  msg = error_of([&] { Catalog::load(dir); });
  EXPECT_NE(msg.find("model 'M'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'vocab'"), std::string::npos) << msg;

  write_file(dir, "models.json", "{not json");
  msg = error_of([&] { Catalog::load(dir); });
  EXPECT_NE(msg.find("not valid JSON"), std::string::npos) << msg;
}

TEST(Catalog, LinearRegimesMustRiseAndHoldFractions) {
  const std::string dir = testing::scratch_dir() + "/catalog_regimes";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(Catalog::default_dir() + "/models.json", dir + "/models.json",
                             std::filesystem::copy_options::overwrite_existing);
  auto load_with = [&](const std::string& regimes) {
    std::ofstream(dir + "/hardware.json")
        << R"({"hardware": {"cpu": {"memory_bytes": 1e10, "memory_bandwidth": 1e10, "peak_flops": 1e11,
              "host_link_bandwidth": 1e10, "interconnect_bandwidth": 1e10, "linear_regimes": )"
        << regimes << "}}}";
    try {
      Catalog::load(dir);
      return std::string();
    } catch (const Error& e) {
      return std::string(e.what());
    }
  };
  EXPECT_EQ(load_with(R"([{"min_tokens": 1, "memory": 1, "compute": 0.5, "overlap": 2.5}])"), "");
  EXPECT_NE(load_with(R"([{"min_tokens": 1, "memory": 1, "compute": 1, "overlap": 0.5}])").find("overlap"),
            std::string::npos);
  EXPECT_NE(load_with(R"([{"min_tokens": 8, "memory": 1, "compute": 1}, {"min_tokens": 8, "memory": 1, "compute": 1}])")
                .find("must increase"),
            std::string::npos);
  EXPECT_NE(load_with(R"([{"min_tokens": 1, "memory": 1.5, "compute": 1}])").find("memory"), std::string::npos);
  // int8 kernels outrun the f32 peak the compute factor is relative to: up to kMaxLinearCompute.
  EXPECT_EQ(load_with(R"([{"min_tokens": 1, "memory": 0.5, "compute": 2.5, "overlap": 1}])"), "");
  EXPECT_NE(load_with(R"([{"min_tokens": 1, "memory": 0.5, "compute": 4.5}])").find("compute"), std::string::npos);
  EXPECT_NE(load_with(R"({"min_tokens": 1})").find("must be an array"), std::string::npos);
}

TEST(Catalog, WriteHardwareEntryReplacesOneEntryAndKeepsTheOthers) {
  std::string dir = testing::scratch_dir() + "/catalog_write";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(Catalog::default_dir() + "/hardware.json", dir + "/hardware.json");
  std::filesystem::copy_file(Catalog::default_dir() + "/models.json", dir + "/models.json");
  HardwareSpec cpu;
  cpu.name = "cpu";
  cpu.memory_bytes = int64_t{24} << 30;
  cpu.memory_bandwidth = 1e10;
  cpu.peak_flops = 1e11;
  cpu.host_link_bandwidth = 1e10;
  cpu.interconnect_bandwidth = 1e10;
  cpu.efficiency.compute = 0.5;
  cpu.iteration_overhead_s = 1e-4;
  write_hardware_entry(dir + "/hardware.json", cpu);
  cpu.efficiency.compute = 0.25;  // a second write replaces the entry
  cpu.linear_regimes = {{1, 0.9, 0.6, 2.5}, {32, 0.2, 0.8, 1.0}};
  write_hardware_entry(dir + "/hardware.json", cpu);
  Catalog c = Catalog::load(dir);
  EXPECT_DOUBLE_EQ(c.hardware("cpu").efficiency.compute, 0.25);
  const auto& regimes = c.hardware("cpu").linear_regimes;
  ASSERT_EQ(regimes.size(), 2u);
  EXPECT_EQ(regimes[1].min_tokens, 32);
  EXPECT_DOUBLE_EQ(regimes[0].compute, 0.6);
  EXPECT_DOUBLE_EQ(regimes[0].overlap, 2.5);
  EXPECT_DOUBLE_EQ(regimes[1].overlap, 1.0);
  EXPECT_DOUBLE_EQ(c.hardware("cpu").iteration_overhead_s, 1e-4);
  for (const auto& name : Catalog::load(Catalog::default_dir()).hardware_names())
    EXPECT_NO_THROW(c.hardware(name)) << name;
  EXPECT_GT(c.hardware("H200").memory_bytes, c.hardware("A100-80GB").memory_bytes);
}

}  // namespace
}  // namespace seer
