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
  // Tokens of KV reserved for r now (0: none, blocks are taken on demand). A rule
  // may stage its reservation by r's progress (ExactAllocation::Staging::AtDecode):
  // the session then tops a running request's reservation up to this when it needs
  // KV (ScheduleSession::ensure_kv).
  virtual int32_t reservation_tokens(const Request& r) const = 0;
  // Tokens of KV that must be available to admit r (at least its reservation):
  // a staged rule admits by what r will need, not by what it reserves now.
  virtual int32_t admission_tokens(const Request& r) const { return reservation_tokens(r); }
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
// Staging says when the reservation is made: AtAdmission (S3) reserves all of it
// when the request comes in; AtDecode (EcoServe's PT/GT split, used by `seer`)
// takes the prompt's blocks chunk by chunk while it prefills and reserves the
// predicted output when decoding starts; admission still requires the whole
// predicted reservation to be available (admission_tokens), so a request is only
// admitted when its output is expected to fit.
class ExactAllocation final : public AllocationRule {
 public:
  enum class Unpredicted { Max, Block };
  enum class Staging { AtAdmission, AtDecode };
  explicit ExactAllocation(double padding, Unpredicted unpredicted = Unpredicted::Max,
                           Staging staging = Staging::AtAdmission)
      : padding_(padding), unpredicted_(unpredicted), staging_(staging) {}
  std::string_view name() const override { return "exact"; }
  int32_t reservation_tokens(const Request& r) const override;
  int32_t admission_tokens(const Request& r) const override;
  Staging staging() const { return staging_; }

 private:
  double padding_;
  Unpredicted unpredicted_;
  Staging staging_;
};

// "max", "block" or "exact"; throws seer::Error otherwise.
std::unique_ptr<AllocationRule> make_allocation_rule(std::string_view name, double padding);
// "exact" (the default) without a prediction reserving nothing, with `staging`;
// other names as make_allocation_rule.
std::unique_ptr<AllocationRule> make_exact_or_block_rule(
    std::string_view name, double padding, ExactAllocation::Staging staging = ExactAllocation::Staging::AtAdmission);

}  // namespace seer
