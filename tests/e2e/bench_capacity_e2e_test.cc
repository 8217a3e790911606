// `seer bench capacity` against a running `seer serve` on the tiny random model: a
// short trace, a bounded number of bisection steps, the JSON schema, and the two
// ends (an SLO every rate meets, one no rate can meet: a TTFT bound of 1 ns, since
// the tiny model may stream several tokens per chunk and leave no TBT samples).
#include <fstream>

#include <gtest/gtest.h>

#include "e2e/server_process.h"
#include "support/test_paths.h"

namespace seer::e2e {
namespace {

using nlohmann::json;

std::string short_trace() {
  std::string path = seer::testing::scratch_dir() + "/capacity.jsonl";
  std::ofstream out(path);
  for (int i = 0; i < 6; ++i)
    out << json{{"id", "r" + std::to_string(i)}, {"arrival_s", 0.1 * i}, {"prompt_tokens", 8 + i}, {"output_tokens", 4}}
               .dump()
        << "\n";
  return path;
}

json run_capacity(const std::string& args, int* status) {
  std::string out = run_command(seer::testing::seer_binary() + " bench capacity --no-progress --json " + args + " 2>&1",
                                status);
  auto brace = out.find('{');
  if (brace == std::string::npos) {
    ADD_FAILURE() << out;
    return {};
  }
  return json::parse(out.substr(brace));
}

void expect_step_keys(const json& j) {
  ASSERT_TRUE(j.contains("capacity_rps"));
  ASSERT_TRUE(j["steps"].is_array());
  for (const auto& s : j["steps"])
    for (const char* k : {"rate", "tbt_p99_s", "ttft_p50_s", "passed"}) EXPECT_TRUE(s.contains(k)) << k << " in " << s;
}

TEST(BenchCapacityE2e, GenerousSloDoublesTheRateUntilTheStepLimit) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model());
  ASSERT_TRUE(s.up());
  int status = -1;
  json j = run_capacity("--url " + s.url() + " --trace " + short_trace() +
                            " --slo-tbt-p99 30 --max-sched-delay 30 --start-rate 2 --max-steps 3",
                        &status);
  EXPECT_EQ(status, 0);
  expect_step_keys(j);
  ASSERT_EQ(j["steps"].size(), 3u);
  EXPECT_DOUBLE_EQ(j["steps"][0]["rate"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j["steps"][1]["rate"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(j["steps"][2]["rate"].get<double>(), 8.0);
  for (const auto& st : j["steps"]) EXPECT_TRUE(st["passed"].get<bool>()) << st;
  EXPECT_DOUBLE_EQ(j["capacity_rps"].get<double>(), 8.0);
  EXPECT_EQ(metric(s.port(), "seer_kv_blocks_used").value_or(-1), 0);
}

TEST(BenchCapacityE2e, ImpossibleSloGivesZeroCapacity) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model());
  ASSERT_TRUE(s.up());
  int status = -1;
  json j = run_capacity("--url " + s.url() + " --trace " + short_trace() +
                            " --slo-tbt-p99 1e-9 --max-sched-delay 1e-9 --start-rate 4 --max-steps 2",
                        &status);
  EXPECT_EQ(status, 0);
  expect_step_keys(j);
  ASSERT_EQ(j["steps"].size(), 2u);
  EXPECT_DOUBLE_EQ(j["steps"][1]["rate"].get<double>(), 2.0);  // halving after a miss
  for (const auto& st : j["steps"]) EXPECT_FALSE(st["passed"].get<bool>()) << st;
  EXPECT_EQ(j["capacity_rps"].get<double>(), 0.0);
}

TEST(BenchCapacityE2e, MissingSloIsAClearError) {
  int status = 0;
  std::string out = run_command(seer::testing::seer_binary() + " bench capacity --trace " + short_trace() + " 2>&1",
                                &status);
  EXPECT_NE(status, 0);
  EXPECT_NE(out.find("--slo-tbt-p99"), std::string::npos) << out;
}

}  // namespace
}  // namespace seer::e2e
