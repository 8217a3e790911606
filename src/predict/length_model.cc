#include "predict/length_model.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace seer {

std::string model_kind_name(ModelKind k) {
  switch (k) {
    case ModelKind::BucketLr: return "bucket-lr";
    case ModelKind::FineLr: return "fine-lr";
    case ModelKind::LogReg: return "log-reg";
  }
  return "?";
}

ModelKind parse_model_kind(const std::string& name, const std::string& what) {
  if (name == "bucket-lr") return ModelKind::BucketLr;
  if (name == "fine-lr") return ModelKind::FineLr;
  if (name == "log-reg") return ModelKind::LogReg;
  fail("{} '{}': expected bucket-lr, fine-lr or log-reg", what, name);
}

int32_t LengthModel::class_of(int32_t length) const {
  auto it = std::upper_bound(class_edges.begin(), class_edges.end(), length);
  return std::max(0, static_cast<int32_t>(it - class_edges.begin()) - 1);
}

void LengthModel::check(const std::string& where) const {
  int32_t dimension = 0;
  try {
    dimension = TextFeaturizer(features).dimension();
  } catch (const Error& e) {
    fail("{}: {}", where, e.what());
  }
  if (buckets.count < 1 || buckets.width < 1) fail("{}: bad buckets ({} x {})", where, buckets.count, buckets.width);
  if (max_len < 1) fail("{}: bad max_len {}", where, max_len);
  if (kind != ModelKind::LogReg) {
    if (class_edges.size() < 2 || class_edges.front() != 0 || !std::is_sorted(class_edges.begin(), class_edges.end()) ||
        std::adjacent_find(class_edges.begin(), class_edges.end()) != class_edges.end())
      fail("{}: class edges must start at 0 and increase", where);
  }
  if (!class_bucket.empty() && class_bucket.size() != static_cast<size_t>(outputs()) * buckets.count)
    fail("{}: expected {} class-to-bucket shares, found {}", where, outputs() * buckets.count, class_bucket.size());
  const size_t want = static_cast<size_t>(dimension) * static_cast<size_t>(outputs());
  if (weights.size() != want) fail("{}: expected {} weights, found {}", where, want, weights.size());
}

void LengthModel::scores(const FeatureVector& x, std::vector<float>& out) const {
  const size_t k = static_cast<size_t>(outputs());
  out.assign(k, 0.f);
  for (const auto& f : x) {
    const float* w = &weights[static_cast<size_t>(f.index) * k];
    for (size_t c = 0; c < k; ++c) out[c] += w[c] * f.value;
  }
}

void softmax(std::vector<float>& v) {
  const float top = *std::max_element(v.begin(), v.end());
  float sum = 0;
  for (float& x : v) sum += (x = std::exp(x - top));
  for (float& x : v) x /= sum;
}

namespace {

// Class c's upper end for spreading its probability: the next edge, or for the
// open last class as far again as its lower edge (at least max_len).
int32_t class_upper(const LengthModel& m, size_t c) {
  if (c + 1 < m.class_edges.size()) return m.class_edges[c + 1];
  return std::max(m.max_len, 2 * m.class_edges[c] + 1);
}

// Splits each class's probability into buckets: by the training shares when known,
// else uniformly over the class's length range.
std::vector<double> spread_into_buckets(const LengthModel& m, const std::vector<float>& p) {
  const size_t nb = static_cast<size_t>(m.buckets.count);
  std::vector<double> out(nb, 0.0);
  if (!m.class_bucket.empty()) {
    for (size_t c = 0; c < p.size(); ++c)
      for (size_t b = 0; b < nb; ++b) out[b] += p[c] * m.class_bucket[c * nb + b];
    return out;
  }
  for (size_t c = 0; c < p.size(); ++c) {
    const int32_t lo = m.class_edges[c], hi = class_upper(m, c);
    for (int32_t b = m.buckets.bucket_of(lo); b < m.buckets.count; ++b) {
      const int32_t blo = b * m.buckets.width;
      const int32_t bhi = b + 1 == m.buckets.count ? std::max(hi, blo + 1) : (b + 1) * m.buckets.width;
      if (blo >= hi) break;
      const double overlap = std::min(hi, bhi) - std::max(lo, blo);
      if (overlap > 0) out[static_cast<size_t>(b)] += p[c] * overlap / (hi - lo);
    }
  }
  return out;
}

// The median of the class distribution, uniform within a class.
int32_t median_length(const LengthModel& m, const std::vector<float>& p) {
  double acc = 0;
  for (size_t c = 0; c < p.size(); ++c) {
    if (acc + p[c] >= 0.5) {
      const double frac = p[c] > 0 ? (0.5 - acc) / p[c] : 0;
      const int32_t lo = m.class_edges[c], hi = class_upper(m, c);
      return std::max(1, static_cast<int32_t>(std::lround(lo + frac * (hi - lo))));
    }
    acc += p[c];
  }
  return std::max(1, m.class_edges.back());
}

}  // namespace

LengthPrediction LengthModel::predict(const FeatureVector& x) const {
  std::vector<float> s;
  scores(x, s);
  LengthPrediction out;
  if (kind == ModelKind::LogReg) {
    const double len = std::clamp(std::expm1(static_cast<double>(s[0])), 1.0, static_cast<double>(max_len));
    out.tokens = static_cast<int32_t>(std::lround(len));
    out.bucket = buckets.bucket_of(out.tokens);
    return out;
  }
  softmax(s);
  out.bucket = choose_bucket(spread_into_buckets(*this, s), first_bucket_margin);
  out.tokens = std::min(median_length(*this, s), max_len);
  return out;
}

std::vector<double> LengthModel::bucket_probabilities(const FeatureVector& x) const {
  std::vector<float> s;
  scores(x, s);
  softmax(s);
  return spread_into_buckets(*this, s);
}

int32_t LengthModel::choose_bucket(const std::vector<double>& bp, float margin) const {
  int32_t best = 0;
  double best_p = bp[0] * std::exp(static_cast<double>(margin));
  for (size_t b = 1; b < bp.size(); ++b)
    if (bp[b] > best_p) {
      best = static_cast<int32_t>(b);
      best_p = bp[b];
    }
  return best;
}

std::vector<int32_t> class_edges_for(ModelKind kind, const LengthBuckets& buckets, int32_t max_len,
                                     int32_t fine_classes) {
  std::vector<int32_t> edges{0};
  if (kind == ModelKind::LogReg) return {};
  if (kind == ModelKind::BucketLr) {
    for (int32_t b = 1; b < buckets.count; ++b) edges.push_back(b * buckets.width);
    return edges;
  }
  if (fine_classes < 3) fail("fine-lr needs at least 3 classes, got {}", fine_classes);
  // Log-spaced from 8 tokens to max_len: finer where answers are short.
  const double lo = std::log(8.0), hi = std::log(static_cast<double>(std::max(max_len, 16)));
  for (int32_t i = 0; i + 1 < fine_classes; ++i) {
    const int32_t e = static_cast<int32_t>(std::lround(std::exp(lo + (hi - lo) * i / (fine_classes - 2))));
    if (e > edges.back()) edges.push_back(e);
  }
  return edges;
}

}  // namespace seer
