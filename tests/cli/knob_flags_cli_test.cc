// `seer serve` and `seer sim` take the shared knobs from one table
// (scheduler/scheduler_knobs.h): each listed once in both helps with the same
// default, and an out-of-range value refused by both with the same words.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <tuple>

#include "cli/run_seer.h"
#include "scheduler/scheduler_knobs.h"

namespace seer::testing {
namespace {

// The help lines that list `flag` as an option name ("  --flag[,--alias] TYPE=default ...").
std::vector<std::string> option_lines(const std::string& help, const std::string& flag) {
  std::vector<std::string> out;
  std::istringstream in(help);
  for (std::string line; std::getline(in, line);) {
    const size_t at = line.find_first_not_of(' ');
    if (at == std::string::npos || line.compare(at, flag.size(), flag) != 0) continue;
    const char after = line.size() > at + flag.size() ? line[at + flag.size()] : ' ';
    if (after == ' ' || after == ',') out.push_back(line);
  }
  return out;
}

// The default a help line shows ("  --flag TYPE=default  help"), "" when none.
std::string shown_default(const std::string& line) {
  std::istringstream in(line);
  std::string names, type;
  in >> names >> type;
  const size_t eq = type.find('=');
  return eq == std::string::npos ? "" : type.substr(eq + 1);
}

TEST(KnobFlagsCli, ServeAndSimListEachSharedKnobOnceWithTheSameDefault) {
  const auto serve = run_seer({"serve", "--help"});
  const auto sim = run_seer({"sim", "--help"});
  ASSERT_EQ(serve.exit_code, 0) << serve.err;
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const StackKnobs defaults;
  for (const Knob& knob : stack_knobs()) {
    const auto in_serve = option_lines(serve.out, knob.flag);
    const auto in_sim = option_lines(sim.out, knob.flag);
    ASSERT_EQ(in_serve.size(), 1u) << knob.flag << " in serve --help:\n" << serve.out;
    ASSERT_EQ(in_sim.size(), 1u) << knob.flag << " in sim --help:\n" << sim.out;
    if (knob.flag == "--policy") {  // serve's own default, the combined policy
      EXPECT_EQ(shown_default(in_serve[0]), "seer") << in_serve[0];
      EXPECT_EQ(shown_default(in_sim[0]), defaults.policy) << in_sim[0];
      continue;
    }
    EXPECT_EQ(shown_default(in_serve[0]), shown_default(in_sim[0])) << in_serve[0] << "\n" << in_sim[0];
    EXPECT_EQ(shown_default(in_serve[0]), knob_text(knob, defaults)) << in_serve[0];
    if (!knob.alias.empty()) {
      EXPECT_NE(in_serve[0].find(knob.alias), std::string::npos) << in_serve[0];
      EXPECT_NE(in_sim[0].find(knob.alias), std::string::npos) << in_sim[0];
    }
  }
}

TEST(KnobFlagsCli, ServeAndSimRefuseAnOutOfRangeKnobAlike) {
  const std::string trace = scratch_dir() + "/knob_trace.jsonl";
  {
    std::ofstream t(trace);
    t << R"({"id": "a", "arrival_s": 0, "prompt_tokens": 8, "output_tokens": 4})" << "\n";
  }
  for (const auto& [flag, value, says] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"--pt-reserve", "1.5", "--pt-reserve must be in [0, 1), got 1.5"},
           {"--chunk-tokens", "0", "--chunk-tokens must be > 0, got 0"},
           {"--preemption", "drop", "--preemption must be recompute or swap, got 'drop'"},
           {"--max-batch", "0", "--max-batch-size must be >= 1, got 0"}}) {
    const auto serve = run_seer({"serve", "--port", "0", flag, value});
    EXPECT_EQ(serve.exit_code, 1) << flag;
    EXPECT_NE(serve.err.find(says), std::string::npos) << serve.err;
    EXPECT_EQ(serve.out.find("listening"), std::string::npos) << serve.out;
    const auto sim = run_seer({"sim", "--trace", trace, "--model", "Llama-2-7B", "--quiet", flag, value});
    EXPECT_EQ(sim.exit_code, 1) << flag;
    EXPECT_NE(sim.err.find(says), std::string::npos) << sim.err;
  }
}

}  // namespace
}  // namespace seer::testing
