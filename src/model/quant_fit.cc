#include "model/quant_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "model/quant_blocks.h"

namespace seer::quant_fit {
namespace {

// Candidate inverse scales put the group's extreme value at target * (1 + kStep * k)
// for k in [-kSteps, kSteps]; each is then refitted by least squares.
constexpr int kSteps = 10;
constexpr float kStep = 0.02f;
constexpr int kRefits = 3;

float max_abs_signed(const float* x, int n) {
  float amax = 0, v = 0;
  for (int i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      v = x[i];
    }
  }
  return v;
}

// Least-squares (scale, offset) for fixed levels; false when the levels are all equal.
bool refit_affine(const float* x, int n, const uint8_t* L, bool offset_le_zero, Affine& a) {
  double sl = 0, sll = 0, sx = 0, sxl = 0;
  for (int i = 0; i < n; ++i) {
    sl += L[i];
    sll += double(L[i]) * L[i];
    sx += x[i];
    sxl += double(x[i]) * L[i];
  }
  const double det = n * sll - sl * sl;
  if (det <= 0) return false;
  double s = (n * sxl - sl * sx) / det, o = (sx - s * sl) / n;
  if (offset_le_zero && o > 0) {
    o = 0;
    s = sxl / sll;
  }
  if (!(s > 0)) return false;
  a = {static_cast<float>(s), static_cast<float>(o)};
  return true;
}

float affine_sq_error(const float* x, int n, const uint8_t* L, const Affine& a) {
  float err = 0;
  for (int i = 0; i < n; ++i) {
    const float d = x[i] - (a.scale * L[i] + a.offset);
    err += d * d;
  }
  return err;
}

}  // namespace

int nearest_clamped(float v, int lo, int hi) {
  const float r = std::round(v);
  if (!(r > lo)) return lo;  // also NaN
  if (r > hi) return hi;
  return static_cast<int>(r);
}

Affine fit_affine(const float* x, int n, int nmax, bool offset_le_zero, uint8_t* L) {
  float lo = *std::min_element(x, x + n), hi = *std::max_element(x, x + n);
  if (offset_le_zero) lo = std::min(lo, 0.0f);
  Affine best{0, lo};
  std::fill(L, L + n, 0);
  if (!(hi > lo)) return best;
  float best_err = std::numeric_limits<float>::infinity();
  uint8_t cand[kQK_K];
  for (int k = -kSteps; k <= kSteps; ++k) {
    const float iscale = nmax * (1 + kStep * k) / (hi - lo);
    for (int i = 0; i < n; ++i) cand[i] = static_cast<uint8_t>(nearest_clamped(iscale * (x[i] - lo), 0, nmax));
    Affine a;
    if (!refit_affine(x, n, cand, offset_le_zero, a)) continue;
    const float err = affine_sq_error(x, n, cand, a);
    if (err < best_err) {
      best_err = err;
      best = a;
      std::copy(cand, cand + n, L);
    }
  }
  // Alternate: levels nearest the fitted line, then the line fitted to those levels.
  for (int it = 0; it < kRefits; ++it) {
    for (int i = 0; i < n; ++i)
      cand[i] = static_cast<uint8_t>(nearest_clamped((x[i] - best.offset) / best.scale, 0, nmax));
    Affine a;
    if (!refit_affine(x, n, cand, offset_le_zero, a)) break;
    const float err = affine_sq_error(x, n, cand, a);
    if (!(err < best_err)) break;
    best_err = err;
    best = a;
    std::copy(cand, cand + n, L);
  }
  return best;
}

float fit_symmetric(const float* x, int n, int lo, int hi, int8_t* L) {
  std::fill(L, L + n, 0);
  const float vmax = max_abs_signed(x, n);
  if (vmax == 0) return 0;
  float best_scale = 0, best_err = std::numeric_limits<float>::infinity();
  int8_t cand[kQK_K];
  auto try_levels = [&]() {
    double sxl = 0, sll = 0;
    for (int i = 0; i < n; ++i) {
      sxl += double(x[i]) * cand[i];
      sll += double(cand[i]) * cand[i];
    }
    if (sll == 0) return;
    const float s = static_cast<float>(sxl / sll);
    float err = 0;
    for (int i = 0; i < n; ++i) {
      const float d = x[i] - s * cand[i];
      err += d * d;
    }
    if (err < best_err) {
      best_err = err;
      best_scale = s;
      std::copy(cand, cand + n, L);
    }
  };
  for (int target : {lo, hi}) {
    for (int k = -kSteps; k <= kSteps; ++k) {
      const float iscale = target * (1 + kStep * k) / vmax;
      for (int i = 0; i < n; ++i) cand[i] = static_cast<int8_t>(nearest_clamped(iscale * x[i], lo, hi));
      try_levels();
    }
  }
  for (int it = 0; it < kRefits && best_scale != 0; ++it) {
    const float before = best_err;
    for (int i = 0; i < n; ++i) cand[i] = static_cast<int8_t>(nearest_clamped(x[i] / best_scale, lo, hi));
    try_levels();
    if (!(best_err < before)) break;
  }
  return best_scale;
}

int nearest_nl_index(float v) {
  const int8_t* t = kIQ4NLValues;
  if (!(v > t[0])) return 0;  // also NaN
  if (v >= t[15]) return 15;
  int i = static_cast<int>(std::upper_bound(t, t + 16, v, [](float a, int8_t b) { return a < b; }) - t);
  return (v - t[i - 1] <= t[i] - v) ? i - 1 : i;
}

float fit_nonlinear(const float* x, int n, uint8_t* L) {
  std::fill(L, L + n, 8);
  const float vmax = max_abs_signed(x, n);
  if (vmax == 0) return 0;
  float best_scale = 0, best_err = std::numeric_limits<float>::infinity();
  uint8_t cand[kQK_K];
  auto try_levels = [&]() {
    double sxl = 0, sll = 0;
    for (int i = 0; i < n; ++i) {
      sxl += double(x[i]) * kIQ4NLValues[cand[i]];
      sll += double(kIQ4NLValues[cand[i]]) * kIQ4NLValues[cand[i]];
    }
    const float s = static_cast<float>(sxl / sll);
    float err = 0;
    for (int i = 0; i < n; ++i) {
      const float d = x[i] - s * kIQ4NLValues[cand[i]];
      err += d * d;
    }
    if (err < best_err) {
      best_err = err;
      best_scale = s;
      std::copy(cand, cand + n, L);
    }
  };
  for (int target : {int{kIQ4NLValues[0]}, int{kIQ4NLValues[15]}}) {
    for (int k = -kSteps; k <= kSteps; ++k) {
      const float iscale = target * (1 + kStep * k) / vmax;
      for (int i = 0; i < n; ++i) cand[i] = static_cast<uint8_t>(nearest_nl_index(iscale * x[i]));
      try_levels();
    }
  }
  for (int it = 0; it < kRefits && best_scale != 0; ++it) {
    const float before = best_err;
    for (int i = 0; i < n; ++i) cand[i] = static_cast<uint8_t>(nearest_nl_index(x[i] / best_scale));
    try_levels();
    if (!(best_err < before)) break;
  }
  return best_scale;
}

float affine_error(const float* x, int n, int nmax, float scale, float minimum, uint8_t* L) {
  float err = 0;
  for (int i = 0; i < n; ++i) {
    L[i] = scale > 0 ? static_cast<uint8_t>(nearest_clamped((x[i] + minimum) / scale, 0, nmax)) : 0;
    const float d = x[i] - (scale * L[i] - minimum);
    err += d * d;
  }
  return err;
}

float symmetric_error(const float* x, int n, int lo, int hi, float scale, int8_t* L) {
  float err = 0;
  for (int i = 0; i < n; ++i) {
    L[i] = scale != 0 ? static_cast<int8_t>(nearest_clamped(x[i] / scale, lo, hi)) : 0;
    const float d = x[i] - scale * L[i];
    err += d * d;
  }
  return err;
}

float nonlinear_error(const float* x, int n, float scale, uint8_t* L) {
  float err = 0;
  for (int i = 0; i < n; ++i) {
    L[i] = scale != 0 ? static_cast<uint8_t>(nearest_nl_index(x[i] / scale)) : 8;
    const float d = x[i] - scale * kIQ4NLValues[L[i]];
    err += d * d;
  }
  return err;
}

}  // namespace seer::quant_fit
