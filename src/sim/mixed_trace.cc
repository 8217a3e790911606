#include "sim/mixed_trace.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "common/error.h"

namespace seer {

const std::vector<WorkloadClass>& mixed_workload_classes() {
  static const std::vector<WorkloadClass> classes = {
      {"chat", "sharegpt-multiturn", 0.4, Slo{2.0, 0.2, 0}},
      {"qa", "alpaca", 0.4, Slo{1.0, 0.2, 0}},
      {"long", "arxiv", 0.2, Slo{10.0, 0.5, 0}},
  };
  return classes;
}

namespace {

// Stretches a class's first-turn arrivals so they span `span` seconds (a
// conversation's turns share one arrival slot, so chat would otherwise finish its
// arrivals early); later turns keep their think times after their first turn.
void stretch_to_span(std::vector<TraceEntry>& entries, double span) {
  double last_start = 0;
  for (const auto& e : entries)
    if (e.turn == 0) last_start = std::max(last_start, e.arrival_s);
  if (!(last_start > 0)) return;
  const double k = span / last_start;
  std::map<std::string, double> shift;  // conversation -> how far its first turn moved
  for (auto& e : entries) {  // in arrival order: a first turn comes before its later turns
    if (e.turn == 0) {
      shift[e.conversation] = e.arrival_s * (k - 1);
      e.arrival_s *= k;
    } else {
      e.arrival_s += shift[e.conversation];
    }
  }
}

Slo class_slo(const WorkloadClass& c, const Slo& over) {
  Slo s = c.slo;
  if (over.ttft_s > 0) s.ttft_s = over.ttft_s;
  if (over.tbt_s > 0) s.tbt_s = over.tbt_s;
  if (over.deadline_s > 0) s.deadline_s = over.deadline_s;
  return s;
}

}  // namespace

std::vector<TraceEntry> generate_mixed_trace(const TraceGeneratorOptions& o) {
  if (o.num < 3) fail("--num must be >= 3 for --lengths mixed (one request per class), got {}", o.num);
  if (!(o.arrivals.rate > 0)) fail("--rate must be positive for --lengths mixed");
  const double span = static_cast<double>(o.num) / o.arrivals.rate;
  std::vector<TraceEntry> out;
  int64_t left = o.num;
  const auto& classes = mixed_workload_classes();
  for (size_t k = 0; k < classes.size(); ++k) {
    const WorkloadClass& c = classes[k];
    TraceGeneratorOptions sub = o;
    sub.lengths = c.dataset;
    sub.num = k + 1 == classes.size() ? left : std::max<int64_t>(1, std::llround(c.share * o.num));
    sub.num = std::min(sub.num, left - static_cast<int64_t>(classes.size() - k - 1));
    sub.arrivals.rate = o.arrivals.rate * c.share;
    sub.seed = o.seed * 1000003ULL + k + 1;
    sub.slo = class_slo(c, o.slo);
    left -= sub.num;
    auto part = generate_trace(sub);
    stretch_to_span(part, span);
    for (auto& e : part) {
      e.workload_class = c.name;
      if (!e.conversation.empty()) e.conversation = c.name + "-" + e.conversation;
      out.push_back(std::move(e));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.arrival_s < b.arrival_s; });
  for (size_t i = 0; i < out.size(); ++i) out[i].id = fmt::format("r{}", i);
  return out;
}

}  // namespace seer
