#include "bench/workload.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "common/error.h"
#include "sim/trace_rng.h"
#include "sim/trace_generator.h"

namespace seer::bench {

namespace {

BenchTurn make_turn(const TraceEntry& e, const WorkloadOptions& opts, TraceRng& rng) {
  BenchTurn t;
  t.id = e.id;
  t.output_tokens = std::max(e.output_tokens, 1);
  t.slo = e.slo;
  t.think_s = opts.think_time_s.value_or(e.think_s >= 0 ? e.think_s : 0.0);
  t.prompt_tokens = e.prompt_len();
  if (!e.prompt.empty()) {
    t.prompt_text = opts.text_prompt_prefix + e.prompt;
  } else if (opts.api == Api::Completions) {
    t.prompt_ids.resize(static_cast<size_t>(std::max(e.prompt_tokens, 1)));
    const uint64_t span = static_cast<uint64_t>(opts.token_id_max - opts.token_id_min);
    for (auto& id : t.prompt_ids) id = opts.token_id_min + static_cast<int32_t>(rng.below(span));
  } else {
    t.prompt_text = synthetic_text(std::max(e.prompt_tokens, 1), rng.below(UINT64_MAX));
  }
  return t;
}

// Start times of `n` sessions whose trace starts are `starts` (sorted).
std::vector<double> session_starts(std::vector<double> starts, const WorkloadOptions& opts) {
  if (!opts.rate) return starts;
  const double rate = *opts.rate;
  if (std::isinf(rate)) return std::vector<double>(starts.size(), 0.0);
  if (opts.burstiness) {
    TraceRng rng(opts.seed ^ 0x9e3779b97f4a7c15ull);
    ArrivalOptions a{rate, *opts.burstiness == 1.0 ? ArrivalProcess::Poisson : ArrivalProcess::Gamma,
                     *opts.burstiness};
    return generate_arrivals(starts.size(), a, rng);
  }
  if (starts.size() < 2 || starts.back() <= starts.front()) {
    // No spread to rescale: space them evenly at the rate.
    for (size_t i = 0; i < starts.size(); ++i) starts[i] = static_cast<double>(i) / rate;
    return starts;
  }
  const double first = starts.front();
  const double factor = (static_cast<double>(starts.size() - 1) / (starts.back() - first)) / rate;
  for (auto& s : starts) s = (s - first) * factor;
  return starts;
}

}  // namespace

std::string synthetic_text(int32_t tokens, uint64_t seed) {
  static const char* const kWords[] = {"the", "a",    "of",   "and",  "to",   "in",   "is",   "it",
                                       "was", "he",   "she",  "they", "day",  "one",  "big",  "little",
                                       "dog", "cat",  "sun",  "tree", "play", "went", "saw",  "happy"};
  TraceRng rng(seed);
  std::string out;
  for (int32_t i = 0; i < tokens; ++i) {
    if (i) out += ' ';
    out += kWords[rng.below(std::size(kWords))];
  }
  return out;
}

int64_t count_turns(const std::vector<BenchSession>& sessions) {
  int64_t n = 0;
  for (const auto& s : sessions) n += static_cast<int64_t>(s.turns.size());
  return n;
}

std::vector<BenchSession> build_sessions(std::vector<TraceEntry> entries, const WorkloadOptions& opts) {
  if (opts.num && *opts.num < 1) fail("--num must be at least 1, got {}", *opts.num);
  if (opts.rate && !(*opts.rate > 0)) fail("--rate must be positive (or inf), got {}", *opts.rate);
  if (opts.burstiness && !(*opts.burstiness > 0)) fail("--burstiness must be positive, got {}", *opts.burstiness);
  if (opts.burstiness && !opts.rate) fail("--burstiness needs --rate");
  if (opts.think_time_s && !(*opts.think_time_s >= 0)) fail("--think-time must be >= 0");
  if (opts.token_id_min < 0 || opts.token_id_max <= opts.token_id_min)
    fail("synthetic token ids need 0 <= min < max, got [{}, {})", opts.token_id_min, opts.token_id_max);
  if (entries.empty()) fail("the workload holds no requests");

  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.arrival_s < b.arrival_s; });
  if (opts.num && static_cast<size_t>(*opts.num) < entries.size()) entries.resize(static_cast<size_t>(*opts.num));

  TraceRng rng(opts.seed);
  std::vector<BenchSession> sessions;
  if (opts.multi_turn) {
    std::map<std::string, size_t> index;  // conversation -> session
    std::vector<std::vector<const TraceEntry*>> groups;
    for (const auto& e : entries) {
      if (e.conversation.empty()) {
        groups.push_back({&e});
        continue;
      }
      auto [it, inserted] = index.try_emplace(e.conversation, groups.size());
      if (inserted) groups.emplace_back();
      groups[it->second].push_back(&e);
    }
    for (auto& g : groups) {
      std::stable_sort(g.begin(), g.end(), [](const auto* a, const auto* b) { return a->turn < b->turn; });
      BenchSession s;
      s.conversation = g.front()->conversation;
      s.start_s = g.front()->arrival_s;
      for (const TraceEntry* e : g) s.turns.push_back(make_turn(*e, opts, rng));
      s.turns.front().think_s = 0;
      sessions.push_back(std::move(s));
    }
  } else {
    for (const auto& e : entries) {
      BenchSession s;
      s.start_s = e.arrival_s;
      s.turns.push_back(make_turn(e, opts, rng));
      s.turns.front().think_s = 0;
      sessions.push_back(std::move(s));
    }
  }
  std::stable_sort(sessions.begin(), sessions.end(), [](const auto& a, const auto& b) { return a.start_s < b.start_s; });
  std::vector<double> starts;
  for (const auto& s : sessions) starts.push_back(s.start_s);
  starts = session_starts(std::move(starts), opts);
  const double origin = starts.empty() ? 0 : starts.front();  // the first session starts at once
  for (size_t i = 0; i < sessions.size(); ++i) sessions[i].start_s = starts[i] - origin;
  return sessions;
}

}  // namespace seer::bench
