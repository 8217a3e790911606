#pragma once
// Fits a GPU's block factors (efficiency.memory, .compute, .elementwise and
// kernel_latency_s) to measured per-block profiles (profile_validation.h), the fit
// behind data/catalog/hardware.json's A100/H100/A40 entries (docs/simulator.md).
//
// The search: coordinate descent with multiplicative steps. From the start point,
// each factor in turn is multiplied and divided by `step`, a move kept when it lowers
// the loss; rounds repeat until none does, then the step shrinks to its square root,
// from 2 down to below 1.0005. Efficiencies stay in [1e-3, 1], the kernel floor in
// [1e-7, 1e-3] s. The loss is the mean relative error of the per-block non-attention
// time over all points of the given profiles (each token count of each model x TP
// combination one point), the figure `validate` reports. Deterministic: no random
// starts, a fixed order (memory, compute, elementwise, kernel floor).
#include <vector>

#include "sim/catalog.h"
#include "sim/profile_validation.h"

namespace seer {

// The cost model's per-block time against every point of `profiles` (pooled), with
// `hw`'s factors in place of the catalog's for each profile's hardware.
ErrorStats block_time_error(const HardwareSpec& hw, const std::vector<const BlockProfile*>& profiles);

// `hw` with the neutral start the fit uses (memory 1, compute 0.5, elementwise 0.5,
// kernel floor 5 us), so a fit owes nothing to the catalog's fitted values.
HardwareSpec with_start_factors(HardwareSpec hw);

// `start` with its four block factors fitted to `profiles` (all of one hardware);
// every other field kept. Throws seer::Error without points or when `start` has
// linear_regimes (the CPU's; the GPU profiles use one regime).
HardwareSpec fit_block_factors(const HardwareSpec& start, const std::vector<const BlockProfile*>& profiles);

}  // namespace seer
