// `seer bench` against a running `seer serve`: a small trace, single- and multi-turn,
// producing the JSON keys of `seer sim --json`.
#include <fstream>

#include <gtest/gtest.h>

#include "e2e/server_process.h"
#include "support/test_paths.h"

namespace seer::e2e {
namespace {

using nlohmann::json;

const std::vector<std::string> kSimKeys = {
    "policy",       "requests",        "duration_s",          "throughput",          "ttft_s",
    "tbt_s",        "e2e_s",           "normalized_latency_s", "batch_size",          "tokens_per_iteration",
    "kv_utilization", "preemptions",   "allocation_failures", "swapped_bytes",       "recomputed_tokens",
    "scheduler_time_per_iteration_s"};

std::string write_file(const std::string& name, const std::string& text) {
  std::string path = seer::testing::scratch_dir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

json run_bench(const std::string& args) {
  int status = 0;
  std::string out = run_command(seer::testing::seer_binary() + " bench --no-progress --json " + args + " 2>&1", &status);
  EXPECT_EQ(status, 0) << out;
  auto brace = out.find('{');
  if (brace == std::string::npos) {
    ADD_FAILURE() << out;
    return {};
  }
  return json::parse(out.substr(brace));
}

TEST(BenchE2e, TraceAgainstSeerGivesSimKeys) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model());
  ASSERT_TRUE(s.up());
  std::string trace;
  for (int i = 0; i < 12; ++i)
    trace += json{{"id", "r" + std::to_string(i)}, {"arrival_s", 0.01 * i}, {"prompt_tokens", 8 + i},
                  {"output_tokens", 6}, {"slo", {{"ttft_s", 5}}}}
                 .dump() +
             "\n";
  json j = run_bench("--url " + s.url() + " --trace " + write_file("bench.jsonl", trace) + " --rate 40 --max-concurrency 4");
  for (const auto& k : kSimKeys) EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["policy"], "seer");  // the default, read from the server's seer_info
  EXPECT_EQ(j["requests"], 12);
  EXPECT_EQ(j["failed_requests"], 0);
  EXPECT_GT(j["throughput"]["output_tokens_per_s"].get<double>(), 0);
  EXPECT_GT(j["ttft_s"]["p50"].get<double>(), 0);
  // Each token is its own chunk from seer, so every request has gaps to measure (a
  // request read in one piece adds none: tests/bench OneDeliveryAddsNoTbtSample).
  EXPECT_GT(j["tbt_s"]["max"].get<double>(), 0);
  for (const char* k : {"mean", "p50", "p90", "p99", "max"}) EXPECT_TRUE(j["e2e_s"].contains(k)) << k;
  EXPECT_GE(j["batch_size"]["mean"].get<double>(), 1);  // from the server's /metrics
  EXPECT_EQ(j["slo_attainment"], 1.0);
  // Every request generated exactly its trace length: 12 x 6 tokens (read once: the
  // count is published before the last chunk of each request is sent, e2e/wait.h).
  EXPECT_EQ(metric(s.port(), "seer_generation_tokens_total").value_or(0), 72);
}

TEST(BenchE2e, MultiTurnStatelessAndStateful) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model());
  ASSERT_TRUE(s.up());
  std::string trace;
  for (int c = 0; c < 2; ++c)
    for (int t = 0; t < 3; ++t)
      trace += json{{"id", "c" + std::to_string(c) + "t" + std::to_string(t)},
                    {"arrival_s", 0.05 * c},
                    {"prompt", "turn " + std::to_string(t) + " of a chat"},
                    {"output_tokens", 5},
                    {"conversation", "conv" + std::to_string(c)},
                    {"turn", t}}
                   .dump() +
               "\n";
  std::string path = write_file("multiturn.jsonl", trace);
  const double before = metric(s.port(), "seer_prompt_tokens_total").value_or(0);
  json stateless = run_bench("--url " + s.url() + " --trace " + path + " --multi-turn --think-time 0.02");
  EXPECT_EQ(stateless["requests"], 6);
  EXPECT_EQ(stateless["failed_requests"], 0);
  const double after_stateless = metric(s.port(), "seer_prompt_tokens_total").value_or(0);
  json stateful = run_bench("--url " + s.url() + " --trace " + path + " --multi-turn --think-time 0 --stateful");
  EXPECT_EQ(stateful["requests"], 6);
  EXPECT_EQ(stateful["failed_requests"], 0);
  // Stateless turns resend the history; stateful ones only the new message.
  const double after_stateful = metric(s.port(), "seer_prompt_tokens_total").value_or(0);
  EXPECT_GT(after_stateless - before, after_stateful - after_stateless);
}

TEST(BenchE2e, AlpacaAgainstStories260K) {
  SEER_REQUIRE_SHARED_FILE(model, "models/stories260K.gguf");
  SEER_REQUIRE_SHARED_FILE(alpaca, "alpaca/alpaca_data.json");
  ServerProcess s(model);
  ASSERT_TRUE(s.up());
  const std::string data_dir = alpaca.substr(0, alpaca.rfind("/alpaca/"));
  std::string svg = seer::testing::scratch_dir() + "/bench.svg";
  json j = run_bench("--url " + s.url() + " --dataset alpaca --data-dir " + data_dir + " --num 6 --plot " + svg);
  EXPECT_EQ(j["requests"], 6);
  std::ifstream in(svg);
  std::string head(64, '\0');
  in.read(head.data(), 64);
  EXPECT_NE(head.find("<svg"), std::string::npos);
}

TEST(BenchE2e, UnreachableServerFailsCleanly) {
  std::string trace = write_file("one.jsonl", R"({"id":"r","arrival_s":0,"prompt_tokens":4,"output_tokens":2})" "\n");
  int status = 0;
  std::string out =
      run_command(seer::testing::seer_binary() + " bench --no-progress --url http://127.0.0.1:1 --trace " + trace + " 2>&1",
                  &status);
  EXPECT_EQ(status, 1) << out;
  EXPECT_NE(out.find("127.0.0.1:1"), std::string::npos) << out;
}

}  // namespace
}  // namespace seer::e2e
