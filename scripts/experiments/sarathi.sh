#!/usr/bin/env bash
# Sarathi-Serve's headline experiment (docs/sarathi.md): capacity = the highest Poisson
# rate with P99 TBT <= SLO and median scheduling delay <= 2 s (`seer sim capacity`), of
# orca, vllm and sarathi under the paper's strict and relaxed TBT SLOs, on its four setups:
#   Mistral-7B  on 1x A100-80GB                         0.1 s / 0.5 s
#   Yi-34B      on A100x2-TP2                            0.2 s / 1 s
#   Llama-2-70B on A40x8-TP4-PP2 (one node)              1 s / 5 s
#   Falcon-180B on A100x8-2node-TP4-PP2 (two nodes)      1 s / 5 s
# sarathi's token budget is 512 under the strict SLO and 2048 under the relaxed one
# (DESIGN.md §1.8). On the pipeline-parallel setups sarathi also runs with twice that
# budget, because seer's budget counts over all micro-batches of a step, the paper's over
# one (docs/simulator.md, "Pipeline parallelism"). Traces: Sarathi-Serve's own length
# tables, ShareGPT-4 (`seer trace --lengths sharegpt`, filtered to 8k tokens) and arxiv
# summarization (`--lengths arxiv`), with every model's context set to 8192 tokens so no
# request of either trace is rejected or cut (the catalog's Yi-34B and Llama-2-70B have
# 4096, Falcon-180B 2048).
# The Table 4 ablation on Yi-34B: "hybrid batching only" = sarathi with a token budget no
# prompt reaches (whole prompts ride along with the decodes, never chunked); "both" =
# sarathi; "chunking only" has no policy in seer and is left out (docs/sarathi.md). Its
# latencies (P50 TTFT, P99 TBT) are taken at one rate per trace every variant can carry:
# 0.8x vllm's capacity under the relaxed SLO.
# Writes docs/results/sarathi.md (tables), sarathi.json (every capacity search's probes and
# the `seer sim --json` summary at the capacity) and sarathi.svg (capacity bars).
#   scripts/experiments/sarathi.sh [--seer build/seer] [--data-dir ../shared/data] [--num 4000]
#                                  [--out docs/results] [--traces "sharegpt arxiv"] [--tolerance 0.02]
set -euo pipefail
source "$(dirname "$0")/common.sh"
num=4000
traces="sharegpt arxiv"
tolerance=0.02
experiment_option() {
  case $1 in
    --tolerance) tolerance=$2 ;;
    *) return 1 ;;
  esac
}
parse_experiment_args "$@"
start_experiment
t0=$(date +%s)

# name | model | seer flags | strict SLO | relaxed SLO | pipeline stages
setups=(
  "Mistral-7B 1xA100|Mistral-7B|--hardware A100-80GB|0.1|0.5|1"
  "Yi-34B A100x2-TP2|Yi-34B|--cluster A100x2-TP2|0.2|1|1"
  "Llama-2-70B A40x8-TP4-PP2|Llama-2-70B|--cluster A40x8-TP4-PP2|1|5|2"
  "Falcon-180B A100x8-2node-TP4-PP2|Falcon-180B|--cluster A100x8-2node-TP4-PP2|1|5|2"
)
declare -A budget=([strict]=512 [relaxed]=2048)
hybrid_budget=1048576   # "hybrid batching only": no prompt of the traces comes near it
common="--max-model-len 8192 --quiet"
points=$work/points.jsonl
: > "$points"

say() { printf '[%4ds] %s\n' $(( $(date +%s) - t0 )) "$*" >&2; }

# The point's setup fields, set by the loops below.
meta=()

# capacity TRACE LABEL SLO FLAGS... : one capacity search, then `seer sim --json` at the
# capacity found, recorded as one line of $points with the search's probes.
capacity() {
  local trace=$1 label=$2 slo=$3
  shift 3
  local log=$work/cap.txt cap j=""
  # shellcheck disable=SC2086
  if ! "$seer" sim capacity --trace "$work/$trace.jsonl" $common "$@" --slo-tbt-p99 "$slo" \
        --start-rate 1 --tolerance "$tolerance" > "$log" 2>&1; then
    say "    $label: capacity search failed: $(tail -1 "$log")"
    return 0
  fi
  cap=$(sed -n 's/^capacity of .*: \([0-9.]*\) req\/s.*/\1/p' "$log")
  cap=${cap:-0}
  if [[ $cap != 0 ]]; then
    # shellcheck disable=SC2086
    j=$("$seer" sim --trace "$work/$trace.jsonl" $common "$@" --rate "$cap" --json 2>/dev/null || true)
  fi
  append_point "$points" "$j" "${meta[@]}" kind=capacity trace="$trace" label="$label" slo="$slo" \
    capacity="$cap" probes="$(grep '^rate' "$log" | tr '\n' ';')" flags="$*"
  say "    $label: $cap req/s"
}

# latency TRACE LABEL RATE FLAGS... : `seer sim --json` at a fixed rate.
latency() {
  local trace=$1 label=$2 rate=$3 j
  shift 3
  # shellcheck disable=SC2086
  j=$("$seer" sim --trace "$work/$trace.jsonl" $common "$@" --rate "$rate" --json 2>/dev/null) || return 0
  append_point "$points" "$j" "${meta[@]}" kind=latency trace="$trace" label="$label" rate="$rate" flags="$*"
}

# capacity_of TRACE LABEL LEVEL: a capacity already recorded for the current setup.
capacity_of() {
  python3 - "$points" "${meta[0]#setup=}" "$1" "$2" "$3" <<'PY'
import json, sys
path, setup, trace, label, level = sys.argv[1:]
for line in open(path):
    p = json.loads(line)
    if (p["kind"], p["setup"], p["trace"], p["label"], p["level"]) == ("capacity", setup, trace, label, level):
        print(p["capacity"])
PY
}

for t in $traces; do
  "$seer" trace --lengths "$t" --data-dir "$data" --num "$num" --rate 1 --seed 7 --out "$work/$t.jsonl" >&2
done

for s in "${setups[@]}"; do
  # shellcheck disable=SC2034  # strict and relaxed are read as ${!level}
  IFS='|' read -r name model flags strict relaxed pp <<<"$s"
  # shellcheck disable=SC2086
  if ! err=$("$seer" sim --trace "$work/${traces%% *}.jsonl" --model "$model" $flags $common --num 1 2>&1 >/dev/null); then
    say "$name: skipped ($err)"
    continue
  fi
  for t in $traces; do
    for level in strict relaxed; do
      slo=${!level}
      tau=${budget[$level]}
      meta=("setup=$name" "model=$model" "level=$level" "pp=$pp" "token_budget=$tau")
      say "$name, $t, $level SLO (P99 TBT <= $slo s)"
      for p in orca vllm; do
        # shellcheck disable=SC2086
        capacity "$t" "$p" "$slo" --model "$model" $flags --policy "$p"
      done
      # shellcheck disable=SC2086
      capacity "$t" sarathi "$slo" --model "$model" $flags --policy sarathi --token-budget "$tau"
      if [[ $pp -gt 1 ]]; then
        meta=("setup=$name" "model=$model" "level=$level" "pp=$pp" "token_budget=$((tau * pp))")
        # shellcheck disable=SC2086
        capacity "$t" sarathi-pp-budget "$slo" --model "$model" $flags --policy sarathi --token-budget $((tau * pp))
      fi
      if [[ $model == Yi-34B ]]; then
        meta=("setup=$name" "model=$model" "level=$level" "pp=$pp" "token_budget=$hybrid_budget")
        # shellcheck disable=SC2086
        capacity "$t" hybrid-only "$slo" --model "$model" $flags --policy sarathi --token-budget $hybrid_budget
      fi
    done
    if [[ $model == Yi-34B ]]; then
      # The ablation's latencies at one rate every variant carries.
      meta=("setup=$name" "model=$model" "level=relaxed" "pp=$pp")
      rate=$(python3 -c "print(round(0.8 * float('$(capacity_of "$t" vllm relaxed)'), 3))")
      say "$name, $t: ablation latencies at $rate req/s (0.8x vllm's relaxed capacity)"
      for p in orca vllm; do
        # shellcheck disable=SC2086
        latency "$t" "$p" "$rate" --model "$model" $flags --policy "$p"
      done
      # shellcheck disable=SC2086
      latency "$t" hybrid-only "$rate" --model "$model" $flags --policy sarathi --token-budget $hybrid_budget
      for tau in 512 2048; do
        # shellcheck disable=SC2086
        latency "$t" "sarathi-$tau" "$rate" --model "$model" $flags --policy sarathi --token-budget "$tau"
      done
    fi
  done
done

elapsed=$(( $(date +%s) - t0 ))
python3 "$root/scripts/experiments/sarathi_report.py" "$points" "$out" "$num" "$elapsed" "$tolerance"
echo "wrote $out/sarathi.md, $out/sarathi.json, $out/sarathi.svg (${elapsed} s)" >&2
