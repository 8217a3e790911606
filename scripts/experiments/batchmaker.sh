#!/usr/bin/env bash
# BatchMaker's comparison (docs/batchmaker.md): request-level batching (`static`, a batch
# runs until all its members finish [FasterTransformer]) against iteration-level batching
# (`orca`: max-allocation, `vllm`: paged, on demand) as the Poisson rate grows.
# Llama-2-7B on 1x A100-80GB (the catalog's model whose non-attention cost is fitted to
# Vidur's measured A100 profiles), first-turn ShareGPT chats with their true Llama-2
# token counts (`seer trace --lengths sharegpt-chat`, the ShareGPT vLLM benchmarks draw).
# Every policy runs with seer's defaults (max batch 256, 8192 tokens per iteration,
# max_tokens filling the 4096-token context, so static and orca reserve 4096 per request).
# Writes docs/results/batchmaker.md (table), batchmaker.json (every point's
# `seer sim --json` summary plus the derived figures) and batchmaker.svg (`seer sim
# sweep`'s plot: E2E latency P50 / P99 against the rate).
#   scripts/experiments/batchmaker.sh [--seer build/seer] [--data-dir ../shared/data] [--num 1000]
#                                     [--out docs/results] [--rates "0.5 1 ..."]
set -euo pipefail
source "$(dirname "$0")/common.sh"
num=1000
rates="0.5 1 1.5 2 2.5 3 3.5 4 5 6 7 8 10 12 16"
experiment_option() {
  case $1 in
    --rates) rates=$2 ;;
    *) return 1 ;;
  esac
}
parse_experiment_args "$@"
start_experiment

policies="static orca vllm"
setup="--model Llama-2-7B --hardware A100-80GB"
tbt_slo=0.1     # capacity: P99 TBT <= 0.1 s (Sarathi-Serve's strict SLO for a 7B model on one A100)
peak_rate=1000  # "all at once": the whole trace arrives within about num/1000 s
t0=$(date +%s)

trace=$work/sharegpt-chat.jsonl
"$seer" trace --lengths sharegpt-chat --data-dir "$data" --num "$num" --rate 1 --seed 7 --out "$trace" >&2

echo "sweep: $policies over rates $rates" >&2
# shellcheck disable=SC2086
"$seer" sim sweep --trace "$trace" $setup --policies "${policies// /,}" --rates "${rates// /,}" \
  --out "$out/batchmaker.svg" --json-out "$work/sweep.json" --quiet >&2

extra=$work/extra.jsonl
: > "$extra"
for p in $policies; do
  printf '[%4ds] %-6s peak throughput (rate %s), capacity (P99 TBT <= %s s, median scheduling delay <= 2 s)\n' \
    $(( $(date +%s) - t0 )) "$p" "$peak_rate" "$tbt_slo" >&2
  # shellcheck disable=SC2086
  j=$("$seer" sim --trace "$trace" $setup --policy "$p" --rate "$peak_rate" --quiet --json 2>/dev/null)
  # shellcheck disable=SC2086
  c=$("$seer" sim capacity --trace "$trace" $setup --policy "$p" --slo-tbt-p99 "$tbt_slo" --start-rate 1 \
        --tolerance 0.02 --quiet 2>/dev/null | sed -n 's/^capacity of .*: \([0-9.]*\) req\/s.*/\1/p' || true)
  append_point "$extra" "$j" label="$p" rate="$peak_rate" kind=peak capacity="${c:-0}" capacity_tbt_slo="$tbt_slo"
done

elapsed=$(( $(date +%s) - t0 ))
python3 "$root/scripts/experiments/batchmaker_report.py" "$work/sweep.json" "$extra" "$out" "$num" "$elapsed"
echo "wrote $out/batchmaker.md, $out/batchmaker.json, $out/batchmaker.svg (${elapsed} s)" >&2
