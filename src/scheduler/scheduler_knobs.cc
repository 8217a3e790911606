#include "scheduler/scheduler_knobs.h"

#include <fmt/format.h>

#include "common/error.h"
#include "scheduler/scheduler.h"

namespace seer {
namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

// "a, b or c" (the empty choice, which means "unset", left out).
std::string choice_list(const std::vector<std::string>& choices) {
  std::vector<std::string> named;
  for (const auto& c : choices)
    if (!c.empty()) named.push_back(c);
  std::string out;
  for (size_t i = 0; i < named.size(); ++i)
    out += (i == 0 ? "" : i + 1 == named.size() ? " or " : ", ") + named[i];
  return out;
}

std::string number_problem(const Knob& knob, double v) {
  if (!knob.range || knob.range->contains(v)) return "";
  return fmt::format("{} must be {}, got {}", knob.flag, knob.range->describe(), v);
}

std::string choice_problem(const Knob& knob, const std::string& v) {
  if (knob.choices.empty()) return "";
  for (const auto& c : knob.choices)
    if (c == v) return "";
  return fmt::format("{} must be {}, got '{}'", knob.flag, choice_list(knob.choices), v);
}

}  // namespace

bool KnobRange::contains(double v) const {
  const bool above_min = min_open ? v > min : v >= min;
  const bool below_max = max_open ? v < max : v <= max;
  return above_min && below_max;  // false for NaN
}

std::string KnobRange::describe() const {
  const bool bounded_above = max != std::numeric_limits<double>::infinity();
  if (!bounded_above) return fmt::format("{} {}", min_open ? ">" : ">=", min);
  return fmt::format("in {}{}, {}{}", min_open ? "(" : "[", min, max, max_open ? ")" : "]");
}

std::string policy_help() {
  std::string out = "Scheduling policy:";
  for (const auto& p : scheduler_policies()) out += "\n  " + p.name + ": " + p.description;
  return out;
}

std::string knob_text(const Knob& knob, const StackKnobs& k) {
  return std::visit(Overloaded{
                        [&](int32_t StackKnobs::*m) { return std::to_string(k.*m); },
                        [&](double StackKnobs::*m) { return fmt::format("{}", k.*m); },
                        [&](std::optional<double> StackKnobs::*m) {
                          return k.*m ? fmt::format("{}", *(k.*m)) : std::string();
                        },
                        [&](std::string StackKnobs::*m) { return k.*m; },
                        [&](PreemptionMode StackKnobs::*m) {
                          const auto i = static_cast<size_t>(k.*m);
                          return i < knob.choices.size() ? knob.choices[i] : std::string("?");
                        },
                    },
                    knob.field);
}

std::string knob_problem(const Knob& knob, const StackKnobs& k) {
  return std::visit(Overloaded{
                        [&](int32_t StackKnobs::*m) { return number_problem(knob, k.*m); },
                        [&](double StackKnobs::*m) { return number_problem(knob, k.*m); },
                        [&](std::optional<double> StackKnobs::*m) {
                          return k.*m ? number_problem(knob, *(k.*m)) : std::string();
                        },
                        [&](std::string StackKnobs::*m) { return choice_problem(knob, k.*m); },
                        [&](PreemptionMode StackKnobs::*) { return choice_problem(knob, knob_text(knob, k)); },
                    },
                    knob.field);
}

void set_knob(const Knob& knob, StackKnobs& k, const std::string& value) {
  if (const std::string problem = choice_problem(knob, value); !problem.empty()) fail("{}", problem);
  std::visit(Overloaded{
                 [&](std::string StackKnobs::*m) { k.*m = value; },
                 [&](PreemptionMode StackKnobs::*m) {
                   for (size_t i = 0; i < knob.choices.size(); ++i)
                     if (knob.choices[i] == value) k.*m = static_cast<PreemptionMode>(i);
                 },
                 [&](auto) { fail("{} is a number, not a name", knob.flag); },
             },
             knob.field);
}

void check_stack_knobs(const StackKnobs& k) {
  for (const Knob& knob : stack_knobs())
    if (std::string problem = knob_problem(knob, k); !problem.empty()) fail("{}", problem);
}

void check_scheduler_knobs(const SchedulerKnobs& k) {
  StackKnobs all;  // the stack's own knobs at their (valid) defaults
  static_cast<SchedulerKnobs&>(all) = k;
  check_stack_knobs(all);
}

}  // namespace seer
