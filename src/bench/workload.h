#pragma once
// What `seer bench` sends: trace entries grouped into sessions (a conversation's
// turns, or a single request), with start times after --num/--rate/--burstiness,
// and prompts every server can take (text, or token ids when the trace gives only
// a count).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/streaming_client.h"
#include "scheduler/request.h"
#include "sim/trace.h"

namespace seer::bench {

struct BenchTurn {
  std::string id;
  std::string prompt_text;          // set when the prompt is text
  std::vector<int32_t> prompt_ids;  // set otherwise (completions API only)
  int32_t prompt_tokens = 0;        // known or estimated length
  int32_t output_tokens = 1;        // forced via max_tokens + ignore_eos
  double think_s = 0;               // pause after the previous answer (turns after the first)
  Slo slo;
};

struct BenchSession {
  std::string conversation;  // "" for a single request
  double start_s = 0;        // when the first turn is sent, relative to the run start
  std::vector<BenchTurn> turns;
};

struct WorkloadOptions {
  Api api = Api::Completions;
  bool multi_turn = false;            // group turns by conversation and chain them
  std::optional<int64_t> num;         // keep the first N requests
  // Requests (conversations, in multi-turn mode) per second. Unset: the trace's own
  // times; infinity: all at once.
  std::optional<double> rate;
  // Set: regenerate arrivals as a gamma process with this shape (1 = Poisson) at
  // `rate`; unset: rescale the trace's arrivals to `rate`.
  std::optional<double> burstiness;
  std::optional<double> think_time_s;  // overrides the trace's think_s
  int32_t token_id_min = 16;           // synthetic token-id prompts draw from [min, max)
  int32_t token_id_max = 256;
  uint64_t seed = 0;
  std::string text_prompt_prefix;  // prepended to the trace's text prompts
};

// Throws seer::Error for impossible options (naming the flag).
std::vector<BenchSession> build_sessions(std::vector<TraceEntry> entries, const WorkloadOptions& opts);

// About `tokens` tokens of filler English words (for chat prompts given as a count).
std::string synthetic_text(int32_t tokens, uint64_t seed);

int64_t count_turns(const std::vector<BenchSession>& sessions);

}  // namespace seer::bench
