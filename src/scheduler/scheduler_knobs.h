#pragma once
// One place per setting (docs/architecture.md §2): the knobs `seer serve` and
// `seer sim` share, each declared once in this file: its field and default in
// SchedulerKnobs or StackKnobs, its flag, help and valid values in stack_knobs().
// Both commands bind the table (cli/knob_options.h) and check_stack_knobs() is
// the one validation, run where knobs enter: ServingStack, make_sim_setup and
// make_scheduler.
//
// A new scheduler knob is a field of SchedulerKnobs and a record below (this file)
// and the part that reads SchedulerConfig::<field>; nothing else.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "scheduler/step_plan.h"

namespace seer {

// Interactive chat: a reader sees at least ten tokens a second under load. `seer
// serve`'s TBT SLO when none is given (see StackKnobs::tbt_slo_s).
inline constexpr double kDefaultTbtSlo = 0.1;

// What the scheduler plans by. SchedulerConfig extends it with what the stack
// derives (the iteration-time profile, the resolved TBT SLO, ...).
struct SchedulerKnobs {
  std::string policy = "vllm";   // a name from scheduler_policies()
  int32_t max_batch_size = 256;  // requests per iteration (max_num_seqs)
  // Token cap of an iteration for whole-prompt batch formers (static, orca, vllm).
  // A prompt longer than the cap still runs, alone.
  int32_t max_num_batched_tokens = 8192;
  // Sarathi's per-iteration token budget τ. 0: derived from the TBT SLO and the
  // iteration time, or the policy's default without an SLO.
  int32_t token_budget = 0;
  PreemptionMode preemption = PreemptionMode::Recompute;
  // The order of the waiting queue: "" (the policy's, fcfs unless it says), "fcfs",
  // "priority" (higher Request::priority first, then arrival), "deadline",
  // "deadline-spf" (shortest predicted output first within deadline windows).
  std::string ordering;
  // Overrides the preset's allocation rule (docs/architecture.md §1.2): "" (the
  // policy's), "max", "block" or "exact" (prompt + predicted output x (1 + padding)).
  std::string allocation;
  // EcoServe (policies ecoserve*): share of device KV kept for prompt tasks, and
  // the buffer b of KV pipelining as a fraction of the host's predicted length.
  double pt_reserve = 0.03;
  double pipeline_buffer = 0.15;
  // EcoServe's deadline class of a waiting generation task: of its relative deadline
  // ("relative") or of the time left until it ("time-left", the paper's).
  std::string eco_deadline = "relative";
  // EcoServe, the paper's behaviour where seer's default differs (docs/ecoserve.md,
  // "Where the design is not as the paper states it"):
  //  admission: held GT groups admitted at every schedule() call ("every-call") or
  //    only when KV freed up since the last call or no GT runs ("on-free", the paper's);
  //  overrun: a GT past its reservation gives way held ("hold") or first takes the
  //    unused padding of its admission group's running members ("group-slack");
  //  order: held GTs by deadline, length, occupied KV ("length-first") or deadline,
  //    occupied KV, length ("kv-first", the paper's);
  //  pipelining: loans nest from the next call, host search capped ("capped"), or
  //    nest in the same call with no cap ("paper").
  std::string eco_admission = "every-call";
  std::string eco_overrun = "hold";
  std::string eco_order = "length-first";
  std::string eco_pipelining = "capped";
  // Fraction of device blocks kept free when admitting new work while others run
  // (vLLM's watermark), so admissions do not cause immediate preemptions.
  double watermark = 0.01;
};

// The scheduler's knobs and those of the KV pool, context and conversation cache
// it plans over: what ServingConfig and SimOptions share.
struct StackKnobs : SchedulerKnobs {
  // TBT SLO (s) the token budget is derived from. Unset: kDefaultTbtSlo in serve
  // for the policies that take a token budget and have none of their own, none in
  // sim; 0: the policy's fixed budget.
  std::optional<double> tbt_slo_s;
  int32_t block_size = 16;     // tokens per KV block
  int32_t max_model_len = 0;   // context limit; 0: the model's
  // K/V of sliding-window layers (kv/kv_layer_groups.h): "window" frees what no
  // window reaches any more, "full" keeps every position (llama.cpp's --swa-full).
  std::string swa_kv = "window";
  // Conversation cache (docs/pensieve.md).
  int32_t chunk_tokens = 32;
  double swap_out_threshold = 0.25;
  std::string eviction = "pensieve";
  // Speculative decoding (docs/speculative.md): "off" or "ngram" (prompt lookup),
  // verifying up to draft_tokens drafts per request per step.
  std::string speculate = "off";
  int32_t draft_tokens = 4;
  // "adaptive": a request stops drafting for a while when its acceptance is below
  // break-even (engine/speculation_gate.h); "always": it never does.
  std::string speculate_gate = "adaptive";
};

// Valid numbers: [min, max], either end open or unbounded.
struct KnobRange {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_open = false;
  bool max_open = false;
  bool contains(double v) const;
  std::string describe() const;  // ">= 0", "> 0", "in [0, 1)", ...
};
inline KnobRange at_least(double min) {
  KnobRange r;
  r.min = min;
  return r;
}
inline KnobRange above(double min) {
  KnobRange r = at_least(min);
  r.min_open = true;
  return r;
}
inline KnobRange between(double min, double max, bool max_open = false) {
  KnobRange r = at_least(min);
  r.max = max;
  r.max_open = max_open;
  return r;
}

struct Knob {
  using Field = std::variant<int32_t StackKnobs::*, double StackKnobs::*, std::optional<double> StackKnobs::*,
                             std::string StackKnobs::*, PreemptionMode StackKnobs::*>;
  std::string flag;   // "--pt-reserve"
  std::string alias;  // a second accepted name ("" none)
  std::string help;
  Field field;
  std::optional<KnobRange> range;  // numbers
  // Text (and enum) knobs: the accepted values ("" included when empty is); an
  // enum's i-th name is its value i.
  std::vector<std::string> choices;
};

// A numeric knob valid in `range`; a text or enum knob taking one of `choices`
// (none: any text).
inline Knob number_knob(std::string flag, Knob::Field field, KnobRange range, std::string help,
                        std::string alias = "") {
  Knob k;
  k.flag = std::move(flag);
  k.alias = std::move(alias);
  k.help = std::move(help);
  k.field = field;
  k.range = range;
  return k;
}
inline Knob named_knob(std::string flag, Knob::Field field, std::vector<std::string> choices, std::string help) {
  Knob k;
  k.flag = std::move(flag);
  k.help = std::move(help);
  k.field = field;
  k.choices = std::move(choices);
  return k;
}

// "Scheduling policy:" and one line per registered policy.
std::string policy_help();

// The shared knobs in help order. Their defaults are StackKnobs'.
inline const std::vector<Knob>& stack_knobs() {
  static const std::vector<Knob> table = {
      named_knob("--policy", &StackKnobs::policy, {}, policy_help()),
      number_knob("--max-batch-size", &StackKnobs::max_batch_size, at_least(1), "Requests per iteration at most",
                  "--max-batch"),
      number_knob("--max-batched-tokens", &StackKnobs::max_num_batched_tokens, at_least(0),
                  "Token cap per iteration of whole-prompt batching (static, orca, vllm)"),
      number_knob("--token-budget", &StackKnobs::token_budget, at_least(0),
                  "Token budget per iteration of the chunking policies [Sarathi-Serve] (overrides --tbt-slo; 0: "
                  "from --tbt-slo or the policy's default)"),
      number_knob("--tbt-slo", &StackKnobs::tbt_slo_s, at_least(0),
                  "TBT SLO in seconds: the token budget is the largest whose iteration time fits it (serve profiles "
                  "the backend at start-up, sim asks the cost model). Default: serve 0.1 s for the policies that "
                  "take a token budget and have none of their own, sim none; 0: the policy's fixed budget"),
      named_knob("--preemption", &StackKnobs::preemption, {"recompute", "swap"},
                 "Preemption of a running request when KV runs out [vLLM]: recompute or swap"),
      named_knob("--ordering", &StackKnobs::ordering, {"", "fcfs", "priority", "deadline", "deadline-spf"},
                 "Waiting-queue order: fcfs, priority, deadline (arrival + TTFT SLO) or deadline-spf (shortest predicted "
                 "output first within 1 s deadline windows); default: the policy's"),
      named_knob("--allocation", &StackKnobs::allocation, {"", "max", "block", "exact"},
                 "KV reservation rule: max (prompt + max_tokens), block (on demand) or exact (prompt + predicted "
                 "output x (1 + --padding)); default: the policy's (seer: block, its predictions only order)"),
      number_knob("--pt-reserve", &StackKnobs::pt_reserve, between(0, 1, /*max_open=*/true),
                  "ecoserve: share of device KV kept for prompt tasks"),
      number_knob("--pipeline-buffer", &StackKnobs::pipeline_buffer, between(0, 1, /*max_open=*/true),
                  "ecoserve: KV pipelining buffer b (fraction of the host's predicted length)"),
      named_knob("--eco-deadline", &StackKnobs::eco_deadline, {"relative", "time-left"},
                 "ecoserve: deadline class of a waiting generation task, from its relative deadline or from the "
                 "time left until it when it joins the queue (the paper's)"),
      named_knob("--eco-admission", &StackKnobs::eco_admission, {"every-call", "on-free"},
                 "ecoserve: admit held generation groups at every iteration, or only when KV frees up or no "
                 "generation task runs (on-free, the paper's)"),
      named_knob("--eco-overrun", &StackKnobs::eco_overrun, {"hold", "group-slack"},
                 "ecoserve: a generation task past its reservation gives way held, or first uses the unused padding "
                 "of its group's running members (group-slack, the paper's)"),
      named_knob("--eco-order", &StackKnobs::eco_order, {"length-first", "kv-first"},
                 "ecoserve: order of waiting generation tasks within a deadline class: length then occupied KV, or "
                 "occupied KV then length (kv-first, the paper's)"),
      named_knob("--eco-pipelining", &StackKnobs::eco_pipelining, {"capped", "paper"},
                 "ecoserve: KV pipelining loans nest from the next iteration with a capped host search, or nest "
                 "in the same iteration over every host and candidate (paper)"),
      number_knob("--watermark", &StackKnobs::watermark, between(0, 1, /*max_open=*/true),
                  "Share of device KV kept free when admitting while others run, so admissions do not preempt at "
                  "once [vLLM]"),
      number_knob("--block-size", &StackKnobs::block_size, between(1, 1024), "Tokens per KV block"),
      number_knob("--max-model-len", &StackKnobs::max_model_len, at_least(0), "Context limit (0: the model's)"),
      named_knob("--swa-kv", &StackKnobs::swa_kv, {"window", "full"},
                 "K/V of sliding-window layers (gemma2, gemma3): window frees the blocks no window reaches any "
                 "more; full keeps every position, one block per position range as for other models (llama.cpp's "
                 "--swa-full)"),
      named_knob("--eviction", &StackKnobs::eviction, {"pensieve", "lru"},
                 "pensieve policies: conversation-cache chunk eviction, pensieve or lru"),
      number_knob("--swap-out-threshold", &StackKnobs::swap_out_threshold, between(0, 1),
                  "pensieve: swap cached chunks to the host tier ahead of time below this free device KV share"),
      number_knob("--chunk-tokens", &StackKnobs::chunk_tokens, above(0), "pensieve: eviction chunk (tokens)"),
      named_knob("--speculate", &StackKnobs::speculate, {"off", "ngram"},
                 "Speculative decoding: off, or ngram (prompt lookup: drafts continue the last 3..1 tokens' latest "
                 "earlier match in the request's own text; verified in the batched pass, same outputs); sim "
                 "models it with --speculate-acceptance"),
      number_knob("--draft-tokens", &StackKnobs::draft_tokens, between(1, 64),
                  "Speculative decoding: draft tokens verified per request per step at most (they count against "
                  "the token budget)"),
      named_knob("--speculate-gate", &StackKnobs::speculate_gate, {"adaptive", "always"},
                 "Speculative decoding: adaptive (a request whose drafts are accepted less often than they cost "
                 "pauses drafting, backing off, then probes again; docs/speculative.md) or always"),
  };
  return table;
}

// The knob's value in `k` as a user writes it ("" for an unset optional).
std::string knob_text(const Knob& knob, const StackKnobs& k);
// "" when the knob's value in `k` is valid, else "--flag must be ..., got X".
std::string knob_problem(const Knob& knob, const StackKnobs& k);
// Sets a text or enum knob from a user's value; throws seer::Error naming the flag.
void set_knob(const Knob& knob, StackKnobs& k, const std::string& value);
// Throws seer::Error with the first invalid knob's problem.
void check_stack_knobs(const StackKnobs& k);
void check_scheduler_knobs(const SchedulerKnobs& k);

}  // namespace seer
