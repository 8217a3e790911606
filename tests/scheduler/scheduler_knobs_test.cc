// The shared knob table (scheduler/scheduler_knobs.h): every knob is documented,
// its default is valid by its own rule, and a value outside it is refused with a
// message naming the flag, by check_stack_knobs and by make_scheduler alike.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "common/error.h"
#include "scheduler/scheduler.h"
#include "scheduler/scheduler_knobs.h"

namespace seer {
namespace {

std::string problem_of(const StackKnobs& k) {
  try {
    check_stack_knobs(k);
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

// Writes `v` into a numeric knob (int knobs truncate, which the values below avoid).
void set_number(const Knob& knob, StackKnobs& k, double v) {
  std::visit([&](auto m) {
    using Value = std::remove_reference_t<decltype(k.*m)>;
    if constexpr (std::is_same_v<Value, int32_t>) k.*m = static_cast<int32_t>(v);
    else if constexpr (std::is_same_v<Value, double> || std::is_same_v<Value, std::optional<double>>) k.*m = v;
    else FAIL() << knob.flag << " is not a number";
  }, knob.field);
}

TEST(SchedulerKnobs, EveryKnobHasOneFlagAndAHelpText) {
  std::set<std::string> names;
  for (const Knob& knob : stack_knobs()) {
    EXPECT_EQ(knob.flag.rfind("--", 0), 0u) << knob.flag;
    EXPECT_GE(knob.help.size(), 10u) << knob.flag << " has no help text";
    EXPECT_TRUE(names.insert(knob.flag).second) << knob.flag << " declared twice";
    if (!knob.alias.empty()) {
      EXPECT_TRUE(names.insert(knob.alias).second) << knob.alias << " declared twice";
    }
    EXPECT_TRUE(knob.range || !knob.choices.empty() || knob.flag == "--policy")
        << knob.flag << " has no valid range or choices (the registry checks policies)";
  }
  EXPECT_GE(stack_knobs().size(), 14u);
}

TEST(SchedulerKnobs, EveryDefaultPassesItsOwnValidation) {
  const StackKnobs defaults;
  for (const Knob& knob : stack_knobs()) EXPECT_EQ(knob_problem(knob, defaults), "") << knob.flag;
  EXPECT_EQ(problem_of(defaults), "");
  EXPECT_NO_THROW(check_scheduler_knobs(SchedulerConfig{}));
}

// Just outside each end of every range: refused, naming the flag and the range.
TEST(SchedulerKnobs, OutOfRangeValuesNameTheFlag) {
  int checked = 0;
  for (const Knob& knob : stack_knobs()) {
    if (!knob.range) continue;
    const KnobRange& r = *knob.range;
    std::vector<double> outside = {r.min_open ? r.min : r.min - 1};
    if (std::isfinite(r.max)) outside.push_back(r.max_open ? r.max : r.max + 1);
    for (double v : outside) {
      StackKnobs k;
      set_number(knob, k, v);
      const std::string what = problem_of(k);
      EXPECT_EQ(what.rfind(knob.flag + " must be " + r.describe() + ", got ", 0), 0u) << knob.flag << ": " << what;
      ++checked;
    }
  }
  EXPECT_GE(checked, 12);
  StackKnobs k;
  k.pt_reserve = 1.5;
  EXPECT_EQ(problem_of(k), "--pt-reserve must be in [0, 1), got 1.5");
  k = StackKnobs{};
  k.tbt_slo_s = -1;
  EXPECT_EQ(problem_of(k), "--tbt-slo must be >= 0, got -1");
  k = StackKnobs{};
  k.chunk_tokens = 0;
  EXPECT_EQ(problem_of(k), "--chunk-tokens must be > 0, got 0");
  k = StackKnobs{};
  k.block_size = 2048;
  EXPECT_EQ(problem_of(k), "--block-size must be in [1, 1024], got 2048");
}

TEST(SchedulerKnobs, NamesOutsideTheChoicesNameTheFlag) {
  const auto knob = [](const std::string& flag) {
    for (const Knob& k : stack_knobs())
      if (k.flag == flag) return k;
    throw std::logic_error(flag);
  };
  StackKnobs k;
  try {
    set_knob(knob("--preemption"), k, "drop");
    FAIL() << "--preemption drop accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--preemption must be recompute or swap, got 'drop'");
  }
  set_knob(knob("--preemption"), k, "swap");
  EXPECT_EQ(k.preemption, PreemptionMode::Swap);
  EXPECT_EQ(knob_text(knob("--preemption"), k), "swap");
  k.ordering = "sjf";
  EXPECT_EQ(problem_of(k), "--ordering must be fcfs, priority, deadline or deadline-spf, got 'sjf'");
  k.ordering = "";  // the policy's own
  EXPECT_EQ(problem_of(k), "");
  k.eviction = "fifo";
  EXPECT_EQ(problem_of(k), "--eviction must be pensieve or lru, got 'fifo'");
}

// make_scheduler applies the same table, so a config built in code gets the flag's words.
TEST(SchedulerKnobs, MakeSchedulerRefusesABadKnobByItsFlag) {
  SchedulerConfig c;
  c.policy = "ecoserve";
  c.pt_reserve = 1;
  try {
    (void)make_scheduler(c);
    FAIL() << "pt_reserve 1 accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--pt-reserve must be in [0, 1), got 1");
  }
  c = SchedulerConfig{};
  c.max_batch_size = 0;
  EXPECT_THROW((void)make_scheduler(c), Error);
}

}  // namespace
}  // namespace seer
