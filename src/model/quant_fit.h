#pragma once
// The searches seer's quantizers share: the scale (and offset) that minimize the
// squared error of a group of values against a grid of integer levels or the
// IQ4_NL table. Plain squared error, no importance weights: the quantizers are
// judged by their RMSE against the f32 weights (tests/model/quant_ref_test.cc).
#include <cstdint>

namespace seer::quant_fit {

// Round half away from zero, clamped to [lo, hi].
int nearest_clamped(float v, int lo, int hi);

// x[i] ~ scale * L[i] + offset, L in [0, nmax]. With offset_le_zero the offset is
// kept <= 0 (the K-quants store it as a non-negative minimum subtracted).
struct Affine {
  float scale = 0, offset = 0;
};
Affine fit_affine(const float* x, int n, int nmax, bool offset_le_zero, uint8_t* L);

// x[i] ~ scale * L[i], L in [lo, hi] (lo < 0 < hi), scale of either sign.
float fit_symmetric(const float* x, int n, int lo, int hi, int8_t* L);

// x[i] ~ scale * kIQ4NLValues[L[i]], scale of either sign.
float fit_nonlinear(const float* x, int n, uint8_t* L);
// The index of the table value nearest v.
int nearest_nl_index(float v);

// Squared errors of a group reconstructed from given (already rounded) parameters,
// with the levels chosen nearest; L receives them.
float affine_error(const float* x, int n, int nmax, float scale, float minimum, uint8_t* L);  // scale*L - minimum
float symmetric_error(const float* x, int n, int lo, int hi, float scale, int8_t* L);
float nonlinear_error(const float* x, int n, float scale, uint8_t* L);

}  // namespace seer::quant_fit
