#include <gtest/gtest.h>

#include "common/error.h"
#include "scheduler/scheduler.h"

namespace seer {
namespace {

TEST(SchedulerRegistry, ListsAndBuildsEveryPreset) {
  std::vector<std::string> names;
  for (const auto& p : scheduler_policies()) {
    names.push_back(p.name);
    EXPECT_FALSE(p.description.empty());
    SchedulerConfig c;
    c.policy = p.name;
    auto s = make_scheduler(c);
    EXPECT_EQ(s->name(), p.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"static", "orca", "vllm", "sarathi", "s3", "ecoserve-d", "ecoserve-sd",
                                             "ecoserve-sdo", "ecoserve", "pensieve", "pensieve-gpu", "seer"}));
}

TEST(SchedulerRegistry, SaysWhichPresetsUseATokenBudget) {
  EXPECT_TRUE(policy_uses_token_budget("sarathi"));
  EXPECT_FALSE(policy_uses_token_budget("vllm"));
  EXPECT_FALSE(policy_uses_token_budget("orca"));
  EXPECT_TRUE(policy_uses_token_budget("ecoserve"));
  EXPECT_FALSE(policy_uses_token_budget("no-such-policy"));
  EXPECT_TRUE(policy_uses_token_budget("pensieve"));
}

TEST(SchedulerRegistry, PensieveDefaultsToItsOwnTokenBudget) {
  // What start-up lines print (resolve_token_budget) is what the policy runs with.
  SchedulerConfig c;
  c.policy = "pensieve";
  EXPECT_EQ(resolve_token_budget(c), 2048);
  c.policy = "pensieve-gpu";
  EXPECT_EQ(resolve_token_budget(c), 2048);
  c.policy = "sarathi";
  EXPECT_EQ(resolve_token_budget(c), c.default_token_budget);
  c.policy = "pensieve";
  c.token_budget = 300;
  EXPECT_EQ(resolve_token_budget(c), 300);
}

TEST(SchedulerRegistry, RejectsUnknownNamesAndBadSettings) {
  SchedulerConfig c;
  c.policy = "fifo";
  try {
    make_scheduler(c);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown scheduler policy 'fifo'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("sarathi"), std::string::npos);
  }
  c.policy = "vllm";
  c.max_batch_size = 0;
  EXPECT_THROW(make_scheduler(c), Error);
  c.max_batch_size = 4;
  c.allocation = "greedy";
  EXPECT_THROW(make_scheduler(c), Error);
  c.allocation = "exact";
  EXPECT_NO_THROW(make_scheduler(c));
  c.watermark = 1.5;
  EXPECT_THROW(make_scheduler(c), Error);
}

}  // namespace
}  // namespace seer
