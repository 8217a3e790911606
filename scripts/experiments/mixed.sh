#!/usr/bin/env bash
# The `seer` policy comparison (docs/seer-policy.md): capacity (`seer sim capacity`:
# P99 TBT <= the SLO, median scheduling delay <= 2 s) and SLO attainment at a fixed
# rate of vllm, sarathi, s3, ecoserve, pensieve and seer (without a predictor, with
# the noisy, trained-accuracy and oracle predictors, and as it was with reservations) on Mistral-7B / A100-80GB
# and Llama-2-70B / 4x A100-80GB (TP4), on the mixed trace (`seer trace --lengths
# mixed`) and on each seed's own trace: alpaca [S3], sharegpt [EcoServe],
# sharegpt-multiturn [Pensieve], arxiv [Sarathi-Serve].
# Writes docs/results/mixed.md, docs/results/mixed-<model>.svg and the raw points
# as docs/results/mixed.jsonl. Capacity twice: as defined (TBT and
# scheduling delay) and as SLO goodput (also >= 90 % of the requests within their
# own TTFT and TBT SLOs); SLO attainment at the best goodput any policy reached on
# the workload.
#   scripts/experiments/mixed.sh [--seer build/seer] [--data-dir ../shared/data] [--num 1500]
#                                [--models "Mistral-7B Llama-2-70B Mistral-7B-4GiB"] [--traces "mixed alpaca ..."]
set -euo pipefail
source "$(dirname "$0")/common.sh"
num=1500
traces="mixed alpaca sharegpt sharegpt-multiturn arxiv"
models=""
policies="vllm sarathi s3 ecoserve pensieve seer-nopred seer seer-trained seer-oracle seer-reserve"
experiment_option() {
  case $1 in
    --models) models=$2 ;;
    --policies) policies=$2 ;;
    *) return 1 ;;
  esac
}
parse_experiment_args "$@"
start_experiment

# setup -> model and hardware flags, the TBT SLO (s) of the capacity search and of
# the token budget, and the first rate probed. Mistral-7B-4GiB gives Mistral-7B only
# 4 GiB of KV (32k tokens), the memory pressure under which the seeds' packing and
# preemption choices matter (with the whole A100 neither model runs out of KV).
models=${models:-"Mistral-7B Llama-2-70B Mistral-7B-4GiB"}
declare -A setup=(
  [Mistral-7B]="--model Mistral-7B --hardware A100-80GB --tp 1"
  [Llama-2-70B]="--model Llama-2-70B --hardware A100-80GB --tp 4"
  [Mistral-7B-4GiB]="--model Mistral-7B --hardware A100-80GB --tp 1 --kv-memory 4G"
)
declare -A tbt=([Mistral-7B]=0.2 [Llama-2-70B]=0.4 [Mistral-7B-4GiB]=0.2)
declare -A start=([Mistral-7B]=2 [Llama-2-70B]=1 [Mistral-7B-4GiB]=2)
declare -A tbt_scale=([Mistral-7B]=1 [Llama-2-70B]=2 [Mistral-7B-4GiB]=1)
# Policies that plan with predicted lengths get the same predictor: the true
# 128-token bucket with probability 0.9 (docs/s3.md's noisy predictor).
buckets="--predictor-buckets 32 --predictor-max-len 4096"
predictor="--predictor noisy:0.9 $buckets"
# `seer` also with the trained predictor's measured quality (the traces carry no
# text to run it on: noisy at the held-out accuracy and wrong-bucket distribution
# of `seer predict train --dataset sharegpt`, as scripts/experiments/ecoserve.sh
# does for its length-only traces) and with the oracle.
echo "training the ShareGPT length predictor" >&2
"$seer" predict train --dataset sharegpt --data-dir "$data" --out "$work/sharegpt.seerlp" >/dev/null 2>&1
trained_accuracy=$("$seer" predict eval --predictor "$work/sharegpt.seerlp" --data-dir "$data" --json \
  --errors-out "$work/sharegpt-errors.json" 2>/dev/null | python3 -c 'import json, sys; print(round(json.load(sys.stdin)["accuracy"], 4))')
echo "trained predictor: held-out accuracy $trained_accuracy" >&2
declare -A flags=(
  [vllm]="--policy vllm --preemption swap"
  [sarathi]="--policy sarathi"
  [s3]="--policy s3 $predictor"
  [ecoserve]="--policy ecoserve $predictor"
  [pensieve]="--policy pensieve"
  [seer-nopred]="--policy seer"  # what `seer serve` runs without --predictor
  [seer]="--policy seer $predictor"
  [seer-trained]="--policy seer --predictor noisy:$trained_accuracy --predictor-errors $work/sharegpt-errors.json $buckets"
  [seer-oracle]="--policy seer --predictor oracle $buckets"
  # The preset before predictions only ordered (until 2026-11-26): reserving prompt
  # + padded prediction at decode start, admission by deadline alone.
  [seer-reserve]="--policy seer --allocation exact --ordering deadline $predictor"
)

# Every trace carries per-request SLOs (TTFT, TBT): the mixed trace its classes'
# (chat 2 s / 0.2 s, qa 1 s / 0.2 s, long 10 s / 0.5 s); each seed's trace the SLO
# of the mixed class it stands for. Multi-turn users think 10 s between turns (mean).
declare -A slo=([alpaca]="--slo-ttft 1 --slo-tbt 0.2" [sharegpt]="--slo-ttft 2 --slo-tbt 0.2"
                [sharegpt-multiturn]="--slo-ttft 2 --slo-tbt 0.2" [arxiv]="--slo-ttft 10 --slo-tbt 0.5" [mixed]="")
for t in $traces; do
  # shellcheck disable=SC2086
  "$seer" trace --lengths "$t" --data-dir "$data" --num "$num" --rate 1 --seed 7 --think-mean 10 ${slo[$t]} \
    --out "$work/$t.jsonl" >/dev/null 2>&1
done
# Llama-2-70B's iterations are about twice as long: its TBT bounds are doubled.
scale_tbt() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
src, dst, k = sys.argv[1], sys.argv[2], float(sys.argv[3])
with open(dst, "w") as out:
    for line in open(src):
        e = json.loads(line)
        if "slo" in e and "tbt_s" in e["slo"]:
            e["slo"]["tbt_s"] = round(e["slo"]["tbt_s"] * k, 6)
        out.write(json.dumps(e) + "\n")
PY
}

points=$out/mixed.jsonl
: > "$points"
n_pol=$(wc -w <<<"$policies"); n_tr=$(wc -w <<<"$traces"); n_mod=$(wc -w <<<"$models")
total=$((n_pol * n_tr * n_mod)); i=0
t0=$(date +%s)
for m in $models; do
  for t in $traces; do
    declare -A cap=() good=()
    best=0
    trace=$work/$t.$m.jsonl
    scale_tbt "$work/$t.jsonl" "$trace" "${tbt_scale[$m]}"
    for p in $policies; do
      i=$((i + 1))
      printf '\r[%3d/%d] %-16s %-19s %-11s %4ds' "$i" "$total" "$m" "$t" "$p" $(( $(date +%s) - t0 )) >&2
      # shellcheck disable=SC2086
      capacity() {
        # shellcheck disable=SC2086
        "$seer" sim capacity --trace "$trace" ${setup[$m]} --tbt-slo "${tbt[$m]}" ${flags[$p]} \
          --slo-tbt-p99 "${tbt[$m]}" --start-rate "${start[$m]}" --tolerance 0.05 "$@" 2>/dev/null \
          | sed -n 's/^capacity of .*: \([0-9.]*\) req\/s.*/\1/p' || true
      }
      c=$(capacity); cap[$p]=${c:-0}
      # SLO goodput: also 90 % of the requests within their own TTFT and TBT SLOs.
      g=$(capacity --min-slo-attainment 0.9); good[$p]=${g:-0}
      best=$(python3 -c 'import sys; print(max(float(sys.argv[1]), float(sys.argv[2])))' "$best" "${good[$p]}")
    done
    # SLO attainment of every policy at the best SLO goodput any policy reached here.
    fixed=$(python3 -c 'import sys; print(round(float(sys.argv[1]), 3) or 0.1)' "$best")
    for p in $policies; do
      # shellcheck disable=SC2086
      j=$("$seer" sim --trace "$trace" ${setup[$m]} --tbt-slo "${tbt[$m]}" ${flags[$p]} --rate "$fixed" \
            --quiet --json 2>/dev/null || echo '{}')
      append_point "$points" "$j" model="$m" trace="$t" label="$p" capacity="${cap[$p]}" fixed_rate="$fixed" \
        goodput="${good[$p]}"
    done
    unset cap good
  done
done
echo >&2
python3 "$root/scripts/experiments/mixed_report.py" "$points" "$out" "$num" "$(declare -p tbt)" "$trained_accuracy"
echo "wrote $out/mixed.md, $out/mixed-*.svg, $points ($(( $(date +%s) - t0 )) s)" >&2
