// `seer trace` and `seer sim` as a user runs them.
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/test_paths.h"

namespace seer {
namespace {

struct CliRun {
  int rc;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

CliRun run(const std::string& args) {
  const std::string err_path = testing::scratch_dir() + "/stderr.txt";
  std::string cmd = testing::seer_binary() + " " + args + " 2>" + err_path;
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, slurp(err_path)};
}

std::string make_trace(const std::string& name, const std::string& extra = "") {
  std::string path = testing::scratch_dir() + "/" + name;
  CliRun t = run("trace --out " + path + " --num 60 --rate 8 --seed 3 --prompt-max 2000 " + extra);
  EXPECT_EQ(t.rc, 0) << t.err;
  return path;
}

TEST(SimCli, JsonModePrintsExactlyOneObjectWithTheAgreedKeys) {
  std::string trace = make_trace("cli.jsonl");
  CliRun r = run("sim --trace " + trace + " --model Llama-2-7B --hardware A100-80GB --policy sarathi --tbt-slo 0.1 --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);  // throws on anything but one JSON value
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j.size(), 18u);
  for (const char* k : {"policy", "requests", "duration_s", "throughput", "ttft_s", "tbt_s", "e2e_s",
                        "normalized_latency_s", "batch_size", "tokens_per_iteration", "kv_utilization", "preemptions",
                        "allocation_failures", "swapped_bytes", "recomputed_tokens", "scheduler_time_per_iteration_s",
                        "slo_attainment", "jct_s"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["policy"], "sarathi");
  EXPECT_EQ(j["requests"], 60);
  EXPECT_NE(r.err.find("token budget"), std::string::npos) << r.err;
}

// A multi-turn trace: every JSON output carries the `cache` object, with one
// definition of recomputed tokens for every policy (history tokens not reused).
TEST(SimCli, MultiTurnJsonHasTheCacheObject) {
  const std::string path = testing::scratch_dir() + "/multiturn.jsonl";
  int64_t history = 0;
  {
    std::ofstream out(path);
    for (int c = 0; c < 4; ++c) {
      int64_t context = 0;
      for (int t = 0; t < 3; ++t) {
        const int prompt = 200 + 50 * t + c, output = 60 + 10 * c;
        out << fmt::format(R"({{"id":"c{}t{}","arrival_s":{},"prompt_tokens":{},"output_tokens":{},)"
                           R"("conversation":"c{}","turn":{}{}}})",
                           c, t, 0.5 * c + 2.0 * t, prompt, output, c, t, t > 0 ? R"(,"think_s":1)" : "")
            << "\n";
        history += context;  // the turn's prompt re-sends every earlier prompt and answer
        context += prompt + output;
      }
    }
  }
  const std::vector<std::string> keys = {"hit_tokens_device", "hit_tokens_host", "recomputed_tokens", "dropped_tokens",
                                         "swapped_out_bytes", "swapped_in_bytes", "hit_rate"};
  std::map<std::string, nlohmann::json> cache;
  for (const char* policy : {"pensieve", "pensieve-gpu", "vllm"}) {
    CliRun r = run("sim --trace " + path + " --model Llama-2-7B --hardware A100-80GB --policy " + policy + " --json");
    ASSERT_EQ(r.rc, 0) << policy << ": " << r.err;
    auto j = nlohmann::json::parse(r.out);
    ASSERT_TRUE(j.contains("cache")) << policy << ": " << r.out;
    for (const auto& k : keys) EXPECT_TRUE(j["cache"].contains(k)) << policy << ": " << k;
    cache[policy] = j["cache"];
  }
  EXPECT_EQ(cache["vllm"]["recomputed_tokens"], history);  // stateless: the whole history again
  EXPECT_EQ(cache["vllm"]["hit_rate"], 0.0);
  for (const char* policy : {"pensieve", "pensieve-gpu"}) {
    const auto& c = cache[policy];
    const int64_t hits = c["hit_tokens_device"].get<int64_t>() + c["hit_tokens_host"].get<int64_t>();
    EXPECT_GT(hits, 0) << policy;
    EXPECT_EQ(c["recomputed_tokens"].get<int64_t>(), history - hits) << policy;
    EXPECT_GT(c["hit_rate"].get<double>(), 0.0) << policy;
  }
}

TEST(SimCli, TableModeAndRateRescaling) {
  std::string trace = make_trace("cli2.jsonl");
  CliRun slow = run("sim --trace " + trace + " --model mistral-7b --hardware h100-80gb --policy vllm --rate 1 --json");
  CliRun table = run("sim --trace " + trace + " --model mistral-7b --hardware h100-80gb --policy vllm --rate 1");
  ASSERT_EQ(slow.rc, 0) << slow.err;
  ASSERT_EQ(table.rc, 0) << table.err;
  auto j = nlohmann::json::parse(slow.out);
  EXPECT_GT(j["duration_s"].get<double>(), 59.0);  // 60 requests at 1 req/s
  EXPECT_NE(table.out.find("policy vllm: 60 requests"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("TTFT"), std::string::npos);
}

TEST(SimCli, BadInputsGiveExitCode1AndSayWhatIsWrong) {
  std::string bad = testing::scratch_dir() + "/bad.jsonl";
  std::ofstream(bad) << "{\"arrival_s\":0,\"prompt_tokens\":5,\"output_tokens\":3}\n"
                     << "{\"arrival_s\":1,\"prompt_tokens\":\"many\",\"output_tokens\":3}\n";
  CliRun r = run("sim --trace " + bad + " --model Llama-2-7B --policy vllm");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("bad.jsonl:2: field 'prompt_tokens'"), std::string::npos) << r.err;
  std::string good = make_trace("cli3.jsonl");
  r = run("sim --trace " + good + " --model Llama-5-1T --policy vllm");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("known: "), std::string::npos) << r.err;
  r = run("sim --trace " + good + " --model Llama-2-7B --policy fifo");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("sarathi"), std::string::npos) << r.err;
  r = run("sim --trace " + good + " --model Llama-2-70B --hardware A100-80GB --policy vllm");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("GiB"), std::string::npos) << r.err;
  r = run("trace --out " + testing::scratch_dir() + "/x.jsonl --num 5 --rate 1 --arrival weibull");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("poisson or gamma"), std::string::npos) << r.err;
}

TEST(SimCli, PredictorAndPaddingFlags) {
  std::string trace = make_trace("cli_pred.jsonl");
  CliRun ok = run("sim --trace " + trace + " --model Llama-2-7B --policy vllm --predictor oracle --predictor-buckets 8 "
                  "--predictor-max-len 1024 --padding 0.2 --json");
  ASSERT_EQ(ok.rc, 0) << ok.err;
  CliRun bad = run("sim --trace " + trace + " --model Llama-2-7B --policy vllm --predictor tea-leaves");
  EXPECT_EQ(bad.rc, 1);
  EXPECT_NE(bad.err.find("--predictor"), std::string::npos) << bad.err;
  bad = run("sim --trace " + trace + " --model Llama-2-7B --policy s3");
  EXPECT_EQ(bad.rc, 1);
  EXPECT_NE(bad.err.find("--predictor"), std::string::npos) << bad.err;
  CliRun s3 = run("sim --trace " + trace + " --model Llama-2-7B --policy s3 --predictor oracle --json");
  ASSERT_EQ(s3.rc, 0) << s3.err;
  EXPECT_EQ(nlohmann::json::parse(s3.out)["policy"], "s3");
  bad = run("sim --trace " + trace + " --model Llama-2-7B --policy vllm --padding -0.5");
  EXPECT_EQ(bad.rc, 1);
  EXPECT_NE(bad.err.find("--padding"), std::string::npos) << bad.err;
}

TEST(SimCli, TraceIsReproducibleBySeed) {
  std::string a = make_trace("seed_a.jsonl", "--arrival gamma --burstiness 0.5");
  std::string b = make_trace("seed_b.jsonl", "--arrival gamma --burstiness 0.5");
  EXPECT_EQ(slurp(a), slurp(b));
  EXPECT_FALSE(slurp(a).empty());
}

TEST(SimCli, SweepWritesAPlotAndItsPoints) {
  std::string trace = make_trace("sweep.jsonl");
  std::string svg = testing::scratch_dir() + "/plot.svg";
  CliRun r = run("sim sweep --trace " + trace + " --model Llama-2-7B --policies orca,vllm --rates 2,4 --out " + svg);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(slurp(svg).find("<svg"), std::string::npos);
  auto j = nlohmann::json::parse(slurp(testing::scratch_dir() + "/plot.json"));
  EXPECT_EQ(j["points"].size(), 4u);
}

TEST(SimCli, CapacityPrintsEachProbeAndTheResult) {
  std::string trace = make_trace("cap.jsonl");
  CliRun r = run("sim capacity --trace " + trace + " --model Llama-2-7B --policy vllm --slo-tbt-p99 0.05 "
              "--start-rate 4 --tolerance 0.2");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("rate    4.000 req/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("capacity of vllm:"), std::string::npos) << r.out;
}

TEST(SimCli, ModelShapeCanComeFromAModelFile) {
  SEER_REQUIRE_SHARED_FILE(model, "models/stories260K.gguf");
  std::string trace = testing::scratch_dir() + "/tiny.jsonl";
  CliRun t = run("trace --out " + trace + " --num 30 --rate 50 --prompt-mean 40 --output-mean 20 --prompt-max 200 "
                 "--output-max 100");
  ASSERT_EQ(t.rc, 0) << t.err;
  CliRun r = run("sim --trace " + trace + " --model " + model + " --hardware A40 --policy orca --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["requests"], 30);
  EXPECT_NE(r.err.find("on A40"), std::string::npos) << r.err;
}

TEST(SimCli, EcoServeWithOracleFixedKvPoolAndDeadlines) {
  std::string trace = make_trace("eco.jsonl");
  CliRun r = run("sim --trace " + trace + " --model OPT-13B --kv-memory 12G --block-size 32 --policy ecoserve "
                 "--predictor oracle --token-budget 2048 --check-invariants --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["policy"], "ecoserve");
  ASSERT_TRUE(j["slo_attainment"].is_number());
  EXPECT_GE(j["slo_attainment"].get<double>(), 0.0);
  EXPECT_LE(j["slo_attainment"].get<double>(), 1.0);
  EXPECT_GT(j["jct_s"]["mean"].get<double>(), 0.0);
  EXPECT_NE(r.err.find("KV blocks of 32 tokens"), std::string::npos) << r.err;
}

TEST(SimCli, BadEcoServeFlagsNameTheFlag) {
  std::string trace = make_trace("eco_bad.jsonl");
  CliRun r = run("sim --trace " + trace + " --model OPT-13B --kv-memory 500G --policy ecoserve");
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.err.find("--kv-memory"), std::string::npos) << r.err;
  r = run("sim --trace " + trace + " --model OPT-13B --policy ecoserve --pt-reserve 1.5");
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.err.find("--pt-reserve"), std::string::npos) << r.err;
}

TEST(SimCli, ValidateRejectsAFolderWithoutProfiles) {
  CliRun r = run("sim validate --profiles " + testing::scratch_dir());
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("--profiles"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("mlp.csv"), std::string::npos) << r.err;
}

TEST(SimCli, ValidatePrintsOneJsonObjectPerLayerOpAndAllReduce) {
  SEER_REQUIRE_SHARED_FILE(license, "gpu-profiles/vidur/LICENSE");
  const std::string dir = license.substr(0, license.size() - std::string("/LICENSE").size());
  CliRun r = run("sim validate --profiles " + dir + " --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["layers"].empty());
  EXPECT_TRUE(j["layers"][0]["error"].contains("mean_relative_error"));
  EXPECT_FALSE(j["ops"].empty());
  EXPECT_FALSE(j["all_reduce"].empty());
  CliRun table = run("sim validate --profiles " + dir);
  ASSERT_EQ(table.rc, 0) << table.err;
  EXPECT_NE(table.out.find("mean err"), std::string::npos);
  EXPECT_NE(table.out.find("mlp_up_proj"), std::string::npos);
  EXPECT_NE(table.out.find("not modelled"), std::string::npos);
}

TEST(SimCli, ValidateHoldsOutRowsAndCrossValidates) {
  SEER_REQUIRE_SHARED_FILE(license, "gpu-profiles/vidur/LICENSE");
  const std::string dir = license.substr(0, license.size() - std::string("/LICENSE").size());
  CliRun h = run("sim validate --profiles " + dir + " --hold-out model:phi-2 --hold-out tp:8 --json");
  ASSERT_EQ(h.rc, 0) << h.err;
  auto j = nlohmann::json::parse(h.out);
  ASSERT_EQ(j["folds"].size(), 3u);  // a100, a40, h100
  EXPECT_EQ(j["folds"][0]["held_out"], "model:phi-2,tp:8");
  for (const char* k : {"fitted_factors", "train_fit_error", "train_catalog_error", "held_out_error",
                        "held_out_catalog_error", "combinations"})
    EXPECT_TRUE(j["folds"][0].contains(k)) << k;
  CliRun cv = run("sim validate --profiles " + dir + " --cross-validate models");
  ASSERT_EQ(cv.rc, 0) << cv.err;
  EXPECT_NE(cv.out.find("cross-validate models"), std::string::npos);
  EXPECT_NE(cv.out.find("model:Meta-Llama-3-8B"), std::string::npos) << cv.out;
  for (const char* bad : {"--hold-out model:NoSuchModel", "--hold-out layers:2", "--cross-validate devices",
                          "--hold-out tp:1 --cross-validate models"}) {
    CliRun r = run("sim validate --profiles " + dir + " " + bad);
    EXPECT_EQ(r.rc, 1) << bad;
  }
  EXPECT_EQ(run("sim validate --hold-out tp:1").rc, 1);
}

}  // namespace
}  // namespace seer

namespace seer {
namespace {

TEST(SimCli, ReplicasPrintTheSetsTableAndJson) {
  std::string trace = make_trace("cli_replicas.jsonl");
  const std::string base = "sim --trace " + trace + " --model Llama-2-7B --policy pensieve --quiet --replicas 3 ";
  CliRun table = run(base + "--routing least-loaded --shared-tier --fail-replica 1@2");
  ASSERT_EQ(table.rc, 0) << table.err;
  EXPECT_NE(table.out.find("replicas: 3 (least-loaded)"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("shared tier redis-25GbE"), std::string::npos) << table.out;
  CliRun json = run(base + "--routing conversation-affinity --json");
  ASSERT_EQ(json.rc, 0) << json.err;
  auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["routing"], "conversation-affinity");
  EXPECT_EQ(j["per_replica"].size(), 3u);
  EXPECT_EQ(j["requests"], 60);
  for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
           {"--routing random", "--routing"},
           {"--fail-replica 7@1", "--fail-replica"},
           {"--fail-replica soon", "REPLICA@SECONDS"},
           {"--shared-tier --shared-tier-spec carrier-pigeon", "shared KV tier"}}) {
    CliRun bad = run(base + args);
    EXPECT_EQ(bad.rc, 1) << args;
    EXPECT_NE(bad.err.find(says), std::string::npos) << args << ": " << bad.err;
  }
  CliRun stateless = run("sim --trace " + trace + " --model Llama-2-7B --policy vllm --quiet --replicas 2 --shared-tier");
  EXPECT_EQ(stateless.rc, 1);
  EXPECT_NE(stateless.err.find("--shared-tier"), std::string::npos) << stateless.err;
}

}  // namespace
}  // namespace seer
