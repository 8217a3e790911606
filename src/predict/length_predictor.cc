#include "predict/length_predictor.h"

#include <algorithm>

#include "common/error.h"

namespace seer {

LengthBuckets LengthBuckets::equal(int32_t max_len, int32_t count) {
  if (max_len <= 0 || count <= 0) fail("length buckets: max_len ({}) and count ({}) must be > 0", max_len, count);
  return LengthBuckets{count, (max_len + count - 1) / count};
}

int32_t LengthBuckets::bucket_of(int32_t length) const {
  return std::clamp(length / width, 0, count - 1);
}

LengthPrediction OraclePredictor::predict(const Request& r) {
  if (r.forced_output_len < 0)
    fail("oracle predictor: request '{}' has no true output length (the oracle needs a trace)", r.external_id);
  return LengthPrediction{buckets_.bucket_of(r.forced_output_len), r.forced_output_len};
}

std::unique_ptr<LengthPredictor> make_length_predictor(std::string_view spec, const PredictorOptions& options) {
  if (spec == "oracle") return std::make_unique<OraclePredictor>(options.buckets);
  fail("--predictor '{}': expected oracle, noisy:<accuracy> or a trained predictor file", spec);
}

}  // namespace seer
