#include "predict/predictor_flags.h"

#include "common/error.h"

namespace seer {

std::unique_ptr<LengthPredictor> make_predictor_from_flags(const PredictorFlags& flags, int32_t max_model_len) {
  if (flags.buckets < 1 || flags.buckets > 4096) fail("--predictor-buckets must be in [1, 4096], got {}", flags.buckets);
  if (flags.max_len < 0) fail("--predictor-max-len must be >= 0, got {}", flags.max_len);
  if (!flags.enabled()) return nullptr;
  PredictorOptions options;
  options.buckets = LengthBuckets::equal(flags.max_len > 0 ? flags.max_len : max_model_len, flags.buckets);
  options.seed = flags.seed;
  return make_length_predictor(flags.spec, options);
}

}  // namespace seer
