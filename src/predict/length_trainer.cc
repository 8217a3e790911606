#include "predict/length_trainer.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/error.h"
#include "common/progress.h"
#include "sampling/rng.h"

namespace seer {
namespace {

float target_of(const LengthModel& m, int32_t length) {
  return static_cast<float>(std::log1p(static_cast<double>(std::min(length, m.max_len))));
}

// d(loss)/d(output) for one example: softmax minus one-hot, or the regression residual.
void output_gradient(const LengthModel& m, const FeatureVector& x, int32_t length, std::vector<float>& g) {
  m.scores(x, g);
  if (m.kind == ModelKind::LogReg) {
    g[0] -= target_of(m, length);
    return;
  }
  softmax(g);
  g[static_cast<size_t>(m.class_of(length))] -= 1.f;
}

// Fisher-Yates with seer's portable generator: the same order on every platform.
void shuffle(std::vector<size_t>& v, Rng& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.next() % i]);
}

class Sgd {
 public:
  Sgd(LengthModel& m, float lr, float l2, bool adagrad) : m_(m), lr_(lr), l2_(l2), adagrad_(adagrad) {
    if (adagrad_) accum_.assign(m.weights.size(), 1e-6f);
  }
  void step(const FeatureVector& x, int32_t length) {
    output_gradient(m_, x, length, g_);
    const size_t k = g_.size();
    for (const auto& f : x) {
      const size_t base = static_cast<size_t>(f.index) * k;
      for (size_t c = 0; c < k; ++c) {
        float& w = m_.weights[base + c];
        const float grad = g_[c] * f.value + l2_ * w;
        if (adagrad_) {
          accum_[base + c] += grad * grad;
          w -= lr_ * grad / std::sqrt(accum_[base + c]);
        } else {
          w -= lr_ * grad;
        }
      }
    }
  }

 private:
  LengthModel& m_;
  float lr_, l2_;
  bool adagrad_;
  std::vector<float> accum_, g_;
};

// Bias = the log of the mean class frequency (or the mean log length), so training
// starts at the prior instead of the uniform distribution.
void init_bias(LengthModel& m, const std::vector<LengthExample>& ex, uint32_t bias_index) {
  const size_t k = static_cast<size_t>(m.outputs());
  float* b = &m.weights[static_cast<size_t>(bias_index) * k];
  if (m.kind == ModelKind::LogReg) {
    double sum = 0;
    for (const auto& e : ex) sum += target_of(m, e.output_tokens);
    b[0] = static_cast<float>(sum / static_cast<double>(ex.size()));
    return;
  }
  std::vector<double> counts(k, 1.0);  // add-one smoothing
  for (const auto& e : ex) counts[static_cast<size_t>(m.class_of(e.output_tokens))] += 1;
  const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
  for (size_t c = 0; c < k; ++c) b[c] = static_cast<float>(std::log(counts[c] / total));
}

// The share of each class's training lengths in each bucket; a class without
// examples keeps an empty row, filled by uniform spreading over its range.
std::vector<float> class_bucket_shares(const LengthModel& m, const std::vector<LengthExample>& ex) {
  const size_t k = static_cast<size_t>(m.outputs()), nb = static_cast<size_t>(m.buckets.count);
  std::vector<double> counts(k * nb, 0.0), totals(k, 0.0);
  for (const auto& e : ex) {
    const size_t c = static_cast<size_t>(m.class_of(e.output_tokens));
    counts[c * nb + static_cast<size_t>(m.buckets.bucket_of(e.output_tokens))] += 1;
    totals[c] += 1;
  }
  std::vector<float> out(k * nb, 0.f);
  for (size_t c = 0; c < k; ++c) {
    if (totals[c] > 0) {
      for (size_t b = 0; b < nb; ++b) out[c * nb + b] = static_cast<float>(counts[c * nb + b] / totals[c]);
      continue;
    }
    const int32_t lo = m.class_edges[c];
    const int32_t hi = c + 1 < k ? m.class_edges[c + 1] : std::max(m.max_len, 2 * lo + 1);
    for (int32_t len = lo; len < hi; ++len) out[c * nb + static_cast<size_t>(m.buckets.bucket_of(len))] += 1.f / (hi - lo);
  }
  return out;
}

}  // namespace

static LengthModel train_once(const std::vector<LengthExample>& examples, const TrainOptions& o);

// The margin (a grid from -1 to 4) that maximizes bucket accuracy on a held-out tenth
// of the training examples; 0 wins ties.
static float tune_first_bucket_margin(const std::vector<LengthExample>& examples, const TrainOptions& o) {
  const auto held = test_split(examples.size(), o.seed + 1, 0.1);
  std::vector<LengthExample> fit, val;
  for (size_t i = 0, h = 0; i < examples.size(); ++i) {
    const bool is_val = h < held.size() && held[h] == i;
    h += is_val;
    (is_val ? val : fit).push_back(examples[i]);
  }
  TrainOptions inner = o;
  inner.tune_margin = false;
  const LengthModel m = train_once(fit, inner);
  TextFeaturizer featurizer(m.features);
  std::vector<std::vector<double>> probs;
  for (const auto& e : val) probs.push_back(m.bucket_probabilities(featurizer.extract(e.prompt)));
  float best = 0;
  int64_t best_correct = -1;
  for (int step = -4; step <= 16; ++step) {
    const float margin = 0.25f * static_cast<float>(step);
    int64_t correct = 0;
    for (size_t i = 0; i < val.size(); ++i)
      correct += m.choose_bucket(probs[i], margin) == m.buckets.bucket_of(val[i].output_tokens);
    if (correct > best_correct || (correct == best_correct && std::abs(margin) < std::abs(best))) {
      best = margin;
      best_correct = correct;
    }
  }
  return best;
}

LengthModel train_length_model(const std::vector<LengthExample>& examples, const TrainOptions& o) {
  float margin = 0;
  if (o.tune_margin && o.kind != ModelKind::LogReg && examples.size() >= 100)
    margin = tune_first_bucket_margin(examples, o);
  LengthModel m = train_once(examples, o);
  m.first_bucket_margin = margin;
  return m;
}

static LengthModel train_once(const std::vector<LengthExample>& examples, const TrainOptions& o) {
  if (examples.empty()) fail("predictor training: no training examples");
  if (o.epochs < 1 || !(o.learning_rate > 0) || !(o.l2 >= 0)) fail("predictor training: bad epochs/learning rate/l2");
  if (o.max_len < 1) fail("--max-len must be >= 1, got {}", o.max_len);
  LengthModel m;
  m.kind = o.kind;
  m.features = o.features;
  m.buckets = o.buckets;
  m.max_len = o.max_len;
  m.class_edges = class_edges_for(o.kind, o.buckets, o.max_len, o.fine_classes);
  TextFeaturizer featurizer(o.features);
  m.weights.assign(static_cast<size_t>(featurizer.dimension()) * static_cast<size_t>(m.outputs()), 0.f);
  init_bias(m, examples, static_cast<uint32_t>(featurizer.dimension() - 1));
  if (m.kind != ModelKind::LogReg) m.class_bucket = class_bucket_shares(m, examples);

  ProgressBar bar("train " + model_kind_name(o.kind), static_cast<int64_t>(examples.size()) * (o.epochs + 1),
                  o.progress);
  std::vector<FeatureVector> xs(examples.size());
  for (size_t i = 0; i < examples.size(); ++i) {
    xs[i] = featurizer.extract(examples[i].prompt);
    if (i % 1024 == 0) bar.update(static_cast<int64_t>(i));
  }
  std::vector<size_t> order(examples.size());
  std::iota(order.begin(), order.end(), size_t{0});
  Rng rng(o.seed);
  Sgd sgd(m, o.learning_rate, o.l2, true);
  for (int32_t epoch = 0; epoch < o.epochs; ++epoch) {
    shuffle(order, rng);
    for (size_t n = 0; n < order.size(); ++n) {
      sgd.step(xs[order[n]], examples[order[n]].output_tokens);
      if (n % 1024 == 0) bar.update(static_cast<int64_t>(examples.size() * (epoch + 1) + n));
    }
  }
  bar.finish();
  return m;
}

void fine_tune(LengthModel& model, const std::vector<LengthExample>& examples, int32_t epochs, float learning_rate,
               uint64_t seed) {
  TextFeaturizer featurizer(model.features);
  std::vector<FeatureVector> xs;
  xs.reserve(examples.size());
  for (const auto& e : examples) xs.push_back(featurizer.extract(e.prompt));
  std::vector<size_t> order(examples.size());
  std::iota(order.begin(), order.end(), size_t{0});
  Rng rng(seed);
  Sgd sgd(model, learning_rate, 0.f, false);
  for (int32_t epoch = 0; epoch < epochs; ++epoch) {
    shuffle(order, rng);
    for (size_t i : order) sgd.step(xs[i], examples[i].output_tokens);
  }
}

std::vector<size_t> test_split(size_t n, uint64_t seed, double test_fraction) {
  std::vector<size_t> idx(n);
  std::iota(idx.begin(), idx.end(), size_t{0});
  Rng rng(seed ^ 0x5eed5011177ull);
  shuffle(idx, rng);
  idx.resize(static_cast<size_t>(std::llround(static_cast<double>(n) * test_fraction)));
  std::sort(idx.begin(), idx.end());
  return idx;
}

}  // namespace seer
