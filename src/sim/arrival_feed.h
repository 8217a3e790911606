#pragma once
// Releases a trace's requests to the simulated engine at their arrival times. Turns
// of a conversation are closed-loop: turn k+1 is released only after turn k
// finished, at finish + think_s (or at its own arrival time, if later, when the
// trace gives no think time), and its context is the conversation so far (earlier
// prompts and answers) plus its own prompt.
#include <cstdint>
#include <optional>
#include <queue>
#include <vector>

#include "sim/trace.h"

namespace seer {

class ArrivalFeed {
 public:
  explicit ArrivalFeed(const std::vector<TraceEntry>& entries);

  struct Ready {
    size_t index = 0;       // into entries()
    double arrival_s = 0;   // effective arrival
    int32_t prompt_len = 0; // context to prefill (history + prompt for later turns)
  };
  // Releases every entry due at or before `now`, in arrival order.
  std::vector<Ready> pop_ready(double now);
  // The earliest time something will be released without waiting for a finish.
  std::optional<double> next_arrival() const;
  // The request of entry `index` ended at `finish_s` with `output_len` tokens (0
  // when it was rejected); releases the conversation's next turn.
  void finished(size_t index, double finish_s, int32_t output_len);
  // True when every entry was released.
  bool done() const { return released_ == entries_.size(); }

  const std::vector<TraceEntry>& entries() const { return entries_; }

 private:
  struct Due {
    double t;
    size_t index;
    bool operator>(const Due& o) const { return t != o.t ? t > o.t : index > o.index; }
  };
  std::vector<TraceEntry> entries_;  // sorted by arrival
  std::vector<int64_t> next_turn_;   // index of the conversation's next turn, -1: none
  std::vector<int32_t> context_;     // prompt_len assigned at release
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> due_;
  size_t released_ = 0;
};

}  // namespace seer
