#pragma once
// Online retraining [S3] (docs/predictor.md, "Online retraining"): wraps a trained
// model; observe() (engine thread) queues every mispredicted request's prompt and true
// length; a background thread, never the engine thread, fine-tunes a copy of the
// current model on each batch of them and swaps the copy in atomically. predict()
// always scores with a complete model: the old one until the swap, then the new one.
//
// Ownership: the predictor owns its worker thread; the destructor stops and joins it.
// Threads: predict(), observe() and stats() may be called from any thread.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "common/thread_annotations.h"
#include "predict/length_model.h"
#include "predict/length_predictor.h"
#include "predict/length_trainer.h"

namespace seer {

struct RetrainOptions {
  int32_t batch = 32;           // mispredictions per retraining
  int32_t epochs = 2;           // SGD passes over a batch
  float learning_rate = 0.05f;  // plain SGD step
  size_t max_queue = 4096;      // older mispredictions are dropped beyond this
  uint64_t seed = 0;
};

class RetrainingPredictor final : public LengthPredictor {
 public:
  RetrainingPredictor(std::shared_ptr<const LengthModel> model, std::string name, RetrainOptions options = {});
  ~RetrainingPredictor() override;
  RetrainingPredictor(const RetrainingPredictor&) = delete;
  RetrainingPredictor& operator=(const RetrainingPredictor&) = delete;

  std::string name() const override { return name_; }
  LengthPrediction predict(const LengthQuery& q) override;
  // Scores r's prediction (kept since predict(), keyed by r.id) against r.num_output().
  void observe(const LengthOutcome& o) override;
  PredictorStats stats() const override;

  std::shared_ptr<const LengthModel> current_model() const;
  // Waits (for tests and shutdown paths) until at least `n` retrainings happened;
  // false at the deadline.
  [[nodiscard]] bool wait_for_retrainings(int64_t n, std::chrono::milliseconds timeout) const;

 private:
  void retrain_loop();

  // Set at construction.
  const std::string name_;
  const RetrainOptions options_;
  const TextFeaturizer featurizer_;  // the feature config never changes across retrainings

  mutable Mutex mutex_;
  mutable std::condition_variable changed_;
  std::shared_ptr<const LengthModel> model_ GUARDED_BY(mutex_);
  std::vector<LengthExample> queue_ GUARDED_BY(mutex_);
  std::map<int64_t, int32_t> pending_ GUARDED_BY(mutex_);  // predicted bucket by request id
  std::deque<bool> recent_ GUARDED_BY(mutex_);             // last observed outcomes
  PredictorStats counts_ GUARDED_BY(mutex_);               // (recent_accuracy unused)
  bool stop_ GUARDED_BY(mutex_) = false;

  std::thread worker_;  // last: started once everything above is initialized
};

}  // namespace seer
