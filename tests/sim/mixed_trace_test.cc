// The mixed workload (`seer trace --lengths mixed`): three classes with their own
// SLOs, arriving over the same span, reproducible with a seed.
#include "sim/mixed_trace.h"

#include <map>
#include <set>

#include <gtest/gtest.h>

#include "common/error.h"
#include "support/test_paths.h"

namespace seer {
namespace {

std::string shared_data_dir() {
  std::string f = testing::shared_data_file("README.md");
  return f.empty() ? "" : f.substr(0, f.size() - std::string("/README.md").size());
}

TraceGeneratorOptions mixed_options(uint64_t seed) {
  TraceGeneratorOptions o;
  o.lengths = "mixed";
  o.num = 200;
  o.arrivals.rate = 4;
  o.seed = seed;
  o.data_dir = shared_data_dir();
  return o;
}

TEST(MixedTrace, ClassesCarryTheirSharesAndSlos) {
  SEER_REQUIRE_SHARED_FILE(sharegpt, "sharegpt/sharegpt_sample_1000_plain.json");
  SEER_REQUIRE_SHARED_FILE(alpaca, "alpaca/alpaca_data.json");
  auto t = generate_trace(mixed_options(3));
  ASSERT_EQ(t.size(), 200u);
  std::map<std::string, int> count;
  std::map<std::string, double> last_arrival;
  std::set<std::string> ids;
  for (const auto& e : t) {
    ++count[e.workload_class];
    last_arrival[e.workload_class] = std::max(last_arrival[e.workload_class], e.arrival_s);
    EXPECT_TRUE(ids.insert(e.id).second) << e.id;
    bool found = false;
    for (const auto& c : mixed_workload_classes()) {
      if (c.name != e.workload_class) continue;
      found = true;
      EXPECT_EQ(e.slo.ttft_s, c.slo.ttft_s);
      EXPECT_EQ(e.slo.tbt_s, c.slo.tbt_s);
    }
    EXPECT_TRUE(found) << e.workload_class;
    EXPECT_EQ(!e.conversation.empty(), e.workload_class == "chat") << e.id;
  }
  EXPECT_EQ(count["chat"], 80);
  EXPECT_EQ(count["qa"], 80);
  EXPECT_EQ(count["long"], 40);
  for (size_t i = 1; i < t.size(); ++i) EXPECT_LE(t[i - 1].arrival_s, t[i].arrival_s);
  // Every class keeps arriving until near the end of the span (200 / 4 = 50 s).
  for (const auto& [name, last] : last_arrival) EXPECT_GT(last, 25.0) << name;
}

TEST(MixedTrace, SameSeedSameTraceAndTheSloFlagsOverrideEveryClass) {
  SEER_REQUIRE_SHARED_FILE(alpaca, "alpaca/alpaca_data.json");
  auto a = generate_trace(mixed_options(5)), b = generate_trace(mixed_options(5)), c = generate_trace(mixed_options(6));
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(trace_line(a[i]), trace_line(b[i]));
  bool differs = false;
  for (size_t i = 0; i < a.size(); ++i) differs |= trace_line(a[i]) != trace_line(c[i]);
  EXPECT_TRUE(differs);
  auto o = mixed_options(5);
  o.slo.tbt_s = 0.05;
  for (const auto& e : generate_trace(o)) EXPECT_EQ(e.slo.tbt_s, 0.05);
}

TEST(MixedTrace, ClassSurvivesTheJsonlRoundTrip) {
  TraceEntry e;
  e.id = "r0";
  e.prompt_tokens = 5;
  e.output_tokens = 3;
  e.workload_class = "long";
  EXPECT_EQ(parse_trace_line(trace_line(e), "t", 1).workload_class, "long");
  EXPECT_THROW(parse_trace_line(R"({"arrival_s":0,"prompt_tokens":1,"output_tokens":1,"class":3})", "t", 1), Error);
}

TEST(MixedTrace, TooFewRequestsNameTheFlag) {
  auto o = mixed_options(1);
  o.num = 2;
  try {
    generate_trace(o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--num"), std::string::npos);
  }
}

}  // namespace
}  // namespace seer
