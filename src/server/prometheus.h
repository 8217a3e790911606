#pragma once
// A small thread-safe metrics registry rendered in the Prometheus text exposition
// format (version 0.0.4): counters, gauges and histograms with cumulative buckets.
// Metrics are created once at start-up and then updated from any thread.
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/thread_annotations.h"

namespace seer::server {

// Label pairs of one time series, e.g. {{"reason", "stop"}}.
using Labels = std::vector<std::pair<std::string, std::string>>;

class Counter {
 public:
  void inc(double v = 1.0);
  // Raises the value to `total` (for counters kept elsewhere, e.g. the engine's);
  // never lowers it, so the series stays monotonic.
  void advance_to(double total);
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

class Gauge {
 public:
  void set(double v) { value_.store(v, std::memory_order_relaxed); }
  void add(double v);
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

class Histogram {
 public:
  // `bounds`: upper bounds of the buckets, strictly increasing; +Inf is implicit.
  explicit Histogram(std::vector<double> bounds);
  void observe(double v);

  struct Snapshot {
    std::vector<double> bounds;
    std::vector<uint64_t> cumulative;  // per bound, then +Inf
    double sum = 0;
    uint64_t count = 0;
  };
  Snapshot snapshot() const;

 private:
  std::vector<double> bounds_;
  mutable Mutex mutex_;
  std::vector<uint64_t> counts_ GUARDED_BY(mutex_);  // per bucket (not cumulative), last is +Inf
  double sum_ GUARDED_BY(mutex_) = 0;
  uint64_t count_ GUARDED_BY(mutex_) = 0;
};

class MetricsRegistry {
 public:
  // Returns the series (name, labels), creating it on first use. A name keeps the
  // type and help text it was first registered with; registering it again as
  // another type throws std::logic_error.
  Counter& counter(const std::string& name, const std::string& help, const Labels& labels = {});
  Gauge& gauge(const std::string& name, const std::string& help, const Labels& labels = {});
  Histogram& histogram(const std::string& name, const std::string& help, const std::vector<double>& bounds,
                       const Labels& labels = {});

  // Labels put on every series when rendered, e.g. {{"replica", "r1"}} (seer serve
  // --replica-name) so that a Prometheus scraping several replicas tells them apart.
  void set_constant_labels(const Labels& labels);

  // The whole registry in the text format, families sorted by name.
  std::string render() const;

 private:
  enum class Type { Counter, Gauge, Histogram };
  struct Family {
    Type type;
    std::string help;
    std::map<std::string, std::unique_ptr<Counter>> counters;  // keyed by rendered labels
    std::map<std::string, std::unique_ptr<Gauge>> gauges;
    std::map<std::string, std::unique_ptr<Histogram>> histograms;
  };
  Family& family(const std::string& name, const std::string& help, Type type) REQUIRES(mutex_);

  mutable Mutex mutex_;
  std::map<std::string, Family> families_ GUARDED_BY(mutex_);
  std::string constant_labels_ GUARDED_BY(mutex_);  // rendered, without braces; "" for none
};

// `{a="x",b="y"}` with values escaped, or "" for no labels.
std::string render_labels(const Labels& labels);
// A sample value as Prometheus writes it (+Inf, -Inf, NaN, shortest round-trip).
std::string format_sample_value(double v);

// Bucket bounds start, start*factor, ... (count bounds).
std::vector<double> exponential_buckets(double start, double factor, int count);

}  // namespace seer::server
