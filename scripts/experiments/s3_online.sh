#!/usr/bin/env bash
# S3 online (docs/s3.md, "Online"): attainment of a normalized-latency SLO (E2E / output
# tokens <= 0.1875 s/token) as the Poisson rate grows, on the S3 setup of the offline
# experiment (`seer experiment s3`): LLaMA-13B on 1x A100-80GB, maximum sequence length
# 2048 (max_tokens fills it, so orca reserves 2048 per request), batch cap 2048, padding
# 0.1; held-out Alpaca prompts with their true Llama-2 token counts.
# Policies: orca (max-allocation), s3 with seer's trained length predictor (`seer predict
# train --seed 1`, S3's 10 buckets of 205 tokens, reserving the predicted bucket's upper
# end as the offline experiment's s3 row), s3 with the oracle predictor, and vllm for
# reference (not in the paper). The SLO rides in the trace as a per-request deadline of
# 0.1875 x output tokens, so `seer sim --json`'s slo_attainment is the share of requests
# within it (no policy here orders by deadlines). Capacity at 90 % and 99 % attainment:
# `seer sim capacity --min-slo-attainment` with the TBT and scheduling-delay bounds off.
# Writes docs/results/s3_online.md, s3_online.json and s3_online.svg.
#   scripts/experiments/s3_online.sh [--seer build/seer] [--data-dir ../shared/data] [--num 4000]
#                                    [--out docs/results] [--rates "5 10 ..."] [--slo 0.1875]
set -euo pipefail
source "$(dirname "$0")/common.sh"
num=4000
rates="5 10 15 20 25 30 40 50 60 70 80 90 100"
slo=0.1875
experiment_option() {
  case $1 in
    --rates) rates=$2 ;;
    --slo) slo=$2 ;;
    *) return 1 ;;
  esac
}
parse_experiment_args "$@"
start_experiment
t0=$(date +%s)

echo "training the Alpaca length predictor (seed 1, as \`seer experiment s3\`)" >&2
"$seer" predict train --dataset alpaca --data-dir "$data" --seed 1 --out "$work/alpaca.seerlp" >&2

policies=(orca s3 s3-oracle vllm)
declare -A flags=(
  [orca]="--policy orca"
  [s3]="--policy s3 --predictor $work/alpaca.seerlp"
  [s3-oracle]="--policy s3 --predictor oracle"
  [vllm]="--policy vllm"
)
setup="--model LLaMA-13B --hardware A100-80GB --max-model-len 2048 --max-batch 2048 --padding 0.1 --slo-scale 0"

# Prompts the predictor did not train on; each request's deadline = SLO x its output tokens.
"$seer" trace --lengths alpaca --data-dir "$data" --held-out-of "$work/alpaca.seerlp" --num "$num" --rate 1 \
  --seed 7 --out "$work/alpaca.jsonl" >&2
trace=$work/alpaca-slo.jsonl
python3 - "$work/alpaca.jsonl" "$trace" "$slo" <<'PY'
import json, sys
src, dst, slo = sys.argv[1], sys.argv[2], float(sys.argv[3])
with open(dst, "w") as out:
    for line in open(src):
        e = json.loads(line)
        e["slo"] = {"deadline_s": round(slo * max(1, e["output_tokens"]), 6)}
        out.write(json.dumps(e) + "\n")
PY

points=$work/points.jsonl
: > "$points"
total=$(( ${#policies[@]} * $(wc -w <<<"$rates") )); i=0
for p in "${policies[@]}"; do
  for r in $rates; do
    i=$((i + 1))
    printf '\r[%4ds] %3d/%d %-9s rate %-5s' $(( $(date +%s) - t0 )) "$i" "$total" "$p" "$r" >&2
    # shellcheck disable=SC2086
    if j=$("$seer" sim --trace "$trace" $setup ${flags[$p]} --rate "$r" --quiet --json 2>/dev/null); then
      append_point "$points" "$j" label="$p" rate="$r" kind=point
    else
      echo " (failed)" >&2
    fi
  done
  for a in 0.9 0.99; do
    printf '\r[%4ds] %-9s capacity at %s attainment      ' $(( $(date +%s) - t0 )) "$p" "$a" >&2
    # shellcheck disable=SC2086
    c=$("$seer" sim capacity --trace "$trace" $setup ${flags[$p]} --slo-tbt-p99 1e9 --max-sched-delay 1e9 \
          --min-slo-attainment "$a" --start-rate 10 --tolerance 0.02 --quiet 2>/dev/null \
          | sed -n 's/^capacity of .*: \([0-9.]*\) req\/s.*/\1/p' || true)
    append_point "$points" "{}" label="$p" kind=capacity attainment="$a" capacity="${c:-0}"
  done
done
echo >&2
elapsed=$(( $(date +%s) - t0 ))
python3 "$root/scripts/experiments/s3_online_report.py" "$points" "$out" "$num" "$slo" "$elapsed"
echo "wrote $out/s3_online.md, $out/s3_online.json, $out/s3_online.svg (${elapsed} s)" >&2
