#pragma once
// Output-length prediction [S3] (docs/architecture.md, "Foresee"): maps a request's
// prompt to a bucket of output length before the scheduler first sees it. The
// engine calls predict() in add_request() and observe() when a request finishes,
// so predictors that learn online (retraining on mispredictions) see every outcome.
// Predictors see a LengthQuery, not the scheduler's Request: this layer sits below
// the scheduler.
//
// Implementations: `oracle` (the trace's true length, simulation only), `noisy:ACC`
// (the true bucket with probability ACC, else a neighbour), and trained predictors
// loaded from a file. make_length_predictor() builds one from its command-line spec.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>


namespace seer {

// Equal-width length buckets: bucket b covers output lengths [b*width, (b+1)*width);
// the last bucket also takes everything longer. S3 uses 10 buckets of max_len/10.
struct LengthBuckets {
  int32_t count = 10;
  int32_t width = 205;

  // ceil(max_len / count)-wide buckets; throws seer::Error for non-positive arguments.
  static LengthBuckets equal(int32_t max_len, int32_t count);
  int32_t bucket_of(int32_t length) const;
  // The reservation a prediction of `bucket` implies: its upper end, (b+1)*width.
  int32_t upper_bound(int32_t bucket) const { return (bucket + 1) * width; }
};

// What a predictor is shown of a request (the engine builds it from its Request).
struct LengthQuery {
  int64_t id = -1;                // the engine's request id; -1: not tracked for observe()
  std::string_view name;          // the client's id, for messages
  std::string_view prompt_text;
  int32_t true_output_len = -1;   // trace replays only: the true length (oracle, noisy)
};

// A finished request, for predictors that learn online.
struct LengthOutcome {
  int64_t id = -1;
  std::string_view prompt_text;
  int32_t output_len = 0;
};

struct LengthPrediction {
  int32_t bucket = 0;
  int32_t tokens = 0;  // the output length the scheduler plans for
};

// Counters for metrics (sim JSON, Prometheus). A predictor that does not learn
// online reports predictions only; a RetrainingPredictor fills in everything.
struct PredictorStats {
  int64_t predictions = 0;  // predict() calls
  int64_t observed = 0;     // finished requests scored against their prediction
  int64_t correct = 0;      // of those, predicted bucket == true bucket
  int64_t retrainings = 0;  // models swapped in by background retraining
  // Accuracy over the most recent observed requests (up to 256); -1 before any.
  double recent_accuracy = -1;
};

class LengthPredictor {
 public:
  virtual ~LengthPredictor() = default;
  virtual std::string name() const = 0;
  // Called on the engine thread for every new request; must be fast (microseconds
  // to a few milliseconds).
  virtual LengthPrediction predict(const LengthQuery& q) = 0;
  // Called on the engine thread once request `o.id` finished with o.output_len tokens.
  // Predictors that retrain do so in the background, never here.
  virtual void observe(const LengthOutcome& o) {}
  // Thread-safe; cheap enough to poll once per step or per metrics scrape.
  virtual PredictorStats stats() const { return {}; }
};

// The true length from the trace (LengthQuery::true_output_len), in buckets. Only
// meaningful in simulation and trace replays; predict() throws seer::Error for a
// request without a true length.
class OraclePredictor final : public LengthPredictor {
 public:
  explicit OraclePredictor(LengthBuckets buckets) : buckets_(buckets) {}
  std::string name() const override { return "oracle"; }
  LengthPrediction predict(const LengthQuery& q) override;

 private:
  LengthBuckets buckets_;
};

struct PredictorOptions {
  LengthBuckets buckets;  // for oracle and noisy (a trained file carries its own)
  uint64_t seed = 0;      // noisy: the error draw; retraining: the example order
  // noisy: the measured bucket error distribution; empty = the committed one,
  // data/predict/bucket_errors.json (`seer predict eval --errors-out` makes it).
  std::string error_distribution;
  // A trained file: wrap it in a RetrainingPredictor (retraining_predictor.h) that
  // retrains on mispredicted requests in the background.
  bool retrain = false;
};

// "oracle", "noisy:<accuracy in [0,1]>", or the path of a trained predictor file
// (`seer predict train`). Throws seer::Error naming the spec when it is none of
// these, or naming the file when it is missing, corrupt, truncated or of another
// version.
std::unique_ptr<LengthPredictor> make_length_predictor(std::string_view spec, const PredictorOptions& options);

}  // namespace seer
