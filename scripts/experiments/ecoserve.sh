#!/usr/bin/env bash
# The EcoServe experiment (docs/ecoserve.md): OPT-13B on 1x A100-80GB with 12 GB of
# KV in 32-token blocks; Alpaca-, ShareGPT- and arxiv-like length traces with
# Poisson arrivals; orca (batch 8, max-allocation), vllm (swap), sarathi (chunked
# prefill), ecoserve-d/-sd/-sdo/ecoserve and ecoserve with the oracle predictor.
# Two ShareGPT traces: `sharegpt` is Sarathi-Serve's ShareGPT-8k length table
# (long conversations: prefill median 1730 tokens), `sharegpt-chat` the first turn of
# each real ShareGPT conversation with its answer, as vLLM's and EcoServe's
# benchmarks draw ShareGPT (true Llama-2 token counts).
# Writes docs/results/ecoserve.md, docs/results/ecoserve-<trace>.svg and the raw
# points as docs/results/ecoserve.jsonl.
#   scripts/experiments/ecoserve.sh [--seer build/seer] [--data-dir ../shared/data] [--num 600]
#                                   [--traces "alpaca sharegpt sharegpt-chat arxiv"]
set -euo pipefail
source "$(dirname "$0")/common.sh"
num=600
traces="alpaca sharegpt sharegpt-chat arxiv"
parse_experiment_args "$@"
start_experiment

# Rates per trace (req/s), low load first: the first rate is the reference.
declare -A rates=(
  [alpaca]="2 8 16 24 32 40 48 56"
  [sharegpt]="0.5 0.75 1 1.1 1.2 1.3 1.4 1.5 1.75 2 2.5 3 3.5 4"
  [sharegpt-chat]="0.5 1 1.5 2 2.25 2.5 2.75 3 3.5 4"
  [arxiv]="0.25 0.5 0.75 1 1.25 1.5 1.75 2"
)
# The fixed rate for SLO attainment and JCT.
declare -A fixed=([alpaca]=32 [sharegpt]=2 [sharegpt-chat]=2.5 [arxiv]=1)
# policy label -> seer sim flags
policies=(orca vllm sarathi ecoserve-d ecoserve-sd ecoserve-sdo ecoserve oracle)
declare -A flags=(
  [orca]="--policy orca --max-batch 8"
  [vllm]="--policy vllm --preemption swap"
  [sarathi]="--policy sarathi --token-budget 2048"
  [ecoserve-d]="--policy ecoserve-d --token-budget 2048 --predictor ${ECO_PREDICTOR:-oracle}"
  [ecoserve-sd]="--policy ecoserve-sd --token-budget 2048 --predictor ${ECO_PREDICTOR:-oracle}"
  [ecoserve-sdo]="--policy ecoserve-sdo --token-budget 2048 --predictor ${ECO_PREDICTOR:-oracle}"
  [ecoserve]="--policy ecoserve --token-budget 2048 --predictor ${ECO_PREDICTOR:-oracle}"
  [oracle]="--policy ecoserve --token-budget 2048 --predictor oracle --padding 0"
)
common="--model OPT-13B --hardware A100-80GB --kv-memory 12G --block-size 32 --slo-scale 2 --quiet --json"

points=$out/ecoserve.jsonl
: > "$points"
for t in $traces; do
  # OPT-13B's context is 2048 tokens: keep the requests that fit it.
  "$seer" trace --lengths "$t" --data-dir "$data" --num $((num * 4)) --rate 1 --seed 7 --out "$work/$t.all.jsonl" >/dev/null
  python3 - "$work/$t.all.jsonl" "$work/$t.jsonl" "$num" <<'PY'
import json, sys
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
kept = []
for line in open(src):
    e = json.loads(line)
    p = e.get("prompt_tokens") or 0
    if isinstance(e.get("prompt"), str) and not p:
        p = max(1, len(e["prompt"].split()) * 4 // 3)
    if p + e["output_tokens"] <= 2048:
        kept.append(line)
    if len(kept) == n:
        break
open(dst, "w").writelines(kept)
PY
  total=$(( ${#policies[@]} * $(wc -w <<<"${rates[$t]}") ))
  i=0
  for p in "${policies[@]}"; do
    for r in ${rates[$t]}; do
      i=$((i + 1))
      printf '\r[%s] %3d/%d %-13s rate %-5s' "$t" "$i" "$total" "$p" "$r" >&2
      # shellcheck disable=SC2086
      if j=$("$seer" sim --trace "$work/$t.jsonl" $common ${flags[$p]} --rate "$r" 2>/dev/null); then
        append_point "$points" "$j" trace="$t" label="$p" rate="$r"
      else
        echo " (failed)" >&2
      fi
    done
  done
  echo >&2
done
python3 "$root/scripts/experiments/ecoserve_report.py" "$points" "$out" "$(declare -p fixed)"
echo "wrote $out/ecoserve.md, $out/ecoserve-*.svg, $points" >&2
