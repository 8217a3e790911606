#include "sim/trace_generator.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/error.h"
#include "predict/length_trainer.h"
#include "sim/datasets.h"
#include "sim/labeled_datasets.h"
#include "sim/mixed_trace.h"
#include "sim/trace_rng.h"
#include "tokenizer/tokenizer.h"

namespace seer {
namespace {

// Indices 0..n-1 in a random order, repeated (each pass reshuffled) until `count`.
std::vector<size_t> sample_indices(size_t n, size_t count, TraceRng& rng) {
  std::vector<size_t> out, pass(n);
  out.reserve(count);
  while (out.size() < count) {
    for (size_t i = 0; i < n; ++i) pass[i] = i;
    rng.shuffle(pass);
    for (size_t i = 0; i < n && out.size() < count; ++i) out.push_back(pass[i]);
  }
  return out;
}

void check_options(const TraceGeneratorOptions& o, bool needs_rate) {
  if (o.num < 1 || o.num > 100'000'000) fail("--num must be in [1, 1e8], got {}", o.num);
  if (needs_rate && !(o.arrivals.rate > 0)) fail("--rate must be positive for --lengths {}", o.lengths);
  if (o.arrivals.rate < 0 || !std::isfinite(o.arrivals.rate)) fail("--rate must be >= 0, got {}", o.arrivals.rate);
  if (!(o.arrivals.burstiness > 0)) fail("--burstiness must be positive, got {}", o.arrivals.burstiness);
  if (!(o.think_mean_s >= 0)) fail("--think-mean must be >= 0, got {}", o.think_mean_s);
}

std::vector<TraceEntry> from_lengths(const TraceGeneratorOptions& o, const std::vector<LengthRecord>& rows, TraceRng& rng) {
  std::vector<TraceEntry> out(static_cast<size_t>(o.num));
  bool real_arrivals = rows.front().arrival_s >= 0 && o.arrivals.rate <= 0;
  if (rows.front().arrival_s >= 0) {
    // Keep the recorded order (and arrival pattern) of a timed trace, cycling if needed.
    double period = rows.back().arrival_s - rows.front().arrival_s + 1.0;
    for (size_t i = 0; i < out.size(); ++i) {
      const auto& r = rows[i % rows.size()];
      out[i].prompt_tokens = r.prompt_tokens;
      out[i].output_tokens = r.output_tokens;
      out[i].arrival_s = r.arrival_s - rows.front().arrival_s + period * static_cast<double>(i / rows.size());
    }
    if (!real_arrivals) rescale_arrivals(out, o.arrivals.rate);
    return out;
  }
  auto idx = sample_indices(rows.size(), out.size(), rng);
  auto arrivals = generate_arrivals(out.size(), o.arrivals, rng);
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].prompt_tokens = rows[idx[i]].prompt_tokens;
    out[i].output_tokens = rows[idx[i]].output_tokens;
    out[i].arrival_s = arrivals[i];
  }
  return out;
}

std::vector<TraceEntry> synthetic(const TraceGeneratorOptions& o, TraceRng& rng) {
  const auto& s = o.synthetic;
  if (!(s.prompt_mean >= 1) || !(s.output_mean >= 1)) fail("--prompt-mean and --output-mean must be >= 1");
  if (s.prompt_max < 1 || s.output_max < 1) fail("--prompt-max and --output-max must be >= 1");
  if (!(s.sigma >= 0)) fail("--length-sigma must be >= 0, got {}", s.sigma);
  auto arrivals = generate_arrivals(static_cast<size_t>(o.num), o.arrivals, rng);
  std::vector<TraceEntry> out(arrivals.size());
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].arrival_s = arrivals[i];
    out[i].prompt_tokens = sample_length(s, s.prompt_mean, s.prompt_max, rng);
    out[i].output_tokens = sample_length(s, s.output_mean, s.output_max, rng);
  }
  return out;
}

// True token counts (Llama-2 tokenizer) of the sampled records, each tokenized once,
// next to the prompt text that length predictors read.
std::vector<TraceEntry> from_text_records(const TraceGeneratorOptions& o, const std::vector<TextRecord>& recs, TraceRng& rng) {
  if (recs.empty()) fail("--lengths {}: no prompts to draw from", o.lengths);
  auto idx = sample_indices(recs.size(), static_cast<size_t>(o.num), rng);
  auto arrivals = generate_arrivals(idx.size(), o.arrivals, rng);
  std::vector<size_t> unique = idx;
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  std::vector<TextRecord> sampled;
  sampled.reserve(unique.size());
  for (size_t u : unique) sampled.push_back(recs[u]);
  auto tok = load_llama2_tokenizer(o.data_dir);
  auto counted = count_tokens(sampled, *tok, o.progress);
  std::vector<TraceEntry> out(idx.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const size_t k = static_cast<size_t>(std::lower_bound(unique.begin(), unique.end(), idx[i]) - unique.begin());
    out[i].arrival_s = arrivals[i];
    out[i].prompt = counted[k].prompt;
    out[i].prompt_tokens = counted[k].prompt_tokens;
    out[i].output_tokens = counted[k].output_tokens;
  }
  return out;
}

// Single-turn chat as vLLM's and EcoServe's ShareGPT benchmarks draw it: each
// conversation's first user message and the answer to it. With a split seed, only
// the first turns in the test split of the labeled dataset "sharegpt", whose
// examples are every conversation's turns in order (read_text_dataset).
std::vector<TextRecord> first_turns(const std::vector<Conversation>& convs, std::optional<uint64_t> split_seed) {
  size_t turns = 0;
  for (const Conversation& c : convs) turns += c.turns.size();
  std::vector<size_t> test;
  if (split_seed) test = test_split(turns, *split_seed);
  std::vector<TextRecord> out;
  out.reserve(convs.size());
  size_t index = 0;  // of the conversation's first turn among all turns
  for (const Conversation& c : convs) {
    if (!split_seed || std::binary_search(test.begin(), test.end(), index)) out.push_back(c.turns.front());
    index += c.turns.size();
  }
  return out;
}

std::vector<TextRecord> held_out(std::vector<TextRecord> recs, std::optional<uint64_t> split_seed) {
  if (!split_seed) return recs;
  std::vector<TextRecord> out;
  for (size_t i : test_split(recs.size(), *split_seed)) out.push_back(std::move(recs[i]));
  return out;
}

// Conversations start at the arrival process's times; each later turn follows the
// previous one after an exponential think time (a replayer re-anchors it on the
// previous answer, see trace.h). With a duration, conversations start until it ends
// and turns due after it are cut.
std::vector<TraceEntry> multiturn(const TraceGeneratorOptions& o, const std::vector<Conversation>& convs, TraceRng& rng) {
  std::vector<TraceEntry> out;
  const size_t want = static_cast<size_t>(o.num);
  const double horizon = o.duration_s > 0 ? o.duration_s : std::numeric_limits<double>::infinity();
  // Enough conversations to supply `want` turns (each has at least one).
  auto order = sample_indices(convs.size(), want, rng);
  auto starts = generate_arrivals(order.size(), o.arrivals, rng);
  for (size_t c = 0; c < order.size() && out.size() < want && starts[c] <= horizon; ++c) {
    const Conversation& conv = convs[order[c]];
    double t = starts[c];
    for (size_t k = 0; k < conv.turns.size() && out.size() < want; ++k) {
      TraceEntry e;
      if (k > 0) {
        e.think_s = rng.exponential(o.think_mean_s);
        t += e.think_s;
      }
      if (t > horizon) break;
      e.arrival_s = t;
      e.prompt = conv.turns[k].prompt;
      e.output_tokens = estimate_tokens(conv.turns[k].answer);
      e.conversation = fmt::format("c{}", c);
      e.turn = static_cast<int32_t>(k);
      out.push_back(std::move(e));
    }
  }
  return out;
}

}  // namespace

ArrivalProcess parse_arrival_process(const std::string& name) {
  if (name == "poisson") return ArrivalProcess::Poisson;
  if (name == "gamma") return ArrivalProcess::Gamma;
  fail("unknown arrival process '{}' (expected poisson or gamma)", name);
}

LengthDistribution parse_length_distribution(const std::string& name) {
  if (name == "lognormal") return LengthDistribution::LogNormal;
  if (name == "uniform") return LengthDistribution::Uniform;
  if (name == "constant") return LengthDistribution::Constant;
  fail("unknown length distribution '{}' (expected lognormal, uniform or constant)", name);
}

std::vector<double> generate_arrivals(size_t n, const ArrivalOptions& opts, TraceRng& rng) {
  if (!(opts.rate > 0)) fail("arrival rate must be positive, got {}", opts.rate);
  std::vector<double> out(n);
  double t = 0;
  for (auto& a : out) {
    t += opts.process == ArrivalProcess::Poisson
             ? rng.exponential(1.0 / opts.rate)
             : rng.gamma(opts.burstiness, 1.0 / (opts.rate * opts.burstiness));
    a = t;
  }
  return out;
}

int32_t sample_length(const SyntheticLengths& s, double mean, int32_t max, TraceRng& rng) {
  double v = mean;
  switch (s.dist) {
    case LengthDistribution::LogNormal:
      v = std::exp(std::log(mean) - 0.5 * s.sigma * s.sigma + s.sigma * rng.normal());
      break;
    case LengthDistribution::Uniform:
      v = 1.0 + rng.uniform() * (2.0 * mean - 1.0);  // floor gives [1, 2 mean - 1]
      break;
    case LengthDistribution::Constant:
      break;
  }
  return static_cast<int32_t>(std::clamp(std::floor(v), 1.0, static_cast<double>(max)));
}

std::string labeled_dataset_of(const std::string& lengths) {
  if (lengths == "alpaca") return "alpaca";
  if (lengths == "sharegpt-chat") return "sharegpt";
  return "";
}

std::vector<TraceEntry> generate_trace(const TraceGeneratorOptions& o) {
  if (!(o.duration_s >= 0) || !std::isfinite(o.duration_s)) fail("--duration must be >= 0 s, got {}", o.duration_s);
  if (o.duration_s > 0 && o.lengths != "sharegpt-multiturn")
    fail("--duration applies to --lengths sharegpt-multiturn only (got --lengths {}); use --num", o.lengths);
  if (o.lengths == "mixed") return generate_mixed_trace(o);
  TraceRng rng(o.seed);
  std::vector<TraceEntry> out;
  if (o.lengths == "synthetic") {
    check_options(o, true);
    out = synthetic(o, rng);
  } else {
    if (o.data_dir.empty())
      fail("--lengths {} needs --data-dir (the folder holding length-traces/, alpaca/, sharegpt/)", o.lengths);
    const std::string path = dataset_path(o.data_dir, o.lengths);
    bool timed = o.lengths == "splitwise-conv" || o.lengths == "splitwise-code";
    check_options(o, !timed);
    if (o.held_out_split_seed && labeled_dataset_of(o.lengths).empty())
      fail("held-out prompts exist for --lengths alpaca and sharegpt-chat only (got --lengths {})", o.lengths);
    if (o.lengths == "alpaca")
      out = from_text_records(o, held_out(read_alpaca(path), o.held_out_split_seed), rng);
    else if (o.lengths == "sharegpt-chat")
      out = from_text_records(o, first_turns(read_sharegpt_conversations(path), o.held_out_split_seed), rng);
    else if (o.lengths == "sharegpt-multiturn")
      out = multiturn(o, read_sharegpt_conversations(path), rng);
    else
      out = from_lengths(o, read_length_csv(path), rng);
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.arrival_s < b.arrival_s; });
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].id = fmt::format("r{}", i);
    out[i].slo = o.slo;
  }
  return out;
}

}  // namespace seer
