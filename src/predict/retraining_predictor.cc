#include "predict/retraining_predictor.h"

namespace seer {
namespace {

constexpr size_t kRecentWindow = 256;
constexpr size_t kMaxPending = 1 << 20;  // requests aborted before finishing never get observed

}  // namespace

RetrainingPredictor::RetrainingPredictor(std::shared_ptr<const LengthModel> model, std::string name,
                                         RetrainOptions options)
    : name_(std::move(name)), options_(options), featurizer_(model->features), model_(std::move(model)) {
  worker_ = std::thread([this] { retrain_loop(); });
}

RetrainingPredictor::~RetrainingPredictor() {
  {
    MutexLock lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  worker_.join();
}

std::shared_ptr<const LengthModel> RetrainingPredictor::current_model() const {
  MutexLock lock(mutex_);
  return model_;
}

LengthPrediction RetrainingPredictor::predict(const LengthQuery& q) {
  const FeatureVector x = featurizer_.extract(q.prompt_text);
  const LengthPrediction p = current_model()->predict(x);
  MutexLock lock(mutex_);
  ++counts_.predictions;
  if (q.id >= 0) {
    if (pending_.size() >= kMaxPending) pending_.erase(pending_.begin());  // the oldest id
    pending_[q.id] = p.bucket;
  }
  return p;
}

void RetrainingPredictor::observe(const LengthOutcome& o) {
  bool queued = false;
  {
    MutexLock lock(mutex_);
    auto it = pending_.find(o.id);
    if (it == pending_.end()) return;  // not predicted by this predictor
    const int32_t predicted = it->second;
    pending_.erase(it);
    const bool right = model_->buckets.bucket_of(o.output_len) == predicted;
    ++counts_.observed;
    counts_.correct += right;
    recent_.push_back(right);
    if (recent_.size() > kRecentWindow) recent_.pop_front();
    if (!right) {
      if (queue_.size() >= options_.max_queue) queue_.erase(queue_.begin());
      queue_.push_back({std::string(o.prompt_text), o.output_len});
      queued = queue_.size() >= static_cast<size_t>(options_.batch);
    }
  }
  if (queued) changed_.notify_all();
}

PredictorStats RetrainingPredictor::stats() const {
  MutexLock lock(mutex_);
  PredictorStats s = counts_;
  if (!recent_.empty()) {
    int64_t right = 0;
    for (bool b : recent_) right += b;
    s.recent_accuracy = static_cast<double>(right) / static_cast<double>(recent_.size());
  }
  return s;
}

bool RetrainingPredictor::wait_for_retrainings(int64_t n, std::chrono::milliseconds timeout) const {
  MutexLock lock(mutex_);
  return lock.wait_for(changed_, timeout, [&]() REQUIRES(mutex_) { return counts_.retrainings >= n; });
}

void RetrainingPredictor::retrain_loop() {
  uint64_t round = 0;
  for (;;) {
    std::vector<LengthExample> batch;
    std::shared_ptr<const LengthModel> base;
    {
      MutexLock lock(mutex_);
      lock.wait(changed_,
                [&]() REQUIRES(mutex_) { return stop_ || queue_.size() >= static_cast<size_t>(options_.batch); });
      if (stop_) return;
      batch.swap(queue_);
      base = model_;
    }
    // The expensive part runs unlocked, on a private copy.
    auto next = std::make_shared<LengthModel>(*base);
    fine_tune(*next, batch, options_.epochs, options_.learning_rate, options_.seed + round++);
    {
      MutexLock lock(mutex_);
      model_ = std::move(next);
      ++counts_.retrainings;
    }
    changed_.notify_all();
  }
}

}  // namespace seer
