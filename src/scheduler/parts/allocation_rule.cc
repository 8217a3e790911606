#include "scheduler/parts/allocation_rule.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace seer {

namespace {
void check_padding(double padding) {
  if (!(padding >= 0) || padding > 10) fail("scheduler: padding must be in [0, 10] (got {})", padding);
}
}  // namespace

int32_t MaxAllocation::reservation_tokens(const Request& r) const { return r.prompt_len() + r.sampling.max_tokens; }

int32_t ExactAllocation::reservation_tokens(const Request& r) const {
  const bool prefilling = r.num_computed_tokens + 1 < r.num_tokens();
  if (staging_ == Staging::AtDecode && prefilling) return 0;  // the prompt's blocks on demand
  return admission_tokens(r);
}

int32_t ExactAllocation::admission_tokens(const Request& r) const {
  int32_t cap = r.prompt_len() + r.sampling.max_tokens;
  if (!r.predicted_output_len) return unpredicted_ == Unpredicted::Block ? 0 : cap;
  auto padded = static_cast<int32_t>(std::ceil(*r.predicted_output_len * (1.0 + padding_)));
  return std::min(cap, std::max(r.prompt_len() + padded, r.num_tokens() + 1));
}

std::unique_ptr<AllocationRule> make_allocation_rule(std::string_view name, double padding) {
  if (name == "max") return std::make_unique<MaxAllocation>();
  if (name == "block") return std::make_unique<BlockAllocation>();
  if (name == "exact") {
    check_padding(padding);
    return std::make_unique<ExactAllocation>(padding);
  }
  fail("scheduler: unknown allocation rule '{}' (expected max, block or exact)", name);
}

std::unique_ptr<AllocationRule> make_exact_or_block_rule(std::string_view name, double padding,
                                                        ExactAllocation::Staging staging) {
  if (!name.empty() && name != "exact") return make_allocation_rule(name, padding);
  check_padding(padding);
  return std::make_unique<ExactAllocation>(padding, ExactAllocation::Unpredicted::Block, staging);
}

}  // namespace seer
