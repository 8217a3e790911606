#pragma once
// Synthetic and dataset-driven request traces (docs/architecture.md §4, `seer trace`).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/trace.h"

namespace seer {

class TraceRng;

enum class ArrivalProcess { Poisson, Gamma };
ArrivalProcess parse_arrival_process(const std::string& name);

struct ArrivalOptions {
  double rate = 1.0;  // mean requests (or conversations) per second
  ArrivalProcess process = ArrivalProcess::Poisson;
  // Gamma shape: inter-arrival CV^2 = 1 / burstiness; 1 is Poisson, < 1 burstier
  // (the convention of vLLM's benchmark_serving).
  double burstiness = 1.0;
};
// n arrival times starting after one inter-arrival gap from 0, increasing.
std::vector<double> generate_arrivals(size_t n, const ArrivalOptions& opts, TraceRng& rng);

enum class LengthDistribution { LogNormal, Uniform, Constant };
LengthDistribution parse_length_distribution(const std::string& name);

struct SyntheticLengths {
  LengthDistribution dist = LengthDistribution::LogNormal;
  double prompt_mean = 512;
  double output_mean = 128;
  double sigma = 0.8;  // log-normal shape (std-dev of the log)
  int32_t prompt_max = 8192;
  int32_t output_max = 4096;
};
// One length with the given mean: log-normal, uniform on [1, 2 mean - 1] or constant,
// clamped to [1, max].
int32_t sample_length(const SyntheticLengths& s, double mean, int32_t max, TraceRng& rng);

struct TraceGeneratorOptions {
  int64_t num = 100;          // requests (turns, for multi-turn)
  ArrivalOptions arrivals;    // rate 0: keep a dataset's own arrival times
  std::string lengths = "synthetic";  // or a name from dataset_names(), or "mixed" (sim/mixed_trace.h)
  std::string data_dir;       // the folder holding length-traces/, alpaca/, sharegpt/
  SyntheticLengths synthetic;
  double think_mean_s = 60;   // multi-turn: exponential user think time
  // Multi-turn: > 0 makes conversations arrive for this long and cuts every turn due
  // after it, so the offered load lasts the whole run instead of ending with the
  // longest conversations' think times; `num` then only caps the turns.
  double duration_s = 0;
  Slo slo;                    // attached to every request when set
  uint64_t seed = 0;
  // alpaca and sharegpt-chat: draw only prompts in the test split of `seer predict
  // train --seed S` on the same text (alpaca; sharegpt's turns), so that a trained
  // predictor is measured on prompts it never saw. Unset: every prompt.
  std::optional<uint64_t> held_out_split_seed;
  bool progress = false;      // a progress bar while tokenizing dataset text
};

// The labeled dataset (`seer predict train --dataset`) whose prompts `--lengths
// lengths` draws, so that a trace can be held out of a predictor's training split;
// "" for traces without prompt text.
std::string labeled_dataset_of(const std::string& lengths);

// Requests sorted by arrival with ids r0, r1, ...; throws seer::Error for bad
// options (naming the flag) or unreadable datasets.
std::vector<TraceEntry> generate_trace(const TraceGeneratorOptions& opts);

}  // namespace seer
