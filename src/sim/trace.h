#pragma once
// Request traces (docs/architecture.md §4): JSONL, one request per line, e.g.
//   {"id":"r1","arrival_s":0.12,"prompt_tokens":512,"output_tokens":128}
// or with "prompt":"text" instead of (or beside) "prompt_tokens" -- with both, the count
// is the prompt's length and the text what length predictors read -- and optionally
//   "conversation":"c7","turn":2,"think_s":31.5,
//   "slo":{"ttft_s":2,"tbt_s":0.1,"deadline_s":30},"priority":0,"class":"chat"
// output_tokens is the true output length (forced in benchmarks; a scheduler never
// reads it). For a turn > 0 of a conversation, the prompt is the new user message
// only: the context is the conversation so far plus this prompt, and think_s is the
// user's pause after the previous answer (a replayer sends the turn then).
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/request.h"

namespace seer {

struct TraceEntry {
  std::string id;
  double arrival_s = 0;
  int32_t prompt_tokens = -1;  // -1: only the text is given (its length is estimated)
  std::string prompt;
  int32_t output_tokens = 0;
  std::string conversation;  // empty: a single-turn request
  int32_t turn = 0;
  double think_s = -1;  // -1: not given
  Slo slo;
  int32_t priority = 0;
  std::string workload_class;  // "class": the workload class (mixed traces); metrics group by it

  // prompt_tokens, or the estimate from the text when only text is given.
  int32_t prompt_len() const;
};

// Rough token count of text without a tokenizer: 1.3 tokens per whitespace-separated
// word (English text under Llama-style tokenizers), at least 1.
int32_t estimate_tokens(std::string_view text);

// Parses one line; throws seer::Error naming `source`, the line number and the field.
TraceEntry parse_trace_line(std::string_view line, const std::string& source, int64_t line_no);
// Blank lines are skipped. Throws on the first bad line.
std::vector<TraceEntry> parse_trace(std::istream& in, const std::string& source);
std::vector<TraceEntry> read_trace(const std::string& path);

std::string trace_line(const TraceEntry& e);  // one JSON object, no newline
void write_trace(std::ostream& out, const std::vector<TraceEntry>& entries);
void write_trace_file(const std::string& path, const std::vector<TraceEntry>& entries);

// Stable-sorts by arrival, then stretches or compresses the arrival times (relative
// to the first) so the mean rate over the trace becomes `rate` requests/s.
void rescale_arrivals(std::vector<TraceEntry>& entries, double rate);
// Mean arrival rate, (n - 1) / (last - first); 0 when undefined.
double mean_arrival_rate(const std::vector<TraceEntry>& entries);

}  // namespace seer
