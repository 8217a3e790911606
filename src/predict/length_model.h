#pragma once
// The trained output-length model (docs/predictor.md): a linear model over the
// hashed prompt features of text_features.h. Three kinds, chosen by measurement:
//   bucket-lr  multinomial logistic regression over the S3 buckets themselves;
//   fine-lr    multinomial logistic regression over finer, log-spaced length classes,
//              whose probabilities are summed into the S3 buckets (the bucket is the
//              most probable one) and whose median is the token estimate;
//   log-reg    least-squares regression on log(1 + length); the bucket is the
//              estimate's bucket.
#include <cstdint>
#include <string>
#include <vector>

#include "predict/length_predictor.h"
#include "predict/text_features.h"

namespace seer {

enum class ModelKind { BucketLr, FineLr, LogReg };
std::string model_kind_name(ModelKind k);
// Throws seer::Error naming `what` (the flag, or "model kind" in a file) and the name.
ModelKind parse_model_kind(const std::string& name, const std::string& what = "--model");

struct LengthModel {
  ModelKind kind = ModelKind::FineLr;
  FeatureConfig features;
  LengthBuckets buckets;
  int32_t max_len = 2048;
  // Classification kinds: class c covers lengths [class_edges[c], class_edges[c+1]);
  // the last class is open-ended. Empty for log-reg.
  std::vector<int32_t> class_edges;
  // Classification kinds: [class][bucket], the share of the training lengths of class c
  // that fall in bucket b (how a class's probability is split into buckets). Empty:
  // spread uniformly over the class's length range.
  std::vector<float> class_bucket;
  // Classification kinds: the chosen bucket maximizes P(b), with P(0) first scaled by
  // exp(first_bucket_margin), a margin tuned on held-out training data (the first
  // bucket dominates S3's buckets, and the probabilities are not perfectly calibrated).
  float first_bucket_margin = 0;
  // Row-major [feature][output]: a feature's weights for all outputs are adjacent.
  std::vector<float> weights;

  int32_t outputs() const { return kind == ModelKind::LogReg ? 1 : static_cast<int32_t>(class_edges.size()); }
  int32_t class_of(int32_t length) const;
  // Throws seer::Error when the sizes do not agree with the kind and feature config.
  void check(const std::string& where) const;
  // Raw outputs (logits, or the log-length) for one feature vector.
  void scores(const FeatureVector& x, std::vector<float>& out) const;
  LengthPrediction predict(const FeatureVector& x) const;
  // Classification kinds: P(bucket) for each bucket (before the margin).
  std::vector<double> bucket_probabilities(const FeatureVector& x) const;
  int32_t choose_bucket(const std::vector<double>& bucket_probabilities, float margin) const;
};

// Class edges for a classification kind: the buckets' own edges for bucket-lr;
// `fine_classes` log-spaced edges from 0 to max_len for fine-lr.
std::vector<int32_t> class_edges_for(ModelKind kind, const LengthBuckets& buckets, int32_t max_len,
                                     int32_t fine_classes);

// Softmax in place.
void softmax(std::vector<float>& v);

}  // namespace seer
