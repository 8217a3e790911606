#pragma once
// How much KV a request reserves when it is admitted (docs/architecture.md §1.2). All rules share
// the same paged pool; only the reservation differs.
#include <cstdint>
#include <memory>
#include <string_view>

#include "scheduler/request.h"

namespace seer {

class AllocationRule {
 public:
  virtual ~AllocationRule() = default;
  virtual std::string_view name() const = 0;
  // Tokens of KV reserved at admission (0: none, blocks are taken on demand).
  virtual int32_t reservation_tokens(const Request& r) const = 0;
};

// max-allocation [Orca, FasterTransformer]: prompt + max_tokens.
class MaxAllocation final : public AllocationRule {
 public:
  std::string_view name() const override { return "max"; }
  int32_t reservation_tokens(const Request& r) const override;
};

// block-allocation [vLLM]: nothing reserved; blocks on demand.
class BlockAllocation final : public AllocationRule {
 public:
  std::string_view name() const override { return "block"; }
  int32_t reservation_tokens(const Request&) const override { return 0; }
};

// exact-allocation [S3, EcoServe]: prompt + predicted output * (1 + padding), at
// least the tokens the request already has plus one and at most prompt +
// max_tokens. Without a prediction it falls back to max-allocation, or with
// Unpredicted::Block to block-allocation (nothing reserved, blocks on demand): a
// policy that also runs without a predictor (`seer`) then plans like vLLM/Sarathi.
class ExactAllocation final : public AllocationRule {
 public:
  enum class Unpredicted { Max, Block };
  explicit ExactAllocation(double padding, Unpredicted unpredicted = Unpredicted::Max)
      : padding_(padding), unpredicted_(unpredicted) {}
  std::string_view name() const override { return "exact"; }
  int32_t reservation_tokens(const Request& r) const override;

 private:
  double padding_;
  Unpredicted unpredicted_;
};

// "max", "block" or "exact"; throws seer::Error otherwise.
std::unique_ptr<AllocationRule> make_allocation_rule(std::string_view name, double padding);
// "exact" (the default) without a prediction reserving nothing; other names as
// make_allocation_rule.
std::unique_ptr<AllocationRule> make_exact_or_block_rule(std::string_view name, double padding);

}  // namespace seer
