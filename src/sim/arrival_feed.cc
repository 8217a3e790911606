#include "sim/arrival_feed.h"

#include <algorithm>
#include <map>

namespace seer {

ArrivalFeed::ArrivalFeed(const std::vector<TraceEntry>& entries) : entries_(entries) {
  std::stable_sort(entries_.begin(), entries_.end(),
                   [](const auto& a, const auto& b) { return a.arrival_s < b.arrival_s; });
  next_turn_.assign(entries_.size(), -1);
  context_.assign(entries_.size(), 0);
  std::map<std::string, std::vector<size_t>> conversations;
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].conversation.empty())
      due_.push({entries_[i].arrival_s, i});
    else
      conversations[entries_[i].conversation].push_back(i);
  }
  for (auto& [id, turns] : conversations) {
    std::stable_sort(turns.begin(), turns.end(),
                     [&](size_t a, size_t b) { return entries_[a].turn < entries_[b].turn; });
    due_.push({entries_[turns.front()].arrival_s, turns.front()});
    context_[turns.front()] = entries_[turns.front()].prompt_len();
    for (size_t k = 0; k + 1 < turns.size(); ++k) next_turn_[turns[k]] = static_cast<int64_t>(turns[k + 1]);
  }
}

std::vector<ArrivalFeed::Ready> ArrivalFeed::pop_ready(double now) {
  std::vector<Ready> out;
  while (!due_.empty() && due_.top().t <= now) {
    Due d = due_.top();
    due_.pop();
    int32_t len = context_[d.index] > 0 ? context_[d.index] : entries_[d.index].prompt_len();
    out.push_back({d.index, d.t, len});
    ++released_;
  }
  return out;
}

std::optional<double> ArrivalFeed::next_arrival() const {
  if (due_.empty()) return std::nullopt;
  return due_.top().t;
}

void ArrivalFeed::finished(size_t index, double finish_s, int32_t output_len) {
  int64_t next = next_turn_[index];
  if (next < 0) return;
  const TraceEntry& e = entries_[next];
  double t = e.think_s >= 0 ? finish_s + e.think_s : std::max(finish_s, e.arrival_s);
  int64_t context = int64_t{context_[index]} + output_len + e.prompt_len();
  context_[next] = static_cast<int32_t>(std::min<int64_t>(context, int64_t{1} << 30));
  due_.push({t, static_cast<size_t>(next)});
}

}  // namespace seer
