#include "server/prometheus.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace seer::server {

namespace {

void atomic_add(std::atomic<double>& a, double v) {
  double cur = a.load(std::memory_order_relaxed);
  while (!a.compare_exchange_weak(cur, cur + v, std::memory_order_relaxed)) {
  }
}

bool valid_metric_name(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':'; });
}

// HELP text escapes backslash and newline; label values also escape the quote.
std::string escape(const std::string& s, bool quote) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (quote && c == '"') out += "\\\"";
    else out += c;
  }
  return out;
}

// Adds `le` to an existing label block.
std::string with_le(const std::string& labels, const std::string& le) {
  std::string le_pair = "le=\"" + le + "\"";
  if (labels.empty()) return "{" + le_pair + "}";
  return labels.substr(0, labels.size() - 1) + "," + le_pair + "}";
}

// `labels` (rendered) with `constant` (rendered, without braces) in front.
std::string with_constant(const std::string& labels, const std::string& constant) {
  if (constant.empty()) return labels;
  if (labels.empty()) return "{" + constant + "}";
  return "{" + constant + "," + labels.substr(1);
}

}  // namespace

void Counter::inc(double v) {
  if (v < 0) throw std::logic_error("a counter cannot decrease");
  atomic_add(value_, v);
}

void Counter::advance_to(double total) {
  double cur = value_.load(std::memory_order_relaxed);
  while (total > cur && !value_.compare_exchange_weak(cur, total, std::memory_order_relaxed)) {
  }
}

void Gauge::add(double v) { atomic_add(value_, v); }

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {
  for (size_t i = 1; i < bounds_.size(); ++i)
    if (!(bounds_[i] > bounds_[i - 1])) throw std::logic_error("histogram bounds must increase");
}

void Histogram::observe(double v) {
  size_t b = std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin();  // first bound >= v
  MutexLock lock(mutex_);
  ++counts_[b];
  sum_ += v;
  ++count_;
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot s;
  s.bounds = bounds_;
  MutexLock lock(mutex_);
  uint64_t running = 0;
  for (uint64_t c : counts_) s.cumulative.push_back(running += c);
  s.sum = sum_;
  s.count = count_;
  return s;
}

std::string render_labels(const Labels& labels) {
  if (labels.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i) out += ',';
    out += labels[i].first + "=\"" + escape(labels[i].second, true) + "\"";
  }
  return out + "}";
}

std::string format_sample_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

std::vector<double> exponential_buckets(double start, double factor, int count) {
  std::vector<double> b;
  for (int i = 0; i < count; ++i, start *= factor) b.push_back(start);
  return b;
}

MetricsRegistry::Family& MetricsRegistry::family(const std::string& name, const std::string& help, Type type) {
  if (!valid_metric_name(name)) throw std::logic_error("invalid metric name: " + name);
  auto [it, inserted] = families_.try_emplace(name);
  if (inserted) {
    it->second.type = type;
    it->second.help = help;
  } else if (it->second.type != type) {
    throw std::logic_error("metric " + name + " registered with two types");
  }
  return it->second;
}

Counter& MetricsRegistry::counter(const std::string& name, const std::string& help, const Labels& labels) {
  MutexLock lock(mutex_);
  auto& slot = family(name, help, Type::Counter).counters[render_labels(labels)];
  if (!slot) slot = std::make_unique<Counter>();
  return *slot;
}

Gauge& MetricsRegistry::gauge(const std::string& name, const std::string& help, const Labels& labels) {
  MutexLock lock(mutex_);
  auto& slot = family(name, help, Type::Gauge).gauges[render_labels(labels)];
  if (!slot) slot = std::make_unique<Gauge>();
  return *slot;
}

Histogram& MetricsRegistry::histogram(const std::string& name, const std::string& help,
                                      const std::vector<double>& bounds, const Labels& labels) {
  MutexLock lock(mutex_);
  auto& slot = family(name, help, Type::Histogram).histograms[render_labels(labels)];
  if (!slot) slot = std::make_unique<Histogram>(bounds);
  return *slot;
}

void MetricsRegistry::set_constant_labels(const Labels& labels) {
  MutexLock lock(mutex_);
  const std::string rendered = render_labels(labels);
  constant_labels_ = rendered.empty() ? "" : rendered.substr(1, rendered.size() - 2);
}

std::string MetricsRegistry::render() const {
  MutexLock lock(mutex_);
  std::string out;
  for (const auto& [name, fam] : families_) {
    const char* type = fam.type == Type::Counter ? "counter" : fam.type == Type::Gauge ? "gauge" : "histogram";
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, escape(fam.help, false), name, type);
    for (const auto& [own, c] : fam.counters)
      out += fmt::format("{}{} {}\n", name, with_constant(own, constant_labels_), format_sample_value(c->value()));
    for (const auto& [own, g] : fam.gauges)
      out += fmt::format("{}{} {}\n", name, with_constant(own, constant_labels_), format_sample_value(g->value()));
    for (const auto& [own, h] : fam.histograms) {
      const std::string labels = with_constant(own, constant_labels_);
      Histogram::Snapshot s = h->snapshot();
      for (size_t i = 0; i < s.bounds.size(); ++i)
        out += fmt::format("{}_bucket{} {}\n", name, with_le(labels, format_sample_value(s.bounds[i])), s.cumulative[i]);
      out += fmt::format("{}_bucket{} {}\n", name, with_le(labels, "+Inf"), s.cumulative.back());
      out += fmt::format("{}_sum{} {}\n", name, labels, format_sample_value(s.sum));
      out += fmt::format("{}_count{} {}\n", name, labels, s.count);
    }
  }
  return out;
}

}  // namespace seer::server
